"""Our MCP server hung or killed: the question still ends inside its deadline, answered by
the live-search fallback or, when that has nothing either, with the freshness guard."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import orjson
import pytest

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import fake_deps
from tests.support.mcp_servers import server_children, stdio_config
from tests.support.pages import ANSWER_PAGE, fresh, site_with_pages
from tests.support.web_site import LocalSite

DEADLINE_MS = 3000


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with site_with_pages({"/weather/guangzhou": fresh(ANSWER_PAGE)}) as local:
        yield local


def route(question_id: str) -> RouteDecided:
    return RouteDecided.model_validate({**ROUTE_DECIDED, "question_id": question_id,
                                        "deadline_ms": DEADLINE_MS})


def gateway(mcp: McpAdapter, site: LocalSite | None) -> Deps:
    endpoint = site.url("/search", host="localhost") if site else "http://localhost:9/search"
    fallback = LiveSearchAdapter(engine=SearxngJson(endpoint.removesuffix("/search")),
                                 allow_hosts=[f"localhost:{site.port}"] if site else [])
    return fake_deps(clock=SystemClock(), adapters=[mcp, fallback])


async def _ask(g: Deps, question_id: str) -> tuple[float, object]:
    started = time.monotonic()
    outcome = await ask_in_process(route(question_id), g)
    return time.monotonic() - started, outcome.answer


async def test_hung_mcp_server_falls_back_to_live_search_within_the_deadline(
        site: LocalSite) -> None:
    mcp = McpAdapter(stdio_config("--delay-ms", "60000"))
    g = gateway(mcp, site)
    try:
        elapsed, answer = await _ask(g, "q-hung")
    finally:
        await mcp.aclose()
    assert answer.status is AnswerStatus.answered, answer.reason  # type: ignore[attr-defined]
    outcomes = [(a.adapter, a.outcome) for a in answer.attempts]  # type: ignore[attr-defined]
    assert ("mcp", "timeout") in outcomes and ("live_search", "ok") in outcomes, outcomes
    assert all(s.url.startswith("http://localhost") for s in answer.sources_used)  # type: ignore[attr-defined]
    assert elapsed < DEADLINE_MS / 1000 + 1.0


async def test_killed_mcp_server_falls_back_and_nothing_at_all_gives_the_guard(
        site: LocalSite) -> None:
    mcp = McpAdapter(stdio_config())
    try:
        await _ask(gateway(mcp, site), "q-warm")  # the server process is up
        [pid] = server_children()
        os.kill(pid, signal.SIGKILL)
        elapsed, answer = await _ask(gateway(mcp, site), "q-killed")
        assert answer.status is AnswerStatus.answered  # type: ignore[attr-defined]
        assert answer.attempts[0].outcome == "error"  # type: ignore[attr-defined]
        assert elapsed < DEADLINE_MS / 1000 + 1.0

        hung = McpAdapter(stdio_config("--delay-ms", "60000"))
        try:
            elapsed, answer = await _ask(gateway(hung, None), "q-nothing")
        finally:
            await hung.aclose()
        assert answer.status is AnswerStatus.freshness_guard  # type: ignore[attr-defined]
        assert answer.sources_used == []  # type: ignore[attr-defined]
        assert elapsed < DEADLINE_MS / 1000 + 1.0
        print("\n" + orjson.dumps([a.model_dump(mode="json") for a in answer.attempts]).decode())  # type: ignore[attr-defined]
    finally:
        await mcp.aclose()
