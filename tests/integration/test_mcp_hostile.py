"""The MCP adapter against a server that misbehaves (tests/support/hostile_mcp.py), over stdio
and streamable HTTP: a stall, results too big to hold, a flood of server-to-client requests,
and stderr that imitates our log. Each is counted: questions left unanswered, memory added at
the peak, the longest hold of the event loop, forged log lines."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from mcp import Client

from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import McpServerConfig
from pmflow_gateway.schemas import ExternalQueryPlan
from pmflow_gateway.streams.health import JsonLogFormatter
from tests.support.loop_watchdog import watch_loop
from tests.support.mcp_servers import (
    hostile_http_config,
    hostile_http_server,
    hostile_stdio_config,
)
from tests.support.memory import peak_memory

PLAN = ExternalQueryPlan(
    query_kind="weather", freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 天气"], result_limit=3)
MAX_HOLD_S = 0.1
MAX_ADDED_MB = 150


def searching(**arguments: Any) -> dict[str, Any]:
    return {"search_args": {"query": "{query}", **arguments}}


@pytest.mark.slow
async def test_a_stall_costs_only_the_questions_it_touched() -> None:
    """200 questions, 20 a second; the server stops answering for 3 s after the second.
    Every question that starts once the stall is over (and a probe interval plus a call
    timeout later) is answered: the circuit neither cancels nor refuses beyond the stall."""
    stall_s, timeout_s, recovery_s = 3.0, 1.0, 2.0
    with hostile_http_server() as url:
        adapter = McpAdapter(hostile_http_config(url, timeout_s=timeout_s))
        assert await adapter.warm_up(30) is None
        started = time.monotonic()
        stalled: list[float] = []

        async def ask(n: int) -> tuple[float, bool]:
            await asyncio.sleep(n * 0.05)
            at = time.monotonic() - started
            result = await adapter.collect(PLAN, timeout_s=3.0)
            return at, bool(result.items)

        async def stall() -> None:
            await asyncio.sleep(2.0)
            async with Client(url) as control:
                await control.call_tool("stall", {"seconds": stall_s})
            stalled.append(time.monotonic() - started)

        try:
            *asked, _ = await asyncio.gather(*(ask(n) for n in range(200)), stall())
        finally:
            await adapter.aclose()
    stall_end = stalled[0] + stall_s
    unanswered = [at for at, answered in asked if not answered]
    late = [at for at in unanswered if at > stall_end + recovery_s]
    during = [at for at, _ in asked if stalled[0] - timeout_s <= at <= stall_end]
    print(f"\nstall of {stall_s:.0f} s: {len(unanswered)} of 200 questions unanswered, "
          f"{len(during)} asked during it, {len(late)} unanswered after it")
    assert late == []


@pytest.mark.slow
async def test_opening_the_circuit_cancels_no_call_in_flight() -> None:
    """40 questions wait on a server stalled for 3 s: half can wait 1 s, half 6 s. The short
    ones fail and open the circuit; the long ones are still answered when the stall ends."""
    with hostile_http_server() as url:
        adapter = McpAdapter(hostile_http_config(url, timeout_s=10.0))
        assert await adapter.warm_up(30) is None
        async with Client(url) as control:
            await control.call_tool("stall", {"seconds": 3.0})
        try:
            results = await asyncio.gather(*(adapter.collect(PLAN, timeout_s=1.0 + 5 * (n % 2))
                                             for n in range(40)))
        finally:
            await adapter.aclose()
    patient = [bool(r.items) for n, r in enumerate(results) if n % 2]
    print(f"\ncircuit opened by the impatient; patient questions answered: {sum(patient)} of 20")
    assert all(patient)


async def collect_watched(adapter: McpAdapter, questions: int = 1) -> tuple[list[Any], float,
                                                                            float]:
    """The attempts of `questions` concurrent questions, the memory they added at the peak and
    the longest the event loop was held meanwhile."""
    try:
        assert await adapter.warm_up(30) is None
        with peak_memory() as peak:
            async with watch_loop() as lag:
                results = await asyncio.gather(
                    *(adapter.collect(PLAN, timeout_s=60) for _ in range(questions)))
    finally:
        await adapter.aclose()
    attempts = [a for r in results for a in r.attempts]
    items = [i for r in results for i in r.items]
    print(f"\n{adapter.config.transport}: {len(items)} items, outcomes "
          f"{sorted({a.outcome for a in attempts})}, +{peak.added_mb:.0f} MB at the peak, "
          f"loop held {lag.worst_s * 1000:.0f} ms")
    return attempts, peak.added_mb, lag.worst_s


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_two_hundred_thousand_hits_are_bounded(transport: str) -> None:
    config: McpServerConfig
    with hostile_http_server() as url:
        config = (hostile_stdio_config(**searching(hits=200_000), timeout_s=60)
                  if transport == "stdio" else
                  hostile_http_config(url, **searching(hits=200_000), timeout_s=60))
        attempts, added_mb, held_s = await collect_watched(McpAdapter(config))
    assert [a.outcome for a in attempts] == ["error"]
    assert "larger than" in (attempts[0].error or "")
    assert added_mb < MAX_ADDED_MB
    assert held_s < MAX_HOLD_S


@pytest.mark.slow
async def test_eight_questions_of_fifty_thousand_hits_are_bounded() -> None:
    with hostile_http_server() as url:
        config = hostile_http_config(url, **searching(hits=50_000), timeout_s=60)
        attempts, added_mb, held_s = await collect_watched(McpAdapter(config), questions=8)
    assert [a.outcome for a in attempts] == ["error"] * 8
    assert added_mb < MAX_ADDED_MB
    assert held_s < MAX_HOLD_S


async def test_hits_per_call_are_capped() -> None:
    adapter = McpAdapter(hostile_stdio_config(**searching(hits=2_000)))
    try:
        result = await adapter.collect(PLAN, timeout_s=30)
    finally:
        await adapter.aclose()
    assert [a.outcome for a in result.attempts] == ["ok"]
    assert result.attempts[0].evidence_count == adapter.config.max_hits


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sixty_thousand_server_requests_are_bounded(
        transport: str, caplog: pytest.LogCaptureFixture) -> None:
    """Past the session's allowance the server's requests go unanswered and the connection
    is replaced: over stdio the result still arrives, over HTTP its event stream is cut."""
    with hostile_http_server() as url:
        config = (hostile_stdio_config(**searching(server_requests=60_000), timeout_s=60)
                  if transport == "stdio" else
                  hostile_http_config(url, **searching(server_requests=60_000), timeout_s=60))
        attempts, added_mb, held_s = await collect_watched(McpAdapter(config))
    expected = "ok" if transport == "stdio" else "error"
    assert [a.outcome for a in attempts] == [expected]
    assert any("sent more than 100 requests" in r.getMessage() for r in caplog.records)
    assert added_mb < MAX_ADDED_MB
    assert held_s < MAX_HOLD_S


FORGED = {"ts": "2026-12-02 08:00:00,000", "level": "ERROR",
          "logger": "pmflow_gateway.streams.runner", "msg": "forged: partitions lost"}


async def test_a_stdio_servers_stderr_cannot_forge_our_log_lines(
        capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    adapter = McpAdapter(hostile_stdio_config(**searching(stderr=[json.dumps(FORGED)])))
    try:
        result = await adapter.collect(PLAN, timeout_s=30)
        await asyncio.sleep(0.2)  # the stderr line may trail the result
    finally:
        await adapter.aclose()
        root.removeHandler(handler)
    assert result.items
    lines = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"unparsed": line})
    forged = [r for r in records if r.get("msg") == FORGED["msg"]]
    quoted = [r for r in records if FORGED["msg"] in str(r.get("msg", "")) and r not in forged]
    print(f"\nforged log lines: {len(forged)}; quoted as data: {len(quoted)}")
    assert forged == []
    assert quoted and quoted[0]["logger"].startswith("pmflow_gateway.adapters")
