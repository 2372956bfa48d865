"""Search, then fetch, through the gateway's own SSRF-safe fetcher: for an MCP search server
whose results are snippets and no fetch tool is configured, each top result's page is read
here, with the same guard and caps as the live search's pages, and its text becomes the hit.

A fetch tool of a third-party server (mcp-server-fetch, mcp-searxng's `web_url_read`) reads
pages on its own terms; ours refuses private and metadata addresses on every redirect.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime

from pmflow_gateway.adapters.live_search import PageFetcher
from pmflow_gateway.adapters.mcp_results import Hit, passage
from pmflow_gateway.adapters.page_text import PageText, read_page
from pmflow_gateway.adapters.published import published_at
from pmflow_gateway.adapters.ssrf import FetchError, FetchRefused, FetchTimedOut
from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.schemas import AdapterAttempt

TOOL = "gateway_fetch"
"""The attempt's tool name: the page was read by the gateway, not by the server."""


async def read_result_page(fetcher: PageFetcher, hit: Hit, *, server: str, query: str,
                           budget_s: float, now: Callable[[], datetime],
                           ) -> tuple[list[Hit], AdapterAttempt]:
    """The result's page as a hit (its text's lead and best paragraphs as the snippet), or
    no hit and an attempt that says why; never raises."""
    started = time.monotonic()

    def attempt(outcome: str, count: int = 0, error: str | None = None) -> AdapterAttempt:
        return AdapterAttempt(adapter="mcp", server=server, tool=TOOL, outcome=outcome,
                              latency_ms=round((time.monotonic() - started) * 1000, 3),
                              evidence_count=count, error=error)

    if budget_s <= 0:
        return [], attempt("timeout", error="no time left in the question budget")
    try:
        page = await fetcher.fetch(hit.url, timeout_s=budget_s)
    except FetchRefused as exc:
        return [], attempt("refused", error=exc.reason)
    except FetchTimedOut as exc:
        return [], attempt("timeout", error=exc.reason)
    except FetchError as exc:
        return [], attempt("error", error=exc.reason)
    if page.status >= 400:
        return [], attempt("rate_limited" if page.status == 429 else "error",
                           error=f"HTTP {page.status}")
    try:
        # Parsing is CPU work: off the event loop, which serves other questions.
        read = await asyncio.to_thread(_page_hit, hit, page.text, page.content_type, query,
                                       now())
    except Exception as exc:  # one unreadable page must not sink the others
        return [], attempt("error", error=f"unreadable page: {type(exc).__name__}")
    if read is None:
        return [], attempt("empty", error="no readable text")
    return [read], attempt("ok", count=1)


def _page_hit(hit: Hit, body: str, content_type: str, query: str, now: datetime) -> Hit | None:
    if "html" in content_type or (not content_type and body.lstrip()[:1] == "<"):
        text = read_page(body)
        published = published_at(body, text.text, now)
    else:
        text, published = PageText(title="", site_name=None, text=body), None
    paragraphs = [line.strip() for line in text.text.splitlines() if line.strip()]
    if not paragraphs:
        return None
    # What the search engine said of the result stays where the page says nothing better.
    return Hit(title=hit.title or text.title, url=hit.url, snippet=passage(paragraphs, query),
               published_at=hit.published_at or published,
               site=hit.site or text.site_name or bare_host(hit.url) or None, source_type="url")
