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


UNDATED_PAGE = "<html><head><title>t</title></head><body><p>text</p></body></html>"


@pytest.mark.parametrize(("text", "expected"), [
    ("Harbor Mills doubles output\nKINGSTON, Ontario, Dec. 1 (Wire) — Harbor Mills said on "
     "Tuesday it would double output.", datetime(2026, 12, 1, tzinfo=UTC)),
    ("OSLO, Nov 30 — The ferry company said it would add two routes.",
     datetime(2026, 11, 30, tzinfo=UTC)),
    ("HANOI (Wire), December 1, 2026 - Flights resumed on Tuesday.",
     datetime(2026, 12, 1, tzinfo=UTC)),
    # A dateline without a year names the latest such day that has come: last year's here.
    ("OSLO, Dec. 24 — The ferry company said it would add two routes.",
     datetime(2025, 12, 24, tzinfo=UTC)),
    ("Ferry routes\nBy Ann Lee\nUpdated: Tue., Dec. 1, 2026 6:30 a.m.\nThe company said so.",
     datetime(2026, 12, 1, 6, 30, tzinfo=UTC)),
    ("Nordic Desk | Published : 1 December 2026, 09:01 PM\nThe company said so.",
     datetime(2026, 12, 1, 21, 1, tzinfo=UTC)),
    ("- Published 30 November 2026\nThe company said so.", datetime(2026, 11, 30, tzinfo=UTC)),
])
def test_a_page_without_date_markup_takes_its_dateline_or_published_line(
        text: str, expected: datetime) -> None:
    assert published_at(UNDATED_PAGE, text, NOW) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("新华社哈尔滨12月1日电（记者 李明）哈尔滨冰雪大世界今天开园。",
     datetime(2026, 12, 1, tzinfo=BEIJING)),
    ("本报南宁2026年11月30日讯 南宁地铁5号线开通。", datetime(2026, 11, 30, tzinfo=BEIJING)),
    ("本报讯 12月1日，市统计局发布数据。", datetime(2026, 12, 1, tzinfo=BEIJING)),
    ("本报讯（记者 林岚）11月30日，地铁开通。", datetime(2026, 11, 30, tzinfo=BEIJING)),
    ("发布于 2026年12月1日\n城区部分区域明日停水。", datetime(2026, 12, 1, tzinfo=BEIJING)),
    ("更新于 2026年11月29日\n脐橙收购价每斤2.6元。", datetime(2026, 11, 29, tzinfo=BEIJING)),
    ("发布时间：2026-12-01 10:15\n限行规定如下。", datetime(2026, 12, 1, 2, 15, tzinfo=UTC)),
])
def test_a_chinese_page_takes_its_dateline_or_published_line(text: str, expected: datetime) -> None:
    assert published_at('<html lang="zh-CN"><body></body></html>', text, NOW) == expected


def test_a_related_story_or_footer_date_does_not_win_over_the_articles_own() -> None:
    text = "\n".join([
        "More news", "Port strike ends — November 20, 2026", "Harbor Mills doubles output",
        "KINGSTON, Ont., Dec. 1 (Wire) — Harbor Mills said it would double output.",
        "Related: Mill fire under control, November 25, 2026",
        "Page last updated: November 30, 2026"])
    assert published_at(UNDATED_PAGE, text, NOW) == datetime(2026, 12, 1, tzinfo=UTC)


def test_dates_deep_in_the_body_or_in_an_embedded_post_are_not_the_pages() -> None:
    post = "Masks for everyone — Ann Lee (@annlee) November 26, 2026\nThe haze stayed."
    assert published_at(UNDATED_PAGE, post, NOW) is None
    body = "\n".join(["The plant opened in 1998."] * 20 + ["It last flooded on June 3, 2024."])
    assert published_at(UNDATED_PAGE, body, NOW) is None
    assert published_at(UNDATED_PAGE, "No date anywhere. Not even a year.", NOW) is None


@pytest.mark.parametrize("text", [
    "June 9 – Tampa, FL @ Bay Amphitheatre\nJune 10 – Miami, FL",  # a tour list, not a dateline
    "Sales rose, Dec. 1 - 3 times more than forecast.",
    "OSLO, Feb. 30 — No such day.",
])
def test_what_only_looks_like_a_dateline_dates_nothing(text: str) -> None:
    assert published_at(UNDATED_PAGE, text, NOW) is None
