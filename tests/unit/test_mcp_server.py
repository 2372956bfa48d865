"""Our corpus MCP server, driven in-process through the SDK's own client (no mocks)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client

from pmflow_gateway.contract.terms import terms
from pmflow_gateway.mcp_server.corpus import load_pages, search_pages, served_at
from pmflow_gateway.mcp_server.server import build_server


async def search(query: str, limit: int = 3, **server: Any) -> list[dict[str, Any]]:
    async with Client(build_server(**server)) as client:
        result = await client.call_tool("search", {"query": query, "limit": limit})
    assert not result.is_error and result.structured_content is not None
    hits: list[dict[str, Any]] = result.structured_content["results"]
    return hits


def test_terms_are_words_and_chinese_bigrams() -> None:
    assert terms("广州天气 Tokyo's weather, 5-day") == {
        "广州", "州天", "天气", "tokyo's", "weather", "5", "day"}
    assert terms("雨") == {"雨"}


def test_corpus_covers_the_kinds_in_both_languages() -> None:
    pages = load_pages()
    assert 30 <= len(pages) <= 40
    assert len({p.url for p in pages}) == len(pages)
    assert all(urlsplit(p.url).scheme == "https" for p in pages)
    assert {p.lang for p in pages} == {"zh", "en"}
    assert sum(p.age_hours > 24 * 90 for p in pages) >= 3  # deliberately stale pages
    for city in ("广州", "北京", "上海", "Tokyo", "London"):
        assert any(city in p.title and ("天气" in p.title or "weather" in p.title.lower())
                   for p in pages), city


def test_ranking_prefers_the_rare_term() -> None:
    pages = load_pages()
    assert all("广州" in p.title for p in search_pages(pages, "广州 天气", 2))
    assert all("Tokyo" in p.title for p in search_pages(pages, "Tokyo weather forecast", 2))
    assert search_pages(pages, "zzzz qqqq", 5) == []


async def test_search_returns_structured_results_dated_relative_to_now() -> None:
    before = datetime.now(UTC)
    hits = await search("London weather forecast", limit=2)
    assert len(hits) == 2
    assert set(hits[0]) == {"title", "url", "snippet", "published_at", "site"}
    assert "London" in hits[0]["title"]
    published = datetime.fromisoformat(hits[0]["published_at"])
    age_hours = next(p.age_hours for p in load_pages() if p.url == hits[0]["url"])
    expected = before - timedelta(hours=age_hours)
    assert abs((published - expected).total_seconds()) < 60


async def test_fetch_returns_page_text_and_unknown_pages_are_tool_errors() -> None:
    async with Client(build_server()) as client:
        # a trailing slash still finds the page
        url = "https://metoffice.example/weather/forecast/gcpvj0v07/"
        page = await client.call_tool("fetch", {"url": url})
        missing = await client.call_tool("fetch", {"url": "https://nowhere.example/"})
    text = page.content[0].text  # type: ignore[union-attr]
    assert text.startswith("# London weather forecast") and "Published: " in text
    assert missing.is_error


async def test_delay_applies_to_every_call() -> None:
    started = time.monotonic()
    await search("Tokyo", delay_ms=200)
    assert time.monotonic() - started >= 0.2


def test_a_corpus_written_for_one_day_is_served_on_that_day(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({"served_at": "2026-12-06T12:00:00+00:00", "pages": [
        {"url": "https://a.example/1", "site": "A", "lang": "en", "title": "Monday",
         "body": "Rain on Monday 7 December.", "age_hours": 3},
        {"url": "https://a.example/2", "site": "A", "lang": "en", "title": "Undated",
         "body": "No date."}]}), "utf-8")
    at = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    assert served_at(corpus) == at
    dated, undated = load_pages(corpus)
    # Whenever it is served, the page is three hours older than that day's noon.
    assert dated.published_at(datetime.now(UTC)) == at - timedelta(hours=3)
    assert undated.published_at(at) is None
    # Ranked as before: by its age.
    assert dated.age_hours == 3
    corpus.write_text(json.dumps({"served_at": "2026-12-06T12:00:00", "pages": []}), "utf-8")
    with pytest.raises(ValueError, match="UTC offset"):
        served_at(corpus)
