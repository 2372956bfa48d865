"""Publication dates cannot be steered: implausible ones are ignored, the article's own date
wins over page chrome and modification dates, zone-less Chinese times are Beijing time."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from pmflow_gateway.adapters.published import BEIJING, plausible_date, published_at
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.adapters.ssrf import FetchedPage
from pmflow_gateway.handlers.answer import status_text
from pmflow_gateway.schemas import AnswerStatus

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", ["2099-01-01", "2026-12-02T09:00:00Z", 4_102_444_800,
                                   4_102_444_800_000, "1970-01-01", True, None, {"a": 1}])
def test_implausible_or_unreadable_dates_count_as_unknown(value: object) -> None:
    assert plausible_date(value, NOW) is None


def test_numeric_dates_are_epoch_seconds_or_milliseconds() -> None:
    day = datetime(2026, 12, 1, tzinfo=UTC)
    assert plausible_date(day.timestamp(), NOW) == day
    assert plausible_date(int(day.timestamp() * 1000), NOW) == day


def test_a_search_engine_numeric_published_date_is_read_not_a_crash() -> None:
    body = ('{"results": [{"url": "https://a.example/x", "title": "t", "content": "c", '
            '"publishedDate": 1764547200}, {"url": "https://b.example/y", "publishedDate": true}]}')
    page = FetchedPage(url="u", final_url="u", status=200, content_type="application/json",
                       text=body)
    hits = SearxngJson("https://searx.example").parse(page)
    assert [h.published for h in hits] == [1764547200, None]
    assert plausible_date(hits[0].published, NOW) == datetime(2025, 12, 1, tzinfo=UTC)


def test_the_portal_header_date_is_chrome_not_the_article_date() -> None:
    text = "今天是2026-12-03 星期四 首页 新闻 广州暴雨预警 2024年6月3日 广州市气象台发布暴雨预警"
    assert published_at("<html><body></body></html>", text, NOW) == \
        datetime(2024, 6, 3, tzinfo=BEIJING)


@pytest.mark.parametrize("body", [
    "<p>发布时间：2024-06-03</p><p>暴雨预警</p>",
    "<div>导航 2026-12-01</div><article><p>2024-06-03 暴雨预警</p></article>",
])
def test_the_articles_own_date_beats_the_modification_time(body: str) -> None:
    page = ('<html lang="zh-CN"><head><meta property="article:modified_time" '
            f'content="2026-12-01T10:00:00+08:00"></head><body>{body}</body></html>')
    visible = ("发布时间：2024-06-03 暴雨预警" if "发布" in body
               else "导航 2026-12-01 2024-06-03 暴雨预警")
    assert published_at(page, visible, NOW) == datetime(2024, 6, 3, tzinfo=BEIJING)


def test_a_zoneless_time_on_a_chinese_page_is_beijing_time() -> None:
    page = ('<html lang="zh-CN"><head><meta property="article:published_time" '
            'content="2026-12-02 15:30"></head><body><p>天气</p></body></html>')
    found = published_at(page, "天气", NOW)
    assert found == datetime(2026, 12, 2, 7, 30, tzinfo=UTC)  # 15:30 in Beijing
    english = page.replace('lang="zh-CN"', 'lang="en"')
    assert published_at(english, "weather", NOW) is None  # 15:30 UTC: in the future
    assert NOW - found < timedelta(hours=1)


def test_undated_evidence_is_called_undated_not_out_of_date() -> None:
    for locale, word in (("en", "undated"), ("zh-CN", "未注明日期")):
        text = status_text(AnswerStatus.freshness_guard, locale, undated=True)
        assert word in text and "out of date" not in text and "超出时效" not in text


def test_a_search_hit_whose_url_no_event_can_carry_is_dropped() -> None:
    long_url = "https://a.example/" + "x" * 3000
    body = json.dumps({"results": [{"url": long_url, "title": "t"},
                                   {"url": "https://b.example/y"}]})
    page = FetchedPage(url="u", final_url="u", status=200, content_type="application/json",
                       text=body)
    assert [h.url for h in SearxngJson("https://searx.example").parse(page)] == \
        ["https://b.example/y"]
