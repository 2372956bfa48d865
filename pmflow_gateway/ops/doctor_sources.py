"""`doctor`'s checks of where evidence comes from: each MCP server (reached, its tools there,
one real search through its search tool), the live search's engine (one real search), and
which source would answer first, in the order the evidence stage asks them. A source that
cannot search fails the run; when none returns results, so does `search`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pmflow_gateway.ops.checks import Check, fail, ok, why

if TYPE_CHECKING:
    from pmflow_gateway.adapters.mcp_config import McpServerConfig
    from pmflow_gateway.adapters.search_engines import SearchEngine
    from pmflow_gateway.adapters.ssrf import FetchedPage
    from pmflow_gateway.settings import Settings

PROBE_QUERY = "weather forecast"


@dataclass(frozen=True)
class Searched:
    """One source's check, and how many results its search returned (None: it has none)."""

    check: Check
    results: int | None = None


async def check_sources(settings: Settings, *, query: str = PROBE_QUERY,
                        timeout_s: float = 8.0) -> list[Check]:
    """The MCP servers' checks, the engine's, then `search`: which source would answer."""
    if settings.demo:
        return await check_mcp_servers(None, demo=True)
    engine_timeout = min(timeout_s, settings.live_search_fetch_timeout_s + 3)
    mcp, engine = await asyncio.gather(
        _mcp_checks(settings.mcp_config, timeout_s=timeout_s, query=query),
        check_engine(settings, query=query, timeout_s=engine_timeout))
    searched = [*mcp, engine]
    answering = [s.check.name for s in searched if s.results]
    order = ", ".join(s.check.name for s in searched if s.results is not None)
    if answering:
        summary = ok("search", f"{answering[0]} would answer first (asked in order: {order})")
    else:
        summary = fail("search", f"no source returned results for {query!r} (asked: {order})",
                       "fix the failing source above; evidence cannot be found without one")
    return [s.check for s in searched] + [summary]


# -- MCP servers ----------------------------------------------------------------------------


async def check_mcp_servers(config: Path | None, *, timeout_s: float = 8.0, demo: bool = False,
                            query: str = PROBE_QUERY) -> list[Check]:
    if demo:
        return [Check(name="mcp", ok=True, warning=True,
                      detail="demo mode (PMFLOW_DEMO / --demo): the packaged demo corpus is the "
                      "only provider; every answer is invented demo data",
                      fix="unset PMFLOW_DEMO and list real servers in PMFLOW_MCP_CONFIG")]
    return [s.check for s in await _mcp_checks(config, timeout_s=timeout_s, query=query)]


async def _mcp_checks(config: Path | None, *, timeout_s: float, query: str) -> list[Searched]:
    from pmflow_gateway.adapters.mcp_config import McpConfigError, load_servers

    if config is None:
        return [Searched(ok("mcp", "PMFLOW_MCP_CONFIG unset: no MCP server, the live search "
                                   "alone"))]
    try:  # the same validation the workers run at start-up
        servers = load_servers(config)
    except McpConfigError as exc:
        return [Searched(fail("mcp", str(exc), "fix PMFLOW_MCP_CONFIG (see examples/mcp.toml)"))]
    if not servers:
        return [Searched(fail("mcp", f"{config} lists no [[servers]]",
                              "add a [[servers]] entry (see examples/mcp.toml)"))]
    return list(await asyncio.gather(*(_check_mcp_server(s, timeout_s, query)
                                       for s in servers)))


async def _check_mcp_server(server: McpServerConfig, timeout_s: float, query: str) -> Searched:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    name = f"mcp.{server.name}"
    if server.transport == "http":
        target: Any = server.url or ""
        where = f"http {target}"
    else:
        target = StdioServerParameters(command=server.command or "", args=list(server.args),
                                       env=dict(server.env) or None)
        where = " ".join(["stdio", server.command or "", *server.args])
    wanted = [t for t in (server.search_tool, server.fetch_tool) if t]
    try:
        async with asyncio.timeout(timeout_s), Client(target, cache=None) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            if absent := [t for t in wanted if t not in tools]:
                return Searched(fail(name, f"{where}: no tool {', '.join(absent)} (has "
                                           f"{', '.join(sorted(tools)) or 'none'})",
                                     "set search_tool/fetch_tool to one of the listed tools"))
            if not server.search_tool:
                return Searched(ok(name, f"{where}: {len(tools)} tools, fetch tool "
                                         f"{server.fetch_tool} present (no search tool)"))
            result = await client.call_tool(server.search_tool, _search_args(server, query))
    except Exception as exc:  # any failure to connect, list or search is the finding itself
        return Searched(fail(name, f"{where}: {why(exc)[:200]}",
                             "start the server or fix its entry in PMFLOW_MCP_CONFIG"), 0)
    return _searched(name, where, server.search_tool, result, query)


def _search_args(server: McpServerConfig, query: str) -> dict[str, Any]:
    from pmflow_gateway.adapters.mcp import fill_arguments
    from pmflow_gateway.schemas import ExternalQueryPlan

    plan = ExternalQueryPlan(topic=query, search_queries=[query])
    return fill_arguments(server.search_args, plan, query=query)


def _searched(name: str, where: str, tool: str, result: Any, query: str) -> Searched:
    from pmflow_gateway.adapters.mcp_results import hits_from_search, tool_error_text

    if result.is_error:
        return Searched(fail(name, f"{where}: {tool} answered an error: "
                                   f"{tool_error_text(result) or 'no text'}",
                             "check the server's own configuration (its API key, its "
                             "upstream) and search_args"), 0)
    hits = hits_from_search(result, now=datetime.now(UTC))
    if not hits:
        return Searched(fail(name, f"{where}: {tool} returned no result with a link for "
                                   f"{query!r}", "check the server's upstream and search_args"),
                        0)
    return Searched(ok(name, f"{where}: {tool} returned {len(hits)} result(s) for {query!r}"),
                    len(hits))


# -- the live search's engine ---------------------------------------------------------------


async def check_engine(settings: Settings, *, query: str = PROBE_QUERY,
                       timeout_s: float = 8.0) -> Searched:
    """One real search through the configured engine, reached exactly as the workers do."""
    from pmflow_gateway.adapters.ssrf import FetchError
    from pmflow_gateway.bootstrap import build_engine, build_engine_fetcher

    engine = build_engine(settings)
    name, where = f"search.{engine.name}", engine.endpoint
    try:
        page = await build_engine_fetcher(settings, engine).fetch(
            engine.search_url(query), timeout_s=timeout_s)
    except FetchError as exc:
        return Searched(fail(name, f"{where} unreachable: {exc.reason}", _ENGINE_FIX[engine.name]),
                        0)
    refused = _refusal(engine, page)
    if refused is not None:
        return Searched(refused, 0)
    hits = engine.parse(page)
    if not hits:
        return Searched(fail(name, f"{where} answered HTTP {page.status} with no results for "
                                   f"{query!r}", _ENGINE_FIX[engine.name]), 0)
    detail = f"{where} returned {len(hits)} result(s) for {query!r}"
    if engine.name == "duckduckgo":
        return Searched(Check(name=name, ok=True, warning=True, detail=detail + _DDG_NOTE,
                              fix=_PRODUCTION_ENGINES), len(hits))
    return Searched(ok(name, detail), len(hits))


def _refusal(engine: SearchEngine, page: FetchedPage) -> Check | None:
    name, where = f"search.{engine.name}", engine.endpoint
    if engine.rate_limited(page) or page.status == 429:
        detail = f"{where} is rate-limiting this address (HTTP {page.status})"
        if engine.name == "duckduckgo":
            return Check(name=name, ok=True, warning=True, detail=detail + _DDG_NOTE,
                         fix=_PRODUCTION_ENGINES)
        return fail(name, detail, "lower PMFLOW_LIVE_SEARCH_ENGINE_RATE or raise the engine's "
                                  "limit")
    if engine.name == "searxng" and page.status == 403:
        return fail(name, f"{where} answered HTTP 403: its JSON output is off",
                    "add json to search.formats in the instance's settings.yml (README, "
                    "SearXNG)")
    if page.status in (401, 403):
        return fail(name, f"{where} answered HTTP {page.status}: the key was refused",
                    "check PMFLOW_LIVE_SEARCH_API_KEY")
    if page.status >= 400:
        return fail(name, f"{where} answered HTTP {page.status}", _ENGINE_FIX[engine.name])
    return None


_DDG_NOTE = (" (DuckDuckGo's HTML page: the zero-configuration fallback, not meant for "
             "production: it rate-limits bursts, so one process sends one search a second)")
_PRODUCTION_ENGINES = ("set PMFLOW_LIVE_SEARCH_ENGINE=searxng with PMFLOW_LIVE_SEARCH_ENDPOINT "
                       "(your own SearXNG) or =brave with PMFLOW_LIVE_SEARCH_API_KEY")
_ENGINE_FIX = {
    "searxng": "start SearXNG or fix PMFLOW_LIVE_SEARCH_ENDPOINT (its base URL)",
    "brave": "check PMFLOW_LIVE_SEARCH_API_KEY and the network path to the Brave API",
    "duckduckgo": "check the network path to DuckDuckGo, or " + _PRODUCTION_ENGINES,
}
