"""Our corpus MCP server as a child process, for the tests that start it over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pmflow_gateway.adapters.mcp_config import McpServerConfig


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
