"""A third-party search MCP server from its npm package, as a team would configure it:
`mcp-searxng` (tests/support/npm) pointed at a SearXNG-compatible endpoint on 127.0.0.1. Its
results are titles, links and one-line descriptions; with `fetch_results` and no fetch tool
the gateway reads the top results' pages through its own SSRF-safe fetcher, and their text is
the evidence. The pages' site is reached through the allow-list (tests only); the endpoint's
own address is not on it, and a result pointing there is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import McpServerConfig
from pmflow_gateway.adapters.result_pages import TOOL
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind
from tests.support.npm_tools import npm_server
from tests.support.pages import ANSWER_PAGE, HTML, fresh
from tests.support.web_site import LocalSite

QUESTION = "帮我看看未来 5 天的广州天气如何"
PLAN = ExternalQueryPlan(
    query_kind=QueryKind.weather, freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气"], result_limit=3)
SNIPPET = "广州天气预报，点击查看"  # all the search engine says of the page


@pytest.fixture
def pages() -> Iterator[LocalSite]:
    with LocalSite({"/weather/guangzhou": (200, HTML, fresh(ANSWER_PAGE))}) as site:
        yield site


@pytest.fixture
def searxng(pages: LocalSite) -> Iterator[LocalSite]:
    with LocalSite() as site:
        results = [{"url": pages.url("/weather/guangzhou", host="localhost"),
                    "title": "广州未来5天天气预报", "content": SNIPPET, "engine": "local"},
                   {"url": site.url("/private"), "title": "广州天气（内部）", "content": SNIPPET}]
        site.routes["/search"] = (200, {"Content-Type": "application/json"},
                                  json.dumps({"query": "q", "results": results}))
        site.routes["/private"] = (200, HTML, "<p>广州 天气 internal</p>")
        yield site


def server_entry(searxng: LocalSite) -> dict[str, object]:
    """The `[[servers]]` entry a team writes for mcp-searxng (examples/mcp.toml)."""
    command, *args = npm_server("mcp-searxng")
    return {"name": "searxng", "transport": "stdio", "command": command, "args": args,
            "env": {"SEARXNG_URL": searxng.url("")}, "search_tool": "searxng_web_search",
            "search_args": {"query": "{query}"}, "fetch_results": True, "timeout_s": 15}


def toml_value(value: object) -> str:
    if isinstance(value, dict):  # an inline table
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)  # strings, numbers, booleans, lists


async def test_the_gateway_reads_the_pages_of_the_servers_results(
        searxng: LocalSite, pages: LocalSite) -> None:
    adapter = McpAdapter(McpServerConfig.model_validate(server_entry(searxng)),
                         allow_hosts=[f"localhost:{pages.port}"])
    try:
        result = await adapter.collect(PLAN, timeout_s=30)
    finally:
        await adapter.aclose()
    search, read = result.attempts
    assert (search.tool, search.outcome) == ("searxng_web_search", "ok")
    # The result on the endpoint's own address never became a hit, so it was never read.
    assert "1 hit(s) refused: loopback address 127.0.0.1" in (search.error or "")
    assert (read.tool, read.outcome, read.evidence_count) == (TOOL, "ok", 1)
    [item] = result.items
    assert item.target_url == pages.url("/weather/guangzhou", host="localhost")
    assert item.source_type == "url"
    assert "12月3日晴" in item.snippet and SNIPPET not in item.snippet
    assert item.freshness_score > 0.8  # the page's own publication time, two hours ago
    assert [r.path.split("?")[0] for r in searxng.requests] == ["/search"]  # never /private
    assert pages.paths_requested() == ["/weather/guangzhou"]


def test_ask_answers_through_the_npm_search_server(
        searxng: LocalSite, pages: LocalSite, tmp_path: Path) -> None:
    config = tmp_path / "mcp.toml"
    config.write_text("[[servers]]\n" + "".join(
        f"{key} = {toml_value(value)}\n" for key, value in server_entry(searxng).items()),
        encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    environment.update({
        "PMFLOW_DATA_DIR": str(tmp_path), "PMFLOW_MCP_CONFIG": str(config),
        "PMFLOW_FETCH_ALLOW_HOSTS": f"localhost:{pages.port}",
        # The live search finds nothing here: whatever is answered came through the server.
        "PMFLOW_LIVE_SEARCH_ENGINE": "searxng", "PMFLOW_LIVE_SEARCH_ENDPOINT": "http://127.0.0.1:1"})
    done = subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", "ask", QUESTION, "--json"],
                          env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)
    attempts = {(a["adapter"], a["tool"], a["outcome"])
                for a in events["answer_ready"]["attempts"]}
    assert {("mcp", "searxng_web_search", "ok"), ("mcp", TOOL, "ok")} <= attempts
    answer = events["answer_ready"]
    assert answer["status"] == "answered", answer.get("reason")
    assert "12月3日晴" in answer["answer"]
    assert [s["url"] for s in answer["sources_used"]] == [
        pages.url("/weather/guangzhou", host="localhost")]
