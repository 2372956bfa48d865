"""The bounded live-search fallback: search, fetch the top results, keep the passages that answer.

It runs when MCP is down, slow or empty: scraping a search engine's HTML is too fragile to be
the first choice, so it serves only as this fallback. Everything is capped: queries, pages,
bytes per page, total time. Only the search engine's result links are fetched, never a URL
found inside a fetched page, and every fetch goes through the SSRF guard. Failures become
attempt records; `collect` never raises.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.page_text import PageText, read_page
from pmflow_gateway.adapters.passages import (
    BM25,
    PagePassages,
    Passage,
    evidence_text,
    read_passages,
)
from pmflow_gateway.adapters.published import plausible_date, published_at
from pmflow_gateway.adapters.rate_limit import HostLimits
from pmflow_gateway.adapters.search_engines import DuckDuckGoHtml, SearchEngine, SearchHit
from pmflow_gateway.adapters.ssrf import (
    FetchedPage,
    FetchError,
    FetchRefused,
    FetchTimedOut,
    Resolver,
    SafeFetcher,
    system_resolver,
)
from pmflow_gateway.contract.scoring import authority_score, freshness_score, grounded_fields
from pmflow_gateway.contract.urls import bare_host, canonical_url, host_of
from pmflow_gateway.ports import AdapterResult, Clock
from pmflow_gateway.schemas import AdapterAttempt, ExternalEvidence, ExternalQueryPlan

ADAPTER = "live_search"


class PageFetcher(Protocol):
    async def fetch(self, url: str, *, timeout_s: float | None = None) -> FetchedPage: ...


@dataclass(kw_only=True)
class _Call:
    """One search or fetch, before it becomes an `AdapterAttempt`."""

    tool: str
    url: str
    started: float
    outcome: str = "ok"
    error: str | None = None
    finished: float | None = None
    count: int = 0

    def attempt(self) -> AdapterAttempt:
        latency = ((self.finished or time.monotonic()) - self.started) * 1000
        return AdapterAttempt(adapter=ADAPTER, server=host_of(self.url) or None,
                              tool=self.tool, outcome=self.outcome,
                              latency_ms=round(latency, 1), evidence_count=self.count,
                              error=self.error)


@dataclass(kw_only=True)
class _ReadPage:
    hit: SearchHit
    call: _Call
    final_url: str = ""
    text: PageText | None = None
    published: datetime | None = None
    retrieved_at: datetime | None = None
    passages: PagePassages | None = None
    done: bool = False  # False at the deadline: the read was cut short


class LiveSearchAdapter:
    """`EvidenceAdapter` over an HTML/JSON search endpoint and the pages it links to."""

    name = ADAPTER

    def __init__(
        self,
        *,
        engine: SearchEngine | None = None,
        allow_hosts: Iterable[str] = (),
        max_queries: int = 2,
        max_pages: int = 4,
        max_bytes_per_page: int = 1_000_000,
        max_redirects: int = 3,
        fetch_timeout_s: float = 5.0,
        total_timeout_s: float = 10.0,
        concurrency: int = 4,
        passage_chars: int = 300,
        evidence_chars: int = 1500,
        clock: Clock | None = None,
        resolver: Resolver = system_resolver,
        engine_limits: HostLimits | None = None,
        page_limits: HostLimits | None = None,
        fetcher: PageFetcher | None = None,
        engine_fetcher: PageFetcher | None = None,
    ) -> None:
        """Caps: `max_queries` searches and `max_pages` page fetches per plan, each page read
        up to `max_bytes_per_page`, each fetch at most `fetch_timeout_s`, everything within
        `total_timeout_s` (or the caller's shorter budget). `allow_hosts` is the SSRF guard's
        allow-list, empty in production. `engine_limits` and `page_limits` pace the requests
        to the search engine and to each page's host across all questions (None: unpaced).
        `fetcher` replaces the SSRF-guarded one (and its caps) in tests; `engine_fetcher`
        asks the engine (default: `fetcher`), e.g. one that trusts a configured endpoint."""
        self.engine = engine or DuckDuckGoHtml()
        self.max_queries = max_queries
        self.max_pages = max_pages
        self.total_timeout_s = total_timeout_s
        self.passage_chars = passage_chars
        self.evidence_chars = evidence_chars
        self.concurrency = concurrency
        self._fetcher = fetcher or SafeFetcher(
            allow_hosts=allow_hosts, max_bytes=max_bytes_per_page, max_redirects=max_redirects,
            timeout_s=fetch_timeout_s, resolver=resolver)
        self._engine_fetcher = engine_fetcher or self._fetcher
        self._clock = clock or SystemClock()
        self._engine_limits = engine_limits or HostLimits(rate=0, burst=1)
        self._page_limits = page_limits or HostLimits(rate=0, burst=1)

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        deadline = time.monotonic() + min(timeout_s, self.total_timeout_s)
        try:
            return await self._collect(plan, deadline)
        except Exception as exc:  # the port promises attempt records, never exceptions
            return AdapterResult(attempts=[AdapterAttempt(
                adapter=ADAPTER, outcome="error", error=f"{type(exc).__name__}: {exc}")])

    async def _collect(self, plan: ExternalQueryPlan, deadline: float) -> AdapterResult:
        queries = self._queries(plan)
        if not queries:
            return AdapterResult(attempts=[AdapterAttempt(
                adapter=ADAPTER, tool="search", outcome="empty", error="plan has no query")])
        searches = await asyncio.gather(*(self._search(q, deadline) for q in queries))
        hits = _interleave_unique([found for found, _ in searches])[: self.max_pages]
        pages = await self._read_all(hits, deadline)
        items = self._evidence(plan, pages)
        return AdapterResult(items=items,
                             attempts=[call.attempt() for _, call in searches]
                             + [page.call.attempt() for page in pages])

    def _queries(self, plan: ExternalQueryPlan) -> list[str]:
        queries = [q.strip() for q in plan.search_queries if q.strip()]
        if not queries:
            fallback = plan.topic or " ".join(plan.subject_entities)
            queries = [fallback.strip()] if fallback.strip() else []
        return list(dict.fromkeys(queries))[: self.max_queries]

    async def _search(self, query: str, deadline: float) -> tuple[list[SearchHit], _Call]:
        call = _Call(tool="search", url=self.engine.search_url(query), started=time.monotonic())
        page = await self._fetch(call, deadline, self._engine_limits, self._engine_fetcher)
        if page is not None and self.engine.rate_limited(page):
            self._engine_limits.bucket(host_of(call.url)).drain()
            call.outcome = "rate_limited"
            call.error = f"the search engine's rate-limit page (HTTP {page.status})"
            return [], call
        hits = self.engine.parse(page) if page is not None else []
        if page is not None:
            call.count = len(hits)  # for a search: result links found, not evidence
            call.outcome = "ok" if hits else "empty"
        return hits, call

    async def _read_all(self, hits: Sequence[SearchHit], deadline: float) -> list[_ReadPage]:
        pages = [_ReadPage(hit=hit, call=_Call(tool="fetch", url=hit.url, started=0.0))
                 for hit in hits]
        # Bounded per plan, not per adapter: other questions in flight keep their own slots.
        slots = asyncio.Semaphore(self.concurrency)
        tasks = [asyncio.ensure_future(self._read(page, deadline, slots)) for page in pages]
        if not tasks:
            return pages
        _, pending = await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0))
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for page in pages:
            if not page.done:  # still queued or running at the deadline
                page.call.started = page.call.started or time.monotonic()
                page.call.outcome, page.call.error = "timeout", "live-search budget spent"
                page.call.finished = time.monotonic()
                page.passages = None
        return pages

    async def _read(self, page: _ReadPage, deadline: float, slots: asyncio.Semaphore) -> None:
        async with slots:
            page.call.started = time.monotonic()
            fetched = await self._fetch(page.call, deadline, self._page_limits, self._fetcher)
            if fetched is None:
                page.done = True
                return
            page.retrieved_at = self._clock.now()
            page.final_url = fetched.final_url
            try:
                # Parsing and extraction are CPU work: off the event loop, which serves others.
                page.text, page.published, passages = await asyncio.to_thread(
                    self._extract, fetched, page.hit, page.retrieved_at)
                page.passages = passages
                page.call.outcome = "ok" if passages.passages else "empty"
            except Exception as exc:  # one unreadable page must not sink the others
                page.call.outcome, page.call.error = "error", f"unreadable page: {exc!r}"
            page.call.finished = time.monotonic()
            page.done = True

    def _extract(self, fetched: FetchedPage, hit: SearchHit,
                 now: datetime) -> tuple[PageText, datetime | None, PagePassages]:
        if _is_html(fetched):
            text = read_page(fetched.text)
            published = published_at(fetched.text, text.text, now)
        else:
            text, published = PageText(title="", site_name=None, text=fetched.text), None
        if published is None and hit.published:
            published = plausible_date(hit.published, now)
        passages = read_passages(text.text, target_chars=self.passage_chars,
                                 max_chars=int(self.passage_chars * 1.3))
        return text, published, passages

    async def _fetch(self, call: _Call, deadline: float, limits: HostLimits,
                     fetcher: PageFetcher) -> FetchedPage | None:
        """The page, or None with the call marked refused/timeout/rate_limited/error."""
        host = host_of(call.url)
        try:
            if not await limits.acquire(host, deadline):
                call.outcome = "rate_limited"
                call.error = f"not sent: the pace set for {host} leaves no slot in the budget"
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchTimedOut("live-search budget spent before the fetch")
            page = await fetcher.fetch(call.url, timeout_s=remaining)
            if page.status == 429:
                limits.bucket(host).drain()
                call.outcome, call.error = "rate_limited", f"{host} answered HTTP 429"
                return None
            if page.status >= 400:
                call.outcome, call.error = "error", f"HTTP {page.status}"
                return None
            return page
        except FetchRefused as exc:
            call.outcome, call.error = "refused", exc.reason
        except FetchTimedOut as exc:
            call.outcome, call.error = "timeout", exc.reason
        except FetchError as exc:
            call.outcome, call.error = "error", exc.reason
        finally:
            call.finished = time.monotonic()
        return None

    def _evidence(self, plan: ExternalQueryPlan, pages: list[_ReadPage]) -> list[ExternalEvidence]:
        """Each page's lead and best passages against the plan; the pages whose best passage
        ranks highest first, up to the plan's limit."""
        corpus = [(number, passage) for number, page in enumerate(pages) if page.passages
                  for passage in page.passages.passages]
        ranking_terms = [*plan.search_queries, *plan.subject_entities] or [plan.topic]
        ranked: dict[int, list[tuple[float, Passage]]] = {}  # page number -> best first
        for scored in BM25([passage.text for _, passage in corpus]).rank(ranking_terms):
            number, passage = corpus[scored.index]
            ranked.setdefault(number, []).append((scored.score, passage))
        answering = sorted(ranked, key=lambda n: (-ranked[n][0][0], pages[n].hit.rank))
        items = []
        for number in answering[: plan.result_limit]:
            page = pages[number]
            assert page.passages is not None
            snippet = evidence_text(page.passages, [p for _, p in ranked[number]],
                                    max_chars=self.evidence_chars)
            page.call.count = 1
            items.append(self._item(plan, page, snippet, ranked[number][0][0]))
        return items

    def _item(self, plan: ExternalQueryPlan, page: _ReadPage, snippet: str,
              score: float) -> ExternalEvidence:
        assert page.text is not None and page.retrieved_at is not None
        url = page.final_url or page.hit.url
        return ExternalEvidence(
            source_type="url",
            source_label=page.text.site_name or bare_host(url),
            title=page.text.title or page.hit.title or url,
            target_url=url,
            snippet=snippet,
            retrieved_at=page.retrieved_at,
            freshness_score=freshness_score(page.published, plan, page.retrieved_at),
            authority_score=authority_score(url, plan.preferred_domains),
            grounded_fields=grounded_fields(plan, snippet),
            raw_metadata={"search_rank": page.hit.rank,
                          "published_at": page.published.isoformat() if page.published else None,
                          "passage_score": score},
        )

    async def aclose(self) -> None:
        """Nothing held open: each fetch opens and closes its own pinned connection pool."""


def _is_html(page: FetchedPage) -> bool:
    if page.content_type:
        return "html" in page.content_type
    return page.text.lstrip()[:1] == "<"  # servers that send no Content-Type at all


def _interleave_unique(result_lists: list[list[SearchHit]]) -> list[SearchHit]:
    """First results of every query before second ones; each page once (fragment ignored)."""
    seen: set[str] = set()
    merged: list[SearchHit] = []
    for rank in range(max((len(r) for r in result_lists), default=0)):
        for results in result_lists:
            if rank < len(results):
                key = canonical_url(results[rank].url)
                if key not in seen:
                    seen.add(key)
                    merged.append(results[rank])
    return merged
