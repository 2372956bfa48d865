"""The MCP adapter against servers that are not ours: the official mcp-server-fetch reading a
local dated page, and a server whose tools answer garbage."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import pytest

from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import McpServerConfig
from pmflow_gateway.contract.scoring import FRESH_ENOUGH
from pmflow_gateway.ports import AdapterResult
from pmflow_gateway.schemas import ExternalQueryPlan
from tests.support.web_site import LocalSite

WEATHER = ExternalQueryPlan(
    query_kind="weather", freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气"], result_limit=3)

# A real MCP server (SDK v2) whose tools return what no search tool should: text without
# links, links that are not http(s), a structured list of junk, and an exception.
GARBAGE_SERVER = """
from typing import Any
from mcp.server.mcpserver import MCPServer
server = MCPServer("garbage", log_level="WARNING")

@server.tool(structured_output=False)
def prose(query: str, limit: int = 3) -> str:
    return "<<<%%% no json here, and no link either %%%>>>"

@server.tool()
def junk(query: str, limit: int = 3) -> dict[str, Any]:
    return {"results": [42, "text", {"title": "ftp only", "url": "ftp://files.example/x"},
                        {"title": "script", "link": "javascript:alert(1)"}]}

@server.tool()
def boom(query: str, limit: int = 3) -> str:
    raise RuntimeError("backend exploded")

server.run("stdio")
"""


def garbage(tool: str) -> McpAdapter:
    return McpAdapter(McpServerConfig(name=f"garbage-{tool}", command=sys.executable,
                                      args=["-c", GARBAGE_SERVER], search_tool=tool))


async def collect(adapter: McpAdapter, plan: ExternalQueryPlan = WEATHER, *, times: int = 1,
                  timeout_s: float = 15) -> list[AdapterResult]:
    """The adapter's results for `times` collections of one plan; the adapter is closed after."""
    try:
        return [await adapter.collect(plan, timeout_s=timeout_s) for _ in range(times)]
    finally:
        await adapter.aclose()


def weather_page(published: datetime) -> str:
    return f"""<!doctype html><html><head><title>广州天气预报</title></head><body>
<article><h1>广州未来5天天气预报</h1>
<p>发布时间：{published.strftime("%Y-%m-%dT%H:%M:%SZ")}</p>
<p>广州未来5天天气：明天阵雨转多云，21~27℃；后天雷阵雨，20~26℃；之后以多云为主，气温19~28℃。</p>
<p>本页由本地测试站点提供，用于验证 mcp-server-fetch 的接入。</p>
</article></body></html>"""


async def test_mcp_server_fetch_reads_a_dated_local_page() -> None:
    published = datetime.now(UTC) - timedelta(hours=3)
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes = {"/forecast/%E5%B9%BF%E5%B7%9E": (200, html, weather_page(published)),
              "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n")}
    with LocalSite(routes) as site:
        adapter = McpAdapter(McpServerConfig(
            name="fetch", command=sys.executable,
            args=["-m", "mcp_server_fetch", "--allow-private-ips"],
            search_tool=None, fetch_tool="fetch",
            fetch_urls=[site.url("/forecast/{location_hint}")], timeout_s=15),
            allow_hosts=[f"127.0.0.1:{site.port}"])  # a local test site, as for the fetcher
        [result] = await collect(adapter, timeout_s=20)
        # it checks robots.txt, and we allow it
        assert "/robots.txt" in site.paths_requested()
    assert [(a.outcome, a.tool) for a in result.attempts] == [("ok", "fetch")]
    [item] = result.items
    assert item.target_url == site.url("/forecast/%E5%B9%BF%E5%B7%9E")
    assert item.source_type == "url"
    assert "广州" in item.title
    assert "阵雨" in item.snippet
    assert item.freshness_score > FRESH_ENOUGH
    assert item.raw_metadata["published_at"].startswith(published.strftime("%Y-%m-%dT%H:%M"))
    assert {"location_hint", "time_range_hint", "subject_entities"} <= set(item.grounded_fields)


async def test_plan_without_a_value_for_the_url_template_fetches_nothing() -> None:
    adapter = McpAdapter(McpServerConfig(
        name="fetch", command=sys.executable, args=["-m", "mcp_server_fetch"],
        search_tool=None, fetch_tool="fetch", fetch_urls=["https://wttr.in/{location_hint}"]))
    [result] = await collect(adapter, WEATHER.model_copy(update={"location_hint": None}),
                             timeout_s=5)
    assert result.items == [] and result.attempts == []
    assert adapter.session.connects == 0  # nothing to ask, so no process was started


# "prose": text without links; "junk": structured results, none with an http(s) URL.
@pytest.mark.parametrize("tool", ["prose", "junk"])
async def test_results_without_an_http_link_are_an_empty_attempt(tool: str) -> None:
    [result] = await collect(garbage(tool))
    assert result.items == []
    assert [a.outcome for a in result.attempts] == ["empty"]


async def test_tool_exception_is_an_error_attempt_and_the_session_survives() -> None:
    adapter = garbage("boom")
    for result in await collect(adapter, times=2):
        [attempt] = result.attempts
        assert attempt.outcome == "error"
        assert "boom" in (attempt.error or "")  # v2 hides the exception text itself
    assert adapter.session.connects == 1
    assert adapter.breaker.state == "closed"  # the server answered: it is up


async def test_unknown_tool_is_an_error_attempt() -> None:
    [result] = await collect(garbage("no_such_tool"))
    [attempt] = result.attempts
    assert attempt.outcome == "error" and attempt.error
