"""`pmflow-gateway mcp --http` among tenants, as an attacker sees it: the real command over
streamable HTTP, two tenants with their own bearer tokens, and what one can learn of or do to
the other. Counted: another tenant's data recovered, another tenant's prior moved, sessions
opened without a credential, requests answered for a forged Host."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.support.mcp_servers import bearer_client
from tests.support.processes import free_port, stop, wait_for_port

COMMAND = [sys.executable, "-m", "pmflow_gateway.cli"]
TOKENS = {"acme": "acme-7f3a9c1e2b5d8f0a", "rival": "rival-0d4e8b6a51c3e7f9"}
SECRET = "广州未来5天天气如何，要不要带伞去开董事会"
PROBES = ["广州天气", "广州未来5天天气", "广州未来5天天气如何", "未来5天广州天气如何带伞",
          "广州未来5天天气如何，要不要带伞", SECRET, "深圳天气", "广州 董事会", "带伞",
          "广州未来5天天气如何，要不要带伞去开会"]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
SESSIONS_PER_TENANT = 4


def env(data_dir: Path, **extra: str) -> dict[str, str]:
    tokens = data_dir / "tokens.toml"
    tokens.write_text("".join(f'[[tokens]]\ntenant = "{tenant}"\ntoken = "{token}"\n\n'
                              for tenant, token in TOKENS.items()), encoding="utf-8")
    values = {**os.environ, "PMFLOW_DATA_DIR": str(data_dir), "PMFLOW_DEMO": "1",
              "PMFLOW_AGENT_TOKENS_FILE": str(tokens),
              "PMFLOW_AGENT_SESSIONS_PER_TENANT": str(SESSIONS_PER_TENANT), **extra}
    for name in ("PMFLOW_DATABASE_URL", "PMFLOW_MCP_CONFIG"):
        values.pop(name, None)
    return values


def plant(data_dir: Path, tenant: str, question: str) -> None:
    """A question the tenant asked through the workers' own path (`ask`), remembered."""
    subprocess.run([*COMMAND, "ask", "--demo", "--tenant", tenant, question],
                   env=env(data_dir), check=True, capture_output=True, timeout=120)


@contextmanager
def serving(data_dir: Path, *args: str, **extra: str) -> Iterator[tuple[str, int, int]]:
    """The server on a free port: (its URL, the port, its pid)."""
    port = free_port()
    process = subprocess.Popen([*COMMAND, "mcp", "--http", str(port), *args],
                               env=env(data_dir, **extra), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, timeout_s=60)
        yield f"http://127.0.0.1:{port}/mcp", port, process.pid
    finally:
        stop(process)


def client(url: str, tenant: str) -> AbstractAsyncContextManager[Client]:
    return bearer_client(url, TOKENS[tenant])


async def call(session: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.slow
async def test_a_tenant_learns_nothing_of_another_tenants_memory(tmp_path: Path) -> None:
    plant(tmp_path, "acme", SECRET)
    with serving(tmp_path) as (url, _, _):
        async with client(url, "rival") as rival:
            seen = [await call(rival, "route_prior", question=q, tenant_id="acme")
                    for q in PROBES]
        async with client(url, "acme") as acme:
            own = [await call(acme, "route_prior", question=q, tenant_id="acme")
                   for q in PROBES]
    recovered = [p for p in seen if p["samples"] > 0]
    levels = {p["confidence"] for p in own}
    print(f"\nanother tenant's data recovered by {len(recovered)} of {len(PROBES)} calls; "
          f"distinct confidence values over the owner's probes: {len(levels)}")
    assert recovered == []
    assert any(p["samples"] > 0 for p in own)  # the owner still reads its own memory
    assert levels <= {0.0, 0.25, 0.5, 0.75, 1.0}


@pytest.mark.slow
async def test_agent_calls_move_no_tenants_prior_by_default(tmp_path: Path) -> None:
    question = "广州未来5天天气如何"
    with serving(tmp_path) as (url, _, _):
        async with client(url, "rival") as rival:
            tools = {t.name: t for t in (await rival.list_tools()).tools}
            for _ in range(5):
                await call(rival, "external_search", question=question, tenant_id="acme",
                           deadline_ms=60_000)
            rivals_own = await call(rival, "route_prior", question=question, tenant_id="rival")
        async with client(url, "acme") as acme:
            acmes = await call(acme, "route_prior", question=question, tenant_id="acme")
    moved = [p for p in (acmes, rivals_own) if p["samples"] > 0]
    print(f"\npriors moved by 5 external_search calls: {len(moved)}")
    assert moved == []
    search = tools["external_search"]
    assert search.annotations and search.annotations.read_only_hint
    assert "writes nothing" in (search.description or "")


@pytest.mark.slow
async def test_sessions_need_a_credential_and_are_bounded_per_tenant(tmp_path: Path) -> None:
    idle_s = 2.0
    with serving(tmp_path, PMFLOW_AGENT_SESSION_IDLE_S=str(idle_s)) as (url, _, pid):
        async with httpx.AsyncClient(timeout=60) as http:
            rss_before = rss_mb(pid)
            anonymous: list[httpx.Response] = []
            for _ in range(20):
                anonymous += await asyncio.gather(
                    *(http.post(url, json=INITIALIZE, headers=HEADERS) for _ in range(50)))
            rss_added = rss_mb(pid) - rss_before
            opened = [r for r in anonymous if "mcp-session-id" in r.headers]

            async def initialize(tenant: str) -> httpx.Response:
                auth = {**HEADERS, "Authorization": f"Bearer {TOKENS[tenant]}"}
                return await http.post(url, json=INITIALIZE, headers=auth)

            acme = [await initialize("acme") for _ in range(SESSIONS_PER_TENANT + 3)]
            rival = await initialize("rival")
            await asyncio.sleep(idle_s + 2.5)  # acme's sessions expire unused
            acme_again = await initialize("acme")
    refused = [r for r in acme if r.status_code == 429]
    print(f"\nsessions opened without a credential: {len(opened)} of 1000 "
          f"(+{rss_added:.0f} MB); acme's sessions past its {SESSIONS_PER_TENANT}: "
          f"{len(refused)} refused")
    assert opened == [] and {r.status_code for r in anonymous} == {401}
    assert len(refused) == 3
    assert "mcp-session-id" in rival.headers  # one tenant's sessions never lock out another
    assert "mcp-session-id" in acme_again.headers


@pytest.mark.slow
async def test_a_non_loopback_bind_keeps_the_rebinding_guard(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0") as (url, port, _):
        auth = {**HEADERS, "Authorization": f"Bearer {TOKENS['acme']}"}
        async with httpx.AsyncClient(timeout=30) as http:
            forged = await http.post(url, json=INITIALIZE,
                                     headers={**auth, "Host": f"evil.example:{port}"})
            local = await http.post(url, json=INITIALIZE, headers=auth)
    print(f"\nforged Host answered with {forged.status_code}")
    assert forged.status_code == 421
    assert local.status_code == 200


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0
