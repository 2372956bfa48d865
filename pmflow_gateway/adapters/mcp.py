"""The MCP evidence adapter: one per configured server, MCP first in the provider registry.

Per question it runs the plan's search queries (and configured page fetches) concurrently on
a long-lived session, turns the results into `ExternalEvidence`, and records every call as
an `AdapterAttempt`. With `fetch_results`, the top results' pages are read (by the server's
fetch tool, or by the gateway's SSRF-safe fetcher when it has none) and their text is the
evidence instead of the search snippets. It never raises for a server's failure: failures
are attempts. A result URL becomes evidence only if it passes the same address rule as a
fetched page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from string import Formatter
from typing import Any, Protocol
from urllib.parse import quote

from mcp.types import CallToolResult

from pmflow_gateway.adapters.live_search import PageFetcher
from pmflow_gateway.adapters.mcp_config import McpServerConfig, load_servers
from pmflow_gateway.adapters.mcp_results import (
    Hit,
    hit_from_page,
    hits_from_search,
    tool_error_text,
)
from pmflow_gateway.adapters.mcp_session import CircuitBreaker, McpSession
from pmflow_gateway.adapters.result_pages import read_result_page
from pmflow_gateway.adapters.ssrf import SafeFetcher
from pmflow_gateway.contract.addresses import allow_keys, url_refusal
from pmflow_gateway.contract.scoring import (
    FRESH_ENOUGH,
    authority_score,
    freshness_score,
    grounded_fields,
)
from pmflow_gateway.contract.urls import canonical_url
from pmflow_gateway.ports import AdapterResult
from pmflow_gateway.schemas import AdapterAttempt, ExternalEvidence, ExternalQueryPlan

ADAPTER = "mcp"


class ToolSession(Protocol):
    """A connection that calls tools: `McpSession` for real, an in-memory fake in unit tests."""

    connects: int

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Raises on transport failure; the caller bounds the time."""
        ...

    async def connect(self) -> None:
        """Open the connection now; raises when the server cannot be reached."""
        ...

    def retire(self) -> None:
        """Send the next calls to a new connection; calls in flight finish on this one."""
        ...

    async def aclose(self) -> None: ...


class McpAdapter:
    """Evidence from one MCP server (see `McpServerConfig` for what is configurable)."""

    name = ADAPTER

    def __init__(self, config: McpServerConfig, *, session: ToolSession | None = None,
                 allow_hosts: Iterable[str] = (), fetcher: PageFetcher | None = None,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        """`allow_hosts` is the fetcher's allow-list (tests only): result URLs on those
        `host:port`s pass the address rule despite a private address or local name.
        `fetcher` reads the result pages of a `fetch_results` server without a fetch tool
        (default: the SSRF-safe fetcher with that allow-list)."""
        self.config = config
        self._allow = allow_keys(allow_hosts)
        self._fetcher = fetcher or SafeFetcher(allow_hosts=allow_hosts)
        self.session: ToolSession = session or McpSession(config)
        self.breaker = CircuitBreaker(failure_threshold=config.failure_threshold,
                                      cooldown_s=config.cooldown_s, clock=monotonic)
        self._slots = asyncio.Semaphore(config.max_concurrent_calls)
        self._now = now
        self._monotonic = monotonic

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        deadline = self._monotonic() + timeout_s
        calls = [self._search(query, plan, deadline) for query in self._queries(plan)]
        calls += [self._fetch(url, plan, deadline) for url in self._fetch_urls(plan)]
        outcomes = await asyncio.gather(*calls)
        attempts = [attempt for _, attempt in outcomes]
        if self.config.fetch_results:
            outcomes, reads = await self._read_results(outcomes, plan, deadline)
            attempts += reads
        return AdapterResult(items=self._merge(outcomes, plan), attempts=attempts)

    async def warm_up(self, timeout_s: float) -> str | None:
        """Start the server before any question, so its cold start (a stdio process, an HTTP
        handshake) is not paid from the first question's budget. Returns why it failed, or
        None; a failure is not fatal: the first question connects again."""
        try:
            await asyncio.wait_for(self.session.connect(), timeout_s)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    async def aclose(self) -> None:
        await self.session.aclose()

    def _queries(self, plan: ExternalQueryPlan) -> list[str]:
        if not self.config.search_tool:
            return []
        queries = [q for q in plan.search_queries if q.strip()] or [plan.topic]
        return [q for q in queries if q.strip()][: self.config.max_queries]

    def _fetch_urls(self, plan: ExternalQueryPlan) -> list[str]:
        if not self.config.fetch_tool:
            return []
        urls = [fill_url(template, plan) for template in self.config.fetch_urls]
        return [u for u in urls if u]

    async def _search(self, query: str, plan: ExternalQueryPlan,
                      deadline: float) -> tuple[list[Hit], AdapterAttempt]:
        tool = self.config.search_tool
        assert tool is not None
        arguments = fill_arguments(self.config.search_args, plan, query=query)
        return await self._call(tool, arguments, deadline, lambda result: hits_from_search(
            result, now=self._now(), limit=self.config.max_hits))

    async def _fetch(self, url: str, plan: ExternalQueryPlan,
                     deadline: float) -> tuple[list[Hit], AdapterAttempt]:
        tool = self.config.fetch_tool
        assert tool is not None
        arguments = fill_arguments(self.config.fetch_args, plan, url=url)
        query = " ".join([plan.topic, *plan.search_queries[:1]])

        def parse(result: CallToolResult) -> list[Hit]:
            hit = hit_from_page(url, result, query=query, now=self._now())
            return [hit] if hit else []

        return await self._call(tool, arguments, deadline, parse)

    async def _read_results(
        self, outcomes: list[tuple[list[Hit], AdapterAttempt]], plan: ExternalQueryPlan,
        deadline: float,
    ) -> tuple[list[tuple[list[Hit], AdapterAttempt]], list[AdapterAttempt]]:
        """Search, then fetch: the top results (in the order `_merge` reads them) are fetched
        at once, by the fetch tool or else by the gateway, and each page that comes back
        replaces its snippet; a page that fails keeps the search result as it was."""
        wanted: dict[str, Hit] = {}
        for rank in range(max((len(hits) for hits, _ in outcomes), default=0)):
            for hits, _ in outcomes:
                if rank < len(hits) and len(wanted) < plan.result_limit + FETCH_SPARES:
                    wanted.setdefault(canonical_url(hits[rank].url), hits[rank])
        read = await asyncio.gather(*(self._read_page(hit, plan, deadline)
                                      for hit in wanted.values()))
        pages = {canonical_url(hit.url): _with_page(hit, pages[0])
                 for hit, (pages, _) in zip(wanted.values(), read, strict=True) if pages}
        replaced = [([pages.get(canonical_url(h.url), h) for h in hits], attempt)
                    for hits, attempt in outcomes]
        return replaced, [attempt for _, attempt in read]

    async def _read_page(self, hit: Hit, plan: ExternalQueryPlan,
                         deadline: float) -> tuple[list[Hit], AdapterAttempt]:
        if self.config.fetch_tool:
            return await self._fetch(hit.url, plan, deadline)
        budget = min(self.config.timeout_s, deadline - self._monotonic())
        return await read_result_page(self._fetcher, hit, server=self.config.name,
                                      query=" ".join([plan.topic, *plan.search_queries[:1]]),
                                      budget_s=budget, now=self._now)

    async def _call(self, tool: str, arguments: dict[str, Any], deadline: float,
                    parse: Callable[[CallToolResult], list[Hit]],
                    ) -> tuple[list[Hit], AdapterAttempt]:
        started = self._monotonic()

        def attempt(outcome: str, count: int = 0, error: str | None = None) -> AdapterAttempt:
            latency = round((self._monotonic() - started) * 1000, 3)
            return AdapterAttempt(adapter=ADAPTER, server=self.config.name, tool=tool,
                                  outcome=outcome, latency_ms=latency, evidence_count=count,
                                  error=error)

        result = await self._send(tool, arguments,
                                  budget_s=min(self.config.timeout_s, deadline - started))
        if isinstance(result, _Unanswered):
            return [], attempt(result.outcome, error=result.why)
        if result.is_error:
            return [], attempt("error", error=tool_error_text(result) or "tool error")
        try:
            hits = parse(result)
        except Exception as exc:  # a result shape nobody foresaw is this call's failure only
            return [], attempt("error", error=f"unreadable result: {_describe(exc)}")
        verdicts = [(hit, url_refusal(hit.url, self._allow)) for hit in hits]
        kept = [hit for hit, refusal in verdicts if refusal is None]
        refused = [refusal for _, refusal in verdicts if refusal is not None]
        note = f"{len(refused)} hit(s) refused: {refused[0]}" if refused else None
        return kept, attempt("ok" if kept else "empty", count=len(kept), error=note)

    async def _send(self, tool: str, arguments: dict[str, Any], *,
                    budget_s: float) -> CallToolResult | _Unanswered:
        """One call through the breaker and this server's slots, within `budget_s`."""
        server, timeout = self.config.name, budget_s
        if timeout <= 0:  # checked first: a call never made takes no slot and no probe
            return _Unanswered("timeout", "no time left in the question budget")
        if self.breaker.refusing():
            return _Unanswered("circuit_open", f"circuit open for {server}")
        until = asyncio.get_running_loop().time() + timeout
        try:
            async with asyncio.timeout_at(until):
                await self._slots.acquire()
        except TimeoutError:
            return _Unanswered("busy", f"all {self.config.max_concurrent_calls} call slots "
                               f"of {server} stayed taken for {timeout:.2f}s")
        try:
            if not self.breaker.allow():
                return _Unanswered("circuit_open", f"circuit open for {server}")
            async with asyncio.timeout_at(until):
                result = await self.session.call_tool(tool, arguments)
        except TimeoutError:
            self._record_failure()
            return _Unanswered("timeout", f"no answer within {timeout:.2f}s")
        except Exception as exc:
            self._record_failure()
            return _Unanswered("error", _describe(exc))
        finally:
            self._slots.release()
        self.breaker.record_success()  # the server answered (even a tool error): it is healthy
        return result

    def _record_failure(self) -> None:
        """Count a failure; when it opens the circuit, later calls (the probes) go to a new
        connection, so a wedged stdio server is not asked again. Calls in flight go on."""
        if self.breaker.record_failure():
            self.session.retire()

    def _merge(self, outcomes: list[tuple[list[Hit], AdapterAttempt]],
               plan: ExternalQueryPlan) -> list[ExternalEvidence]:
        """Round-robin over the calls (each one's best first), one item per URL. When the plan
        names a place and some items mention it, items about neither that place nor any of
        the plan's subjects go (Shanghai's forecast does not answer a Guangzhou question).
        When the plan needs fresh facts, fresh items move ahead, order kept otherwise."""
        now = self._now()
        seen: set[str] = set()
        items: list[ExternalEvidence] = []
        for rank in range(max((len(hits) for hits, _ in outcomes), default=0)):
            for hits, attempt in outcomes:
                if rank < len(hits) and (key := canonical_url(hits[rank].url)) not in seen:
                    seen.add(key)
                    items.append(self._evidence(hits[rank], attempt.tool, plan, now))
        if any("location_hint" in item.grounded_fields for item in items):
            items = [item for item in items
                     if {"location_hint", "subject_entities"} & set(item.grounded_fields)]
        if plan.freshness_required:
            items.sort(key=lambda item: item.freshness_score < FRESH_ENOUGH)
        # Spares beyond the limit: the evidence stage filters URLs again, then cuts.
        return items[: plan.result_limit * 2]

    def _evidence(self, hit: Hit, tool: str | None, plan: ExternalQueryPlan,
                  now: datetime) -> ExternalEvidence:
        return ExternalEvidence(
            source_type=hit.source_type,
            source_label=hit.site or self.config.name,
            title=hit.title,
            target_url=hit.url,
            snippet=hit.snippet,
            retrieved_at=now,
            freshness_score=freshness_score(hit.published_at, plan, now),
            authority_score=authority_score(hit.url, plan.preferred_domains),
            grounded_fields=grounded_fields(plan, f"{hit.title}\n{hit.snippet}"),
            raw_metadata={"server": self.config.name, "tool": tool,
                          "published_at": hit.published_at.isoformat() if hit.published_at
                          else None},
        )


# Pages read beyond the plan's result limit, for those the question contract will drop.
FETCH_SPARES = 2


def _with_page(result: Hit, page: Hit) -> Hit:
    """The search result with its page's text; what the search engine said of its title,
    date and site stays when the page does not say better."""
    return Hit(title=result.title or page.title, url=result.url, snippet=page.snippet,
               published_at=result.published_at or page.published_at,
               site=result.site or page.site, source_type=page.source_type)


@dataclass(frozen=True)
class _Unanswered:
    """A call that brought no result: the attempt's outcome and why."""

    outcome: str
    why: str


def plan_values(plan: ExternalQueryPlan, **extra: Any) -> dict[str, Any]:
    return {**plan.model_dump(mode="json"), **extra}


def fill_arguments(template: dict[str, Any], plan: ExternalQueryPlan,
                   **extra: Any) -> dict[str, Any]:
    """Tool arguments from the config's mapping; an argument whose only placeholder is empty
    is left out so the tool's own default applies."""
    values = plan_values(plan, **extra)
    arguments: dict[str, Any] = {}
    for name, spec in template.items():
        if not isinstance(spec, str):
            arguments[name] = spec
            continue
        fields = [f for _, f, _, _ in Formatter().parse(spec) if f is not None]
        if len(fields) == 1 and spec == "{" + fields[0] + "}":
            value = values.get(fields[0])
            if value not in (None, "", []):
                arguments[name] = value
            continue
        arguments[name] = spec.format_map(_Blank(values))
    return arguments


def fill_url(template: str, plan: ExternalQueryPlan) -> str | None:
    """A fetch URL from its template, values URL-quoted; None when a placeholder is empty."""
    values = plan_values(plan)
    fields = [f for _, f, _, _ in Formatter().parse(template) if f]
    if any(values.get(f) in (None, "", []) for f in fields):
        return None
    quoted = {f: quote(str(values[f]), safe="") for f in fields}
    return template.format_map(quoted)


class _Blank(dict[str, Any]):
    """Format values where a missing or empty field reads as "" and a list as words."""

    def __getitem__(self, key: str) -> Any:
        value = super().get(key)
        if value is None:
            return ""
        if isinstance(value, list):
            return " ".join(map(str, value))
        return value


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}"[:300]


def adapters_from_config(path: Path | None, allow_hosts: Iterable[str] = (),
                         fetcher: PageFetcher | None = None) -> list[McpAdapter]:
    """One adapter per configured server (`PMFLOW_MCP_CONFIG`), in the file's order;
    `fetcher` reads result pages for servers without a fetch tool."""
    return [McpAdapter(config, allow_hosts=allow_hosts, fetcher=fetcher)
            for config in load_servers(path)]
