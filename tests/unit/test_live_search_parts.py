"""The pieces of the live-search fallback, each on its own: dates, visible text, passages,
ranking, search-result parsing, grounded fields."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pmflow_gateway.adapters.page_text import read_page
from pmflow_gateway.adapters.passages import BM25, chunk_text, tokens
from pmflow_gateway.adapters.published import BEIJING, first_visible_date, published_at
from pmflow_gateway.adapters.search_engines import DuckDuckGoHtml, SearxngJson
from pmflow_gateway.adapters.ssrf import FetchedPage
from pmflow_gateway.contract.text import split_sentences

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("head", "expected"),
    [('<meta property="article:published_time" content="2026-12-01T10:00:00Z">',
      datetime(2026, 12, 1, 10, tzinfo=UTC)),
     ('<meta property="og:updated_time" content="2026-11-30T09:30:00+08:00">',
      datetime(2026, 11, 30, 1, 30, tzinfo=UTC)),
     ('<meta name="pubdate" content="20261129">', datetime(2026, 11, 29, tzinfo=UTC)),
     ('<meta name="date" content="2026/11/28 08:00">', datetime(2026, 11, 28, 8, tzinfo=UTC)),
     ('<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", '
      '"dateModified": "2026-11-27T00:00:00Z"}]}</script>', datetime(2026, 11, 27, tzinfo=UTC)),
     ('<script type="application/ld+json">[{"datePublished": "2026-11-26"}]</script>',
      datetime(2026, 11, 26, tzinfo=UTC))],
)
def test_live_search_published_time_from_markup(head: str, expected: datetime) -> None:
    page = f"<html><head>{head}</head><body><p>正文 2020-01-01</p></body></html>"
    assert published_at(page, "正文 2020-01-01", NOW) == expected


def test_live_search_published_time_prefers_meta_then_json_ld_then_time_element() -> None:
    page = ('<html><head><script type="application/ld+json">{"datePublished": "2026-11-20"}'
            '</script></head><body><time datetime="2026-11-25T00:00:00Z">周三</time></body></html>')
    assert published_at(page, "", NOW) == datetime(2026, 11, 20, tzinfo=UTC)
    only_time = '<html><body><time datetime="2026-11-25T00:00:00Z">周三</time></body></html>'
    assert published_at(only_time, "", NOW) == datetime(2026, 11, 25, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("发布时间：2026年12月1日 09:00", datetime(2026, 12, 1, tzinfo=UTC)),
     ("Updated 2026-11-30 by staff", datetime(2026, 11, 30, tzinfo=UTC)),
     ("Posted December 1, 2026", datetime(2026, 12, 1, tzinfo=UTC)),
     ("Posted 1 Dec 2026", datetime(2026, 12, 1, tzinfo=UTC)),
     ("预报：2026-12-05 晴；发布 2026-12-01", datetime(2026, 12, 1, tzinfo=UTC)),
     ("version 2026-13-45 only", None),
     ("no date here", None)],
)
def test_live_search_published_time_from_visible_text(text: str, expected: datetime | None) -> None:
    assert first_visible_date(text, NOW) == expected


def test_live_search_future_markup_dates_are_not_publication_times() -> None:
    page = '<html><head><meta name="date" content="2027-01-01"></head><body></body></html>'
    assert published_at(page, "2026年11月11日", NOW) == datetime(2026, 11, 11, tzinfo=BEIJING)


def test_live_search_page_text_strips_every_kind_of_invisible_text() -> None:
    page = """<html><head><title>T</title>
    <style>.ghost{display: none} #gone{visibility:hidden}</style></head><body><p>可见的正文。</p>
    <div style="display: none">HIDDEN-1</div><span style="visibility:hidden">HIDDEN-2</span>
    <p hidden>HIDDEN-3</p><p aria-hidden="true">HIDDEN-4</p><p class="sr-only">HIDDEN-5</p>
    <p style="font-size:0">HIDDEN-6</p><p class="ghost">HIDDEN-7</p><p id="gone">HIDDEN-8</p>
    <input type="hidden" value="HIDDEN-9"><script>var x = "HIDDEN-10"</script>
    <!-- HIDDEN-11 --><p style="opacity: 0;">HIDDEN-12</p><template><p>HIDDEN-13</p></template>
    <p>看\u200b不\u200c见\u200d的\u2060字\ufeff符</p><p>tail kept</p></body></html>"""
    text = read_page(page).text
    assert "HIDDEN" not in text
    assert "可见的正文" in text
    assert "看不见的字符" in text
    assert "tail kept" in text


def test_live_search_page_text_title_and_site_name() -> None:
    page = read_page('<html><head><title>标题</title><meta property="og:site_name" '
                     'content="站点"></head><body><p>x</p></body></html>')
    assert (page.title, page.site_name) == ("标题", "站点")
    assert read_page("").text == ""


def test_live_search_chunks_keep_whole_sentences_in_chinese_and_english() -> None:
    text = ("今天广州天气晴朗。" * 40) + "\n" + ("The weather is fine today. " * 30)
    chunks = chunk_text(text, target_chars=500, max_chars=600)
    assert all(len(c) <= 600 for c in chunks)
    assert all(c.endswith(("。", ".")) for c in chunks)
    assert all(len(c) >= 400 for c in chunks[:-1])
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "").replace("\n", "")


def test_live_search_chunks_keep_a_heading_apart_from_the_next_sentence() -> None:
    chunks = chunk_text("广州未来5天天气预报\n广州未来5天天气：今天晴，15至24℃。\nForecast\nSunny.")
    assert chunks == ["广州未来5天天气预报\n广州未来5天天气：今天晴，15至24℃。Forecast\nSunny."]


def test_live_search_chunks_cut_an_overlong_sentence() -> None:
    chunks = chunk_text("长" * 1500, target_chars=500, max_chars=600)
    assert [len(c) for c in chunks] == [600, 600, 300]


def test_live_search_sentence_split_and_tokens() -> None:
    assert split_sentences("第一句。第二句！Third one. Fourth?") == [
        "第一句。", "第二句！", "Third one.", "Fourth?"]
    assert tokens("广州天气 GPT-4o Release") == ["广州", "州天", "天气", "gpt", "4o", "release"]
    assert tokens("晴") == ["晴"]


def test_live_search_bm25_prefers_the_passage_about_the_query() -> None:
    passages = ["深圳美食推荐，早茶和海鲜。", "广州未来5天天气预报：晴转多云，周末小雨。",
                "广州旅游攻略：景点和美食。", "The Guangzhou weather forecast: sunny."]
    ranked = BM25(passages).rank(["广州 未来5天天气", "广州"])
    assert ranked[0].index == 1
    assert 0 not in [r.index for r in ranked]  # shares no term with the query
    assert BM25(passages).rank(["guangzhou weather"])[0].index == 3
    assert BM25([]).rank(["x"]) == []


def page_of(text: str, url: str = "https://html.duckduckgo.com/html/?q=x") -> FetchedPage:
    return FetchedPage(url=url, final_url=url, status=200, content_type="text/html", text=text)


def test_live_search_duckduckgo_results_unwrap_uddg_and_skip_ads() -> None:
    html = """<div class="result result--ad"><a class="result__a"
      href="https://duckduckgo.com/y.js?ad_provider=b">Ad</a></div>
    <div class="result results_links web-result"><h2><a class="result__a" rel="nofollow"
      href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.weather.com.cn%2Fgz.shtml&amp;rut=1">
      广州天气</a></h2><a class="result__snippet">未来7天</a></div>
    <div class="result"><a class="result__a" href="https://example.org/direct">Direct</a></div>
    <div class="result"><a class="result__a" href="javascript:alert(1)">JS</a></div>"""
    hits = DuckDuckGoHtml().parse(page_of(html))
    assert [(h.url, h.title, h.rank) for h in hits] == [
        ("https://www.weather.com.cn/gz.shtml", "广州天气", 1),
        ("https://example.org/direct", "Direct", 2)]
    assert hits[0].snippet == "未来7天"


def test_live_search_searxng_results_and_urls() -> None:
    engine = SearxngJson("http://searx.local:8888/")
    assert engine.search_url("广州 天气") == ("http://searx.local:8888/search?q=%E5%B9%BF%E5%B7%9E"
                                             "+%E5%A4%A9%E6%B0%94&format=json")
    body = ('{"results": [{"url": "https://a.example/x", "title": "A", "content": "c", '
            '"publishedDate": "2026-12-01T00:00:00"}, {"url": "ftp://b.example/"}, "junk"]}')
    hits = engine.parse(page_of(body))
    assert [(h.url, h.rank, h.published) for h in hits] == [
        ("https://a.example/x", 1, "2026-12-01T00:00:00")]
    assert engine.parse(page_of("not json")) == []


def test_live_search_style_rules_are_read_by_braces_and_capped() -> None:
    from pmflow_gateway.adapters.page_text import MAX_TITLE_CHARS, _style_rules

    assert _style_rules("a" * 50_000) == []  # no brace: no rule, and no retry per character
    assert _style_rules(".a{display:none} @media x { #b {opacity:0} } c{") == [
        (".a", "display:none"), (" #b ", "opacity:0")]
    page = read_page("<html><head><title>" + "x." * 3000 + "</title><style>" + "a" * 45_000
                     + "</style><style>.gone{display:none}</style></head><body>"
                     "<p>kept</p><p class='gone'>hidden</p></body></html>")
    assert len(page.title) == MAX_TITLE_CHARS
    assert "kept" in page.text and "hidden" not in page.text
