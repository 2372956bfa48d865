"""MCP servers as child processes: our corpus server, and a hostile one that breaks the rules."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from pmflow_gateway.adapters.mcp_config import McpServerConfig
from tests.support.processes import free_port, stop, wait_for_port


def stdio_config(*extra_args: str, **fields: Any) -> McpServerConfig:
    return McpServerConfig(name="corpus", transport="stdio", command=sys.executable,
                           args=["-m", "pmflow_gateway.mcp_server", *extra_args], **fields)


def server_children() -> list[int]:
    """Our corpus servers started over stdio by this test process (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        stdio = b"pmflow_gateway.mcp_server" in cmdline and b"http" not in cmdline
        if parent == os.getpid() and stdio:
            found.append(int(entry.name))
    return found


HOSTILE = Path(__file__).with_name("hostile_mcp.py")


def hostile_stdio_config(**fields: Any) -> McpServerConfig:
    """The hostile server (tests/support/hostile_mcp.py) over stdio."""
    return McpServerConfig(name="hostile", transport="stdio", command=sys.executable,
                           args=[str(HOSTILE)], **fields)


def hostile_http_config(url: str, **fields: Any) -> McpServerConfig:
    return McpServerConfig(name="hostile", transport="http", url=url, **fields)


@contextmanager
def hostile_http_server() -> Iterator[str]:
    """The hostile server over streamable HTTP on a free port; yields its /mcp URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(HOSTILE), "--http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@asynccontextmanager
async def bearer_client(url: str, token: str) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `token` as its bearer credential."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client
