"""The MCP server itself, on the mcp SDK v2 (`MCPServer`, the v1 FastMCP renamed)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from pmflow_gateway.mcp_server.corpus import Page, find_page, load_pages, search_pages

MAX_LIMIT = 20


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str
    published_at: str | None = Field(description="ISO 8601; null when the page is undated")
    site: str


class SearchResults(BaseModel):
    """A model, not a bare list, so `structuredContent` is `{"results": [...]}` without the
    SDK's `{"result": ...}` wrapping."""

    results: list[SearchHit]


def _published(page: Page, now: datetime) -> str | None:
    published = page.published_at(now)
    return None if published is None else published.isoformat()


def _hit(page: Page, now: datetime) -> SearchHit:
    return SearchHit(title=page.title, url=page.url, snippet=page.body_at(now)[:240],
                     published_at=_published(page, now), site=page.site)


def build_server(*, pages: list[Page] | None = None, delay_ms: int = 0) -> MCPServer:
    """`search` and `fetch` over the corpus; `delay_ms` adds latency to every call
    (benchmarks stand in for a real search backend's 500 ms)."""
    corpus = pages if pages is not None else load_pages()
    # WARNING: the SDK logs every request at INFO on stderr, which is the gateway's stderr
    # when it runs us over stdio.
    server = MCPServer("pmflow-corpus", version="1", log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                idempotent_hint=True, open_world_hint=False)

    async def pause() -> None:
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)

    @server.tool(description="Search the web corpus. Results carry title, url, snippet, "
                 "published_at (ISO 8601) and site.", annotations=read_only)
    async def search(
        query: Annotated[str, Field(description="What to search for, any language")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="How many results")] = 5,
    ) -> SearchResults:
        await pause()
        now = datetime.now(UTC)
        return SearchResults(results=[_hit(p, now) for p in search_pages(corpus, query, limit)])

    @server.tool(description="The text of one page of the corpus, with its publication time.",
                 annotations=read_only, structured_output=False)
    async def fetch(url: Annotated[str, Field(description="URL of a page")]) -> str:
        await pause()
        page = find_page(corpus, url)
        if page is None:
            raise ToolError(f"no such page: {url}")
        now = datetime.now(UTC)
        published = _published(page, now)
        dated = f"Published: {published}\n" if published else ""
        return f"# {page.title}\n\n{dated}Site: {page.site}\n\n{page.body_at(now)}\n"

    return server
