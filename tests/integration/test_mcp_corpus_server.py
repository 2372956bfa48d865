"""The MCP adapter against our own corpus server, over stdio and streamable HTTP: real
processes, real protocol, no mocks."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import McpServerConfig, demo_servers
from pmflow_gateway.contract.scoring import FRESH_ENOUGH
from pmflow_gateway.schemas import AdapterAttempt, ExternalEvidence, ExternalQueryPlan
from tests.support.mcp_servers import server_children, stdio_config
from tests.support.processes import free_port, stop, wait_for_port

WEATHER = ExternalQueryPlan(
    query_kind="weather", freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气", "广州 天气 5日预报"], result_limit=3)
ONE_QUERY = WEATHER.model_copy(update={"search_queries": ["广州 天气"]})
SERVER_MODULE = [sys.executable, "-m", "pmflow_gateway.mcp_server"]




def start_http_server(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([*SERVER_MODULE, "--transport", "http", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    return process



@pytest.fixture(scope="module")
def http_server_url() -> Iterator[str]:
    port = free_port()
    process = start_http_server(port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(process)


def assert_weather_evidence(items: list[ExternalEvidence], attempts: list[AdapterAttempt],
                            server: str, *, fetched: bool = False) -> None:
    """`fetched`: search, then fetch, the evidence is the result's page."""
    assert attempts and all(a.outcome == "ok" and a.server == server for a in attempts)
    assert "广州" in items[0].title
    first = items[0]
    assert first.source_type == ("url" if fetched else "mcp_search")
    assert first.target_url.startswith("https://")
    assert first.freshness_score > FRESH_ENOUGH
    assert {"location_hint", "subject_entities"} <= set(first.grounded_fields)
    assert first.raw_metadata["server"] == server
    assert first.raw_metadata["tool"] == "search"


async def test_weather_question_over_stdio() -> None:
    adapter = McpAdapter(demo_servers()[0])
    try:
        result = await adapter.collect(WEATHER, timeout_s=15)
    finally:
        await adapter.aclose()
    assert_weather_evidence(result.items, result.attempts, "pmflow-corpus", fetched=True)
    # One call per search query, then one fetch per result page read.
    assert [a.tool for a in result.attempts][:2] == ["search", "search"]
    assert {a.tool for a in result.attempts[2:]} == {"fetch"}


async def test_weather_question_over_streamable_http(http_server_url: str) -> None:
    adapter = McpAdapter(McpServerConfig(name="corpus-http", transport="http",
                                         url=http_server_url))
    try:
        result = await adapter.collect(WEATHER, timeout_s=15)
    finally:
        await adapter.aclose()
    assert_weather_evidence(result.items, result.attempts, "corpus-http")


async def test_one_session_serves_many_questions() -> None:
    adapter = McpAdapter(stdio_config())
    try:
        results = [await adapter.collect(WEATHER, timeout_s=15) for _ in range(3)]
        processes = server_children()
    finally:
        await adapter.aclose()
    assert all(r.items for r in results)
    assert adapter.session.connects == 1
    assert len(processes) == 1
    assert server_children() == []  # aclose stopped it


async def test_a_killed_server_is_noticed_and_the_next_question_reconnects() -> None:
    adapter = McpAdapter(stdio_config())
    try:
        assert (await adapter.collect(ONE_QUERY, timeout_s=15)).items
        [pid] = server_children()
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        three_queries = WEATHER.model_copy(update={"search_queries": ["广州", "天气", "预报"]})
        broken = await adapter.collect(three_queries, timeout_s=15)
        healed = await adapter.collect(ONE_QUERY, timeout_s=15)
    finally:
        await adapter.aclose()
    # Its pipe closed when it died: the next question already goes to a new process.
    assert [a.outcome for a in broken.attempts] == ["ok"] * 3
    assert [a.outcome for a in healed.attempts] == ["ok"] and healed.items
    assert adapter.session.connects == 2  # one reconnect, however many calls failed


async def test_hung_server_times_out_within_the_budget() -> None:
    adapter = McpAdapter(stdio_config("--delay-ms", "5000", timeout_s=8.0))
    try:
        started = time.monotonic()
        result = await adapter.collect(ONE_QUERY, timeout_s=1.5)
        elapsed = time.monotonic() - started
    finally:
        await adapter.aclose()
    assert [a.outcome for a in result.attempts] == ["timeout"]
    assert elapsed < 2.5
    assert result.attempts[0].latency_ms < 2000


async def test_circuit_opens_after_failures_then_half_open_probe_closes_it() -> None:
    port = free_port()
    adapter = McpAdapter(McpServerConfig(
        name="flaky", transport="http", url=f"http://127.0.0.1:{port}/mcp",
        failure_threshold=2, cooldown_s=0.5))
    process = None
    try:
        outcomes = [(await adapter.collect(ONE_QUERY, timeout_s=5)).attempts[0].outcome
                    for _ in range(3)]
        assert outcomes == ["error", "error", "circuit_open"]
        assert adapter.breaker.state == "open"
        await asyncio.sleep(0.6)
        assert adapter.breaker.state == "half_open"
        probe = await adapter.collect(ONE_QUERY, timeout_s=5)  # still down: opens again
        assert [a.outcome for a in probe.attempts] == ["error"]
        assert adapter.breaker.state == "open"
        process = start_http_server(port)
        await asyncio.sleep(0.6)
        healed = await adapter.collect(ONE_QUERY, timeout_s=15)
        assert [a.outcome for a in healed.attempts] == ["ok"] and healed.items
        assert adapter.breaker.state == "closed"
    finally:
        await adapter.aclose()
        if process is not None:
            stop(process)


async def test_timeouts_open_the_circuit_and_the_probe_gets_a_fresh_process() -> None:
    adapter = McpAdapter(stdio_config("--delay-ms", "5000", failure_threshold=1,
                                      cooldown_s=0.3))
    try:
        # Started first, so the timeouts below are the slow tool's, not the cold start's.
        assert await adapter.warm_up(60.0) is None
        first = await adapter.collect(ONE_QUERY, timeout_s=1.5)
        refused = await adapter.collect(ONE_QUERY, timeout_s=1.5)
        await asyncio.sleep(0.4)
        probe = await adapter.collect(ONE_QUERY, timeout_s=1.5)
    finally:
        await adapter.aclose()
    assert [a.outcome for a in first.attempts] == ["timeout"]
    assert [a.outcome for a in refused.attempts] == ["circuit_open"]
    assert [a.outcome for a in probe.attempts] == ["timeout"]
    assert adapter.session.connects == 2
    assert server_children() == []


async def test_a_started_server_leaves_the_first_question_its_whole_budget() -> None:
    adapter = McpAdapter(stdio_config())
    try:
        assert await adapter.warm_up(60.0) is None
        assert adapter.session.connects == 1
        # A budget far below a stdio server's cold start on a loaded machine is enough once
        # the process is up.
        result = await adapter.collect(ONE_QUERY, timeout_s=3.0)
    finally:
        await adapter.aclose()
    assert [a.outcome for a in result.attempts] == ["ok"] and result.items
    assert adapter.session.connects == 1


async def test_a_server_that_cannot_start_is_reported_not_raised() -> None:
    adapter = McpAdapter(McpServerConfig(name="missing", transport="stdio",
                                         command="/nonexistent/mcp-server"))
    try:
        failure = await adapter.warm_up(10.0)
    finally:
        await adapter.aclose()
    assert failure
