"""Parsing what MCP tools return into hits, for the shapes real servers use."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st
from mcp.types import CallToolResult, TextContent

from pmflow_gateway.adapters.mcp_results import (
    PAGE_PASSAGE_CHARS,
    date_in_text,
    hit_from_page,
    hits_from_search,
)

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


def text_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def test_structured_content_with_results_list() -> None:
    result = CallToolResult(content=[], structured_content={"results": [
        {"title": "广州天气", "url": "https://a.example/gz", "snippet": "多云",
         "published_at": "2026-12-02T06:00:00+00:00", "site": "A"},
        {"title": "no url"},
        {"title": "ftp", "url": "ftp://a.example/x"}]})
    [hit] = hits_from_search(result, now=NOW)
    assert (hit.title, hit.url, hit.snippet, hit.site) == (
        "广州天气", "https://a.example/gz", "多云", "A")
    assert hit.published_at == NOW - timedelta(hours=2)
    assert hit.source_type == "mcp_search"


def test_sdk_wrapped_list_and_json_text_with_other_key_names() -> None:
    wrapped = CallToolResult(content=[], structured_content={"result": [
        {"name": "Doc", "link": "https://b.example/doc", "description": "about"}]})
    assert hits_from_search(wrapped, now=NOW)[0].url == "https://b.example/doc"
    learn = text_result(json.dumps([{"title": "Azure Functions", "content": "Run code",
                                     "contentUrl": "https://learn.microsoft.com/azure/functions"}]))
    [hit] = hits_from_search(learn, now=NOW)
    assert hit.url == "https://learn.microsoft.com/azure/functions"
    assert hit.snippet == "Run code"
    assert hit.published_at is None


def test_plain_text_numbered_results_like_duckduckgo_mcp_server() -> None:
    text = """Found 2 search results:

1. Tokyo Weather Forecast
   URL: https://weather.example/tokyo
   Summary: Sunny, high 14C.

2. London weather
   URL: https://weather.example/london
   Summary: Light rain, updated 2026-12-02T05:00:00Z.
"""
    hits = hits_from_search(text_result(text), now=NOW)
    assert [h.url for h in hits] == ["https://weather.example/tokyo", "https://weather.example/london"]
    assert hits[0].title == "Tokyo Weather Forecast"
    assert "Sunny" in hits[0].snippet
    assert hits[1].published_at == NOW - timedelta(hours=3)


def test_text_without_urls_gives_nothing() -> None:
    assert hits_from_search(text_result("no links at all {not json"), now=NOW) == []
    assert hits_from_search(CallToolResult(content=[], structured_content={"x": 1}), now=NOW) == []


def test_future_and_unparseable_dates_count_as_unknown() -> None:
    result = CallToolResult(content=[], structured_content={"results": [
        {"title": "t", "url": "https://a.example/1", "published_at": "2027-01-01T00:00:00Z"},
        {"title": "t", "url": "https://a.example/2", "date": "yesterday"},
        {"title": "t", "url": "https://a.example/3", "date": "2026-12-01"}]})
    dates = [h.published_at for h in hits_from_search(result, now=NOW)]
    assert dates == [None, None, datetime(2026, 12, 1, tzinfo=UTC)]


def test_epoch_dates_and_absurd_ones() -> None:
    result = CallToolResult(content=[], structured_content={"results": [
        {"url": "https://a.example/1", "published_at": NOW.timestamp() - 3600},
        {"url": "https://a.example/2", "published_at": 10**20},
        {"url": "https://a.example/3", "published_at": -62135596801}]})
    dates = [h.published_at for h in hits_from_search(result, now=NOW)]
    assert dates == [NOW - timedelta(hours=1), None, None]


def test_fetched_page_gives_title_date_lead_and_best_paragraph() -> None:
    page = text_result("Contents of https://site.example/gz:\n# 广州未来5天天气预报\n\n"
                       "发布时间：2026-12-02T05:00:00Z\n\n"
                       "本站提供全国各地的天气信息服务与生活指数。\n\n"
                       "广州未来5天天气：明天阵雨转多云，21~27℃，后天雷阵雨。\n")
    hit = hit_from_page("https://site.example/gz", page, query="广州 未来5天 天气", now=NOW)
    assert hit is not None
    assert hit.title == "广州未来5天天气预报"
    assert hit.published_at == NOW - timedelta(hours=3)
    # The lead, then the paragraph that matches the query, one a line; the date line is the
    # page's metadata, not its text.
    assert hit.snippet.split("\n") == ["本站提供全国各地的天气信息服务与生活指数。",
                                        "广州未来5天天气：明天阵雨转多云，21~27℃，后天雷阵雨。"]
    assert hit.source_type == "url"


def test_a_long_page_gives_its_lead_and_its_best_paragraphs_within_the_bound() -> None:
    filler = [f"Paragraph {i} says nothing about the question at hand, only filler." * 3
              for i in range(40)]
    lead = "Lead: the council approved the new bridge on Tuesday."
    answer = "The bridge will cost 48 million euros and open in 2029."
    page = text_result("\n\n".join(["# Bridge", lead, *filler[:20], answer, *filler[20:]]))
    hit = hit_from_page("https://site.example/b", page, query="bridge cost euros", now=NOW)
    assert hit is not None
    lines = hit.snippet.split("\n")
    assert lines[0] == lead
    assert answer in lines
    assert len(hit.snippet) <= PAGE_PASSAGE_CHARS


def test_unlabelled_dates_only_count_on_pages() -> None:
    text = "Forecast issued 2026-12-02 06:00 for the week"
    assert date_in_text(text, NOW) is None
    assert date_in_text(text, NOW, labelled_only=False) == NOW - timedelta(hours=2)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
    | st.sampled_from(["https://ok.example/a", "ftp://x", "javascript:alert(1)", "2026-12-01"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["url", "link", "title", "snippet", "results", "result",
                                       "published_at", "site", "items", "x"]), inner, max_size=5),
    max_leaves=20)


@given(structured=st.dictionaries(st.sampled_from(["results", "result", "url", "data", "x"]),
                                  json_values, max_size=3),
       text=st.text(max_size=200))
def test_any_tool_output_gives_only_http_hits_and_never_raises(
        structured: dict[str, object], text: str) -> None:
    result = CallToolResult(content=[TextContent(type="text", text=text)],
                            structured_content=structured or None)
    for hit in hits_from_search(result, now=NOW):
        assert hit.url.startswith(("http://", "https://"))
        assert hit.published_at is None or hit.published_at <= NOW + timedelta(minutes=5)


def test_an_undated_hit_takes_the_dateline_or_published_line_of_its_snippet() -> None:
    snippets = ["Updated: December 1, 2026\nMarlow Bridge will reopen at 6am tomorrow.",
                "KINGSTON, Ont., December 1, 2026 - A tentative deal was reached.",
                "发布于 2026年12月1日\n因供水管网改造施工，部分区域明日停水。",
                "Dec 1, 2026 — The ferry company said it would add two routes.",
                "The bridge will reopen at 6am tomorrow."]
    result = CallToolResult(content=[], structured_content={"results": [
        {"title": "t", "url": f"https://a.example/{n}", "snippet": s, "published_at": None}
        for n, s in enumerate(snippets)]})
    dates = [h.published_at for h in hits_from_search(result, now=NOW)]
    beijing = timezone(timedelta(hours=8))
    assert dates == [datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC),
                     datetime(2026, 12, 1, tzinfo=beijing), datetime(2026, 12, 1, tzinfo=UTC),
                     None]
