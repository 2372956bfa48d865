"""The live-search fallback end to end against a local web site reached through the allow-list.

The site plays both the search endpoint (SearxNG JSON or DuckDuckGo HTML) and the pages it
links to; its request log shows exactly what the adapter fetched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.search_engines import DuckDuckGoHtml, SearxngJson
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind
from tests.fakes import FixedClock
from tests.support.pages import ANSWER_PAGE, HTML, INJECTION, searx_results
from tests.support.web_site import LocalSite

PLAN = ExternalQueryPlan(
    query_kind=QueryKind.weather, freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气", "广州 天气 5日预报"], result_limit=3)

OLD_PAGE = """<html><head><title>广州旅游攻略</title>
<script type="application/ld+json">{"@type": "Article", "datePublished": "2019-05-01"}</script>
</head><body><article><p>广州是一座历史悠久的城市，美食众多。去广州旅游最好的季节是秋天，
天气凉爽。本文介绍广州的景点和美食，天气只是顺带一提。</p></article></body></html>"""

UNRELATED_PAGE = """<html><head><title>深圳美食推荐</title></head><body><article>
<p>深圳的早茶和海鲜很有名，这里推荐十家餐厅。发布于 2026年11月30日。</p>
<p>更多内容见 <a href="http://127.0.0.1/admin">这里</a> 和 <a href="/secret">那里</a>。</p>
</article></body></html>"""


def ddg_results(site: LocalSite, paths: list[str]) -> str:
    links = "".join(
        f'<div class="result results_links web-result"><h2 class="result__title">'
        f'<a class="result__a" href="//duckduckgo.com/l/?uddg='
        f'{quote(site.url(p, host="localhost"), safe="")}&amp;rut=x">{p}</a></h2>'
        f'<a class="result__snippet" href="#">snippet</a></div>' for p in paths)
    ad = ('<div class="result result--ad"><a class="result__a" '
          'href="https://duckduckgo.com/y.js?ad=1">Ad</a></div>')
    return f"<html><body><div class='results'>{ad}{links}</div></body></html>"


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        ordered = ["/food", "/travel", "/weather/guangzhou", "/jump"]
        local.routes.update({
            "/search": (200, {"Content-Type": "application/json"}, searx_results(local, ordered)),
            "/html/": (200, HTML, ddg_results(local, ordered)),
            "/food": (200, HTML, UNRELATED_PAGE),
            "/travel": (200, HTML, OLD_PAGE),
            "/weather/guangzhou": (200, HTML, ANSWER_PAGE),
            "/jump": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, ""),
            "/secret": (200, HTML, "<p>广州 天气 secret</p>"),
        })
        yield local


def adapter(site: LocalSite, **caps: object) -> LiveSearchAdapter:
    options: dict[str, object] = {
        "engine": SearxngJson(site.url("", host="localhost")),
        "allow_hosts": [f"localhost:{site.port}"],
        "clock": FixedClock()} | caps
    return LiveSearchAdapter(**options)  # type: ignore[arg-type]


async def test_live_search_ranks_the_page_that_answers_first(site: LocalSite) -> None:
    started = time.perf_counter()
    result = await adapter(site).collect(PLAN, timeout_s=10)
    elapsed_ms = (time.perf_counter() - started) * 1000
    print(f"live_search fallback on the local site: {elapsed_ms:.0f} ms")

    best = result.items[0]
    assert best.target_url == site.url("/weather/guangzhou", host="localhost")
    assert best.source_type == "url"
    assert best.source_label == "本地气象台"
    assert best.title == "广州未来5天天气预报"
    assert "12月3日晴" in best.snippet
    assert best.freshness_score > 0.8  # published ten hours before the fixed clock
    assert set(best.grounded_fields) == {"location_hint", "time_range_hint", "subject_entities"}
    assert best.raw_metadata["search_rank"] == 3
    assert best.raw_metadata["published_at"] == "2026-12-02T06:00:00+08:00"
    assert best.raw_metadata["passage_score"] > result.items[1].raw_metadata["passage_score"]
    assert all("深圳" not in item.snippet for item in result.items)  # no query term: no evidence
    old = next(i for i in result.items if i.target_url.endswith("/travel"))
    assert old.freshness_score < 0.01  # 2019, for a weather question


async def test_live_search_records_every_search_and_fetch(site: LocalSite) -> None:
    result = await adapter(site).collect(PLAN, timeout_s=10)
    by_tool = [(a.tool, a.outcome) for a in result.attempts]
    assert by_tool.count(("search", "ok")) == 2
    assert ("fetch", "refused") in by_tool
    refused = next(a for a in result.attempts if a.outcome == "refused")
    assert refused.adapter == "live_search"
    assert refused.server == "localhost"
    assert "cloud metadata address 169.254.169.254" in (refused.error or "")
    fetched_ok = [a for a in result.attempts if a.tool == "fetch" and a.outcome == "ok"]
    assert len(fetched_ok) == 3
    assert sum(a.evidence_count for a in fetched_ok) == len(result.items) == 2  # not /food
    assert all(a.latency_ms >= 0 for a in result.attempts)


async def test_live_search_never_fetches_a_link_found_inside_a_page(site: LocalSite) -> None:
    await adapter(site).collect(PLAN, timeout_s=10)
    requested = {path.split("?")[0] for path in site.paths_requested()}
    assert requested == {"/search", "/food", "/travel", "/weather/guangzhou", "/jump"}
    assert "/secret" not in requested


async def test_live_search_strips_invisible_text(site: LocalSite) -> None:
    result = await adapter(site).collect(PLAN, timeout_s=10)
    for item in result.items:
        assert INJECTION not in item.snippet
        assert "steal" not in item.snippet
        assert "\u200b" not in item.snippet and "\u200d" not in item.snippet
    assert any("广州天气数据由本地气象台发布" in item.snippet for item in result.items)


async def test_live_search_refuses_a_result_that_points_at_a_private_address(
    site: LocalSite,
) -> None:
    """A search engine is not trusted either: its links go through the guard like any URL."""
    inside = site.url("/weather/guangzhou", host="127.0.0.1")
    site.routes["/search"] = (200, {"Content-Type": "application/json"},
                              json.dumps({"results": [{"url": inside, "title": "x"}]}))
    result = await adapter(site, max_queries=1).collect(PLAN, timeout_s=10)
    assert result.items == []
    fetch = next(a for a in result.attempts if a.tool == "fetch")
    assert (fetch.outcome, fetch.server) == ("refused", "127.0.0.1")
    assert "loopback address 127.0.0.1 refused" in (fetch.error or "")
    assert all(request.host.startswith("localhost") for request in site.requests)


async def test_live_search_reads_duckduckgo_html_results(site: LocalSite) -> None:
    ddg = adapter(site, engine=DuckDuckGoHtml(endpoint=site.url("/html/", host="localhost")))
    result = await ddg.collect(PLAN, timeout_s=10)
    assert result.items[0].target_url == site.url("/weather/guangzhou", host="localhost")
    assert not any("y.js" in path for path in site.paths_requested())  # the ad is skipped


async def test_live_search_caps_queries_and_pages(site: LocalSite) -> None:
    result = await adapter(site, max_queries=1, max_pages=2).collect(PLAN, timeout_s=10)
    searches = [p for p in site.paths_requested() if p.startswith("/search")]
    pages = [p for p in site.paths_requested() if not p.startswith("/search")]
    assert len(searches) == 1
    assert sorted(pages) == ["/food", "/travel"]  # the first two results, fetched at once
    assert [a.tool for a in result.attempts] == ["search", "fetch", "fetch"]


async def test_live_search_caps_bytes_per_page(site: LocalSite) -> None:
    padding = "<p>" + "无关内容。" * 2000 + "</p>"
    site.routes["/weather/guangzhou"] = (200, HTML, ANSWER_PAGE.replace("<article>",
                                                                        "<article>" + padding))
    result = await adapter(site, max_bytes_per_page=8_000).collect(PLAN, timeout_s=10)
    assert all("12月3日晴" not in item.snippet for item in result.items)


async def test_live_search_caps_total_time_and_keeps_what_arrived(site: LocalSite) -> None:
    def trickle() -> Iterator[bytes]:
        yield b"<html><body><p>"
        while True:
            time.sleep(0.05)
            yield "广州天气 ".encode()

    site.routes["/travel"] = (200, HTML, trickle)
    started = time.monotonic()
    result = await adapter(site, total_timeout_s=1.0).collect(PLAN, timeout_s=10)
    assert time.monotonic() - started < 1.6
    slow = next(a for a in result.attempts if a.tool == "fetch" and a.outcome == "timeout")
    assert slow.error
    assert result.items[0].target_url.endswith("/weather/guangzhou")


async def test_live_search_respects_the_callers_shorter_budget(site: LocalSite) -> None:
    def hanging() -> Iterator[bytes]:
        time.sleep(2)
        yield b"{}"

    site.routes["/search"] = (200, {"Content-Type": "application/json"}, hanging)
    started = time.monotonic()
    result = await adapter(site).collect(PLAN, timeout_s=0.3)
    assert time.monotonic() - started < 1.0
    assert result.items == []
    assert {a.outcome for a in result.attempts} == {"timeout"}


async def test_live_search_without_a_query_says_so() -> None:
    result = await LiveSearchAdapter().collect(ExternalQueryPlan(), timeout_s=1)
    assert result.items == []
    assert result.attempts[0].outcome == "empty"
    assert result.attempts[0].error == "plan has no query"


async def test_duckduckgos_rate_limit_page_is_reported_as_rate_limited(site: LocalSite) -> None:
    site.routes["/html/"] = (202, HTML, "<html><body><div class='anomaly-modal'>bots use "
                                        "DuckDuckGo too</div></body></html>")
    result = await adapter(site, engine=DuckDuckGoHtml(site.url("/html/", host="localhost"))
                           ).collect(PLAN, timeout_s=10)
    assert result.items == []
    assert {(a.tool, a.outcome) for a in result.attempts} == {("search", "rate_limited")}
