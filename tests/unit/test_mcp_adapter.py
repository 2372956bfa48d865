"""The MCP adapter with an in-memory tool session: argument mapping, merging, scoring,
attempt outcomes and the circuit breaker, without processes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from pmflow_gateway.adapters.mcp import McpAdapter, fill_arguments, fill_url
from pmflow_gateway.adapters.mcp_config import (
    McpConfigError,
    McpServerConfig,
    demo_servers,
    load_servers,
)
from pmflow_gateway.adapters.mcp_session import CircuitBreaker
from pmflow_gateway.schemas import ExternalQueryPlan

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
PLAN = ExternalQueryPlan(
    query_kind="weather", freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气", "广州 天气 5日预报"], result_limit=3)


def hit(url: str, title: str, hours_old: float) -> dict[str, Any]:
    return {"title": title, "url": url, "snippet": title,
            "published_at": (NOW - timedelta(hours=hours_old)).isoformat()}


@dataclass
class FakeSession:
    """Answers each call from `answers[query or url]`: a list of hits, an exception to raise,
    or ("sleep", seconds)."""

    answers: dict[str, Any] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    connects: int = 1
    closed: bool = False
    retired: int = 0

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((tool, arguments))
        answer = self.answers.get(arguments.get("query") or arguments.get("url") or "", [])
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, tuple):
            await asyncio.sleep(answer[1])
            answer = []
        if isinstance(answer, str):
            return CallToolResult(content=[TextContent(type="text", text=answer)])
        return CallToolResult(content=[], structured_content={"results": answer})

    async def connect(self) -> None:
        self.connects += 1

    def retire(self) -> None:
        self.retired += 1

    async def aclose(self) -> None:
        self.closed = True


def adapter(session: FakeSession, **fields: Any) -> McpAdapter:
    config = McpServerConfig(name="fake", command="unused", **fields)
    return McpAdapter(config, session=session, now=lambda: NOW)


async def test_runs_each_query_and_merges_round_robin_without_duplicates() -> None:
    session = FakeSession({
        "广州 未来5天天气": [hit("https://a.example/1", "广州 A1", 1),
                          hit("https://a.example/2", "广州 A2", 2)],
        "广州 天气 5日预报": [hit("https://a.example/1/", "dup", 1),
                           hit("https://b.example/1", "广州 B", 3)],
    })
    result = await adapter(session).collect(PLAN, timeout_s=5)
    assert [c[1] for c in session.calls] == [
        {"query": "广州 未来5天天气", "limit": 3}, {"query": "广州 天气 5日预报", "limit": 3}]
    assert [i.target_url for i in result.items] == [
        "https://a.example/1", "https://a.example/2", "https://b.example/1"]
    assert [(a.outcome, a.evidence_count) for a in result.attempts] == [("ok", 2), ("ok", 2)]
    first = result.items[0]
    assert first.source_label == "fake"  # no site in the result: the server's name
    assert first.retrieved_at == NOW
    assert first.freshness_score == pytest.approx(0.5 ** (1 / 36), abs=1e-3)
    assert first.authority_score == pytest.approx(0.4)
    assert first.raw_metadata == {"server": "fake", "tool": "search",
                                  "published_at": (NOW - timedelta(hours=1)).isoformat()}


async def test_fresh_items_move_ahead_when_the_plan_needs_freshness() -> None:
    session = FakeSession({"广州 天气": [hit("https://old.example", "广州 old", 24 * 30),
                                       hit("https://new.example", "广州 new", 1)]})
    plan = PLAN.model_copy(update={"search_queries": ["广州 天气"]})
    result = await adapter(session).collect(plan, timeout_s=5)
    assert [i.target_url for i in result.items] == ["https://new.example", "https://old.example"]
    relaxed = await adapter(session).collect(plan.model_copy(update={"freshness_required": False}),
                                             timeout_s=5)
    assert relaxed.items[0].target_url == "https://old.example"


async def test_items_about_another_place_go_when_some_are_about_the_asked_place() -> None:
    session = FakeSession({"广州 天气": [hit("https://a.example/sh", "上海天气", 1),
                                       hit("https://a.example/gz", "广州天气", 1)]})
    plan = PLAN.model_copy(update={"search_queries": ["广州 天气"]})
    result = await adapter(session).collect(plan, timeout_s=5)
    assert [i.target_url for i in result.items] == ["https://a.example/gz"]
    elsewhere = await adapter(session).collect(
        plan.model_copy(update={"location_hint": "深圳", "subject_entities": []}), timeout_s=5)
    assert len(elsewhere.items) == 2  # nothing mentions the place: the search engine decides


async def test_topic_is_the_query_when_the_plan_has_none_and_max_queries_caps() -> None:
    session = FakeSession()
    await adapter(session).collect(PLAN.model_copy(update={"search_queries": []}), timeout_s=5)
    assert session.calls == [("search", {"query": "广州未来5天天气", "limit": 3})]
    many = PLAN.model_copy(update={"search_queries": [f"q{i}" for i in range(6)]})
    session = FakeSession()
    result = await adapter(session, max_queries=2).collect(many, timeout_s=5)
    assert len(session.calls) == 2
    assert [a.outcome for a in result.attempts] == ["empty", "empty"]


async def test_timeout_is_the_smaller_of_config_and_budget() -> None:
    session = FakeSession({"广州 天气": ("sleep", 5)})
    plan = PLAN.model_copy(update={"search_queries": ["广州 天气"]})
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await adapter(session, timeout_s=0.2).collect(plan, timeout_s=5)
    assert loop.time() - started < 1
    assert [a.outcome for a in result.attempts] == ["timeout"]
    started = loop.time()
    result = await adapter(session, timeout_s=5).collect(plan, timeout_s=0.2)
    assert loop.time() - started < 1
    assert [a.outcome for a in result.attempts] == ["timeout"]


async def test_failures_are_attempts_and_open_the_circuit() -> None:
    clock = [100.0]
    session = FakeSession({"广州 天气": ConnectionError("refused")})
    config = McpServerConfig(name="fake", command="unused", failure_threshold=2, cooldown_s=10)
    mcp = McpAdapter(config, session=session, now=lambda: NOW, monotonic=lambda: clock[0])
    plan = PLAN.model_copy(update={"search_queries": ["广州 天气"]})
    outcomes = [(await mcp.collect(plan, timeout_s=5)).attempts[0] for _ in range(3)]
    assert [a.outcome for a in outcomes] == ["error", "error", "circuit_open"]
    assert outcomes[0].error == "ConnectionError: refused"
    assert len(session.calls) == 2
    assert session.retired == 1  # the probe will use a fresh connection
    clock[0] += 10
    session.answers["广州 天气"] = [hit("https://a.example", "广州", 1)]
    probe = await mcp.collect(plan, timeout_s=5)
    assert [a.outcome for a in probe.attempts] == ["ok"] and probe.items
    assert mcp.breaker.state == "closed"


async def test_tool_error_result_is_an_error_attempt_that_keeps_the_circuit_closed() -> None:
    class ErrorSession(FakeSession):
        async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
            return CallToolResult(content=[TextContent(type="text", text="quota exceeded")],
                                  is_error=True)

    mcp = adapter(ErrorSession(), failure_threshold=1)
    result = await mcp.collect(PLAN, timeout_s=5)
    assert {(a.outcome, a.error) for a in result.attempts} == {("error", "quota exceeded")}
    assert mcp.breaker.state == "closed"


async def test_fetch_urls_are_filled_from_the_plan_and_parsed_as_pages() -> None:
    url = "https://wttr.example/%E5%B9%BF%E5%B7%9E"
    page = "# 广州天气\n\nUpdated: 2026-12-02T07:00:00Z\n\n广州未来5天多云有阵雨，气温20到28度。"
    session = FakeSession({url: page})
    mcp = adapter(session, search_tool=None, fetch_tool="fetch",
                  fetch_urls=["https://wttr.example/{location_hint}",
                              "https://x.example/{topic}/{nope}"])  # no such field: skipped
    result = await mcp.collect(PLAN, timeout_s=5)
    assert session.calls == [("fetch", {"url": url})]
    [item] = result.items
    assert (item.target_url, item.source_type, item.title) == (url, "url", "广州天气")
    assert item.raw_metadata["tool"] == "fetch"
    assert item.freshness_score > 0.9


async def test_aclose_closes_the_session() -> None:
    session = FakeSession()
    mcp = adapter(session)
    await mcp.aclose()
    assert session.closed


def test_argument_mapping_keeps_types_formats_strings_and_drops_empty() -> None:
    template = {"query": "{query}", "limit": "{result_limit}", "where": "{location_hint}",
                "q2": "{topic} in {location_hint}", "lang": "zh", "n": 7,
                "who": "{subject_entities}", "when": "{time_range_hint}"}
    plan = PLAN.model_copy(update={"time_range_hint": None})
    assert fill_arguments(template, plan, query="q") == {
        "query": "q", "limit": 3, "where": "广州", "q2": "广州未来5天天气 in 广州", "lang": "zh",
        "n": 7, "who": ["广州"]}


def test_url_templates_quote_values_and_skip_missing() -> None:
    assert fill_url("https://x.example/{location_hint}?q={topic}", PLAN) == (
        "https://x.example/%E5%B9%BF%E5%B7%9E?q=%E5%B9%BF%E5%B7%9E%E6%9C%AA%E6%9D%A55%E5%A4%A9"
        "%E5%A4%A9%E6%B0%94")
    assert fill_url("https://x.example/{time_range_hint}",
                    PLAN.model_copy(update={"time_range_hint": None})) is None


def test_breaker_lets_one_probe_through_per_interval() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=2, cooldown_s=5, clock=lambda: now[0])
    assert breaker.record_failure() is False
    assert breaker.allow() and breaker.state == "closed"
    assert breaker.record_failure() is True  # this one opened it
    assert breaker.state == "open" and breaker.refusing() and not breaker.allow()
    now[0] = 5.0
    assert breaker.state == "half_open" and not breaker.refusing()
    assert breaker.allow() and not breaker.allow()  # one probe per interval
    assert breaker.record_failure() is False  # a failed probe: the next one in 5 s
    assert breaker.state == "open"
    now[0] = 10.0
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed" and breaker.allow()


def test_any_late_success_closes_the_breaker() -> None:
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=30, clock=lambda: 0.0)
    breaker.record_failure()
    assert breaker.state == "open"
    breaker.record_success()  # a call that started before it opened
    assert breaker.state == "closed"


async def test_opening_the_circuit_leaves_calls_in_flight_to_finish() -> None:
    session = FakeSession({"slow": ("sleep", 0.3), "bad": ConnectionError("refused")})
    mcp = adapter(session, failure_threshold=1, cooldown_s=30)
    slow = PLAN.model_copy(update={"search_queries": ["slow"]})
    bad = PLAN.model_copy(update={"search_queries": ["bad"]})
    in_flight = asyncio.create_task(mcp.collect(slow, timeout_s=5))
    await asyncio.sleep(0.05)
    failed = await mcp.collect(bad, timeout_s=5)
    assert mcp.breaker.state == "open" and session.retired == 1
    finished = await in_flight
    assert [a.outcome for a in failed.attempts] == ["error"]
    assert [a.outcome for a in finished.attempts] == ["empty"]  # answered, not cancelled
    assert mcp.breaker.state == "closed"


async def test_calls_past_the_servers_slots_wait_and_then_give_up_as_busy() -> None:
    session = FakeSession({"slow": ("sleep", 0.5)})
    mcp = adapter(session, max_concurrent_calls=2)
    slow = PLAN.model_copy(update={"search_queries": ["slow"]})
    results = await asyncio.gather(*(mcp.collect(slow, timeout_s=0.3) for _ in range(3)))
    outcomes = sorted(a.outcome for r in results for a in r.attempts)
    assert outcomes == ["busy", "timeout", "timeout"]
    assert len(session.calls) == 2  # the third never reached the server
    assert mcp.breaker.state == "closed"  # waiting for a slot is not the server failing


def test_config_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text("""
[[servers]]
name = "learn"
transport = "http"
url = "https://learn.microsoft.com/api/mcp"
search_tool = "microsoft_docs_search"
search_args = { query = "{query}" }
timeout_s = 5

[[servers]]
name = "fetch"
command = "uvx"
args = ["mcp-server-fetch"]
search_tool = ""
fetch_tool = "fetch"
fetch_urls = ["https://wttr.in/{location_hint}?format=3"]
""", encoding="utf-8")
    learn, fetch = load_servers(path)
    assert (learn.transport, learn.url, learn.search_args, learn.timeout_s) == (
        "http", "https://learn.microsoft.com/api/mcp", {"query": "{query}"}, 5)
    assert (fetch.transport, fetch.command, fetch.fetch_tool) == ("stdio", "uvx", "fetch")


@pytest.mark.parametrize("body", [
    '[[servers]]\nname = "x"\ntransport = "stdio"\n',
    '[[servers]]\nname = "x"\ntransport = "http"\nurl = "ftp://x"\n',
    '[[servers]]\nname = "x"\ncommand = "y"\nsurprise = 1\n',
    '[[servers]]\nname = "x"\ntransport = "carrier-pigeon"\ncommand = "y"\n',
    '[[servers]]\nname = "x"\ncommand = "y"\n[[servers]]\nname = "x"\ncommand = "z"\n',
    '[[servers]]\nname = "x"\ncommand = "y"\nsearch_tool = ""\n',
    '[[servers]]\nname = "x"\ncommand = "y"\ntimeout_s = 0\n',
    '[[servers]]\nname = "x"\ncommand = "y"\nfailure_threshold = 0\n',
    '[[servers]]\nname = "x"\ncommand = "y"\nargs = "-m foo"\n',
    '[[servers]]\nname = "x"\ncommand = "y"\ntimeout_s = "8"\n',
    '[[servers]]\nname = "x"\ncommand = "y"\nenv = { DEBUG = 1 }\n',
    "not toml [",
])
def test_bad_config_fails_at_startup(tmp_path: Path, body: str) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(McpConfigError):
        load_servers(path)


def test_no_config_means_no_mcp_server_and_the_demo_is_our_own_over_stdio() -> None:
    assert load_servers(None) == []
    [server] = demo_servers()
    assert server.transport == "stdio"
    assert server.args == ["-m", "pmflow_gateway.mcp_server"]


def test_the_example_config_loads() -> None:
    [server] = load_servers(Path(__file__).parents[2] / "examples" / "mcp.toml")
    assert (server.name, server.transport, server.search_tool) == (
        "pmflow-corpus", "stdio", "search")
