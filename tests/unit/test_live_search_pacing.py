"""Live search under load: requests paced per engine and per host across questions, and an
engine's rate-limit answer reported as `rate_limited`, never as "no results"."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import httpx

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.rate_limit import HostLimits, TokenBucket
from pmflow_gateway.adapters.search_engines import DuckDuckGoHtml, SearxngJson
from pmflow_gateway.adapters.ssrf import FetchedPage
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind
from tests.fakes import FixedClock

PLAN = ExternalQueryPlan(query_kind=QueryKind.weather, topic="广州天气",
                         search_queries=["广州 天气", "广州 天气预报"], result_limit=3)
CHALLENGE = "<html><body><div class='anomaly-modal'>Unfortunately, bots use DuckDuckGo too.</div>"


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_bucket_spends_its_burst_then_paces_at_its_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=2.0, burst=3, now=clock)
    far = clock.t + 60
    assert [bucket.reserve(far) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve(far) == 0.5  # one token every half second
    assert bucket.reserve(far) == 1.0  # queued behind the one before
    clock.t += 10  # a quiet spell refills up to the burst, no more
    assert [bucket.reserve(far) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve(far) == 0.5


def test_a_request_that_cannot_go_before_the_deadline_takes_no_token() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=1.0, burst=1, now=clock)
    assert bucket.reserve(clock.t + 5) == 0.0
    assert bucket.reserve(clock.t + 0.5) is None  # its token would come after 1 s
    assert bucket.reserve(clock.t + 5) == 1.0  # the refusal above took nothing


def test_rate_zero_never_waits_and_hosts_have_their_own_buckets() -> None:
    clock = FakeClock()
    assert all(TokenBucket(rate=0, burst=1, now=clock).reserve(clock.t) == 0.0
               for _ in range(100))
    limits = HostLimits(rate=1.0, burst=1, now=clock)
    assert limits.bucket("a.example").reserve(clock.t) == 0.0
    assert limits.bucket("a.example").reserve(clock.t) is None
    assert limits.bucket("b.example").reserve(clock.t) == 0.0
    assert limits.bucket("a.example") is limits.bucket("a.example")


def test_an_overloaded_answer_drains_the_saved_up_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=1.0, burst=4, now=clock)
    bucket.drain()
    assert bucket.reserve(clock.t + 0.5) is None
    assert bucket.reserve(clock.t + 5) == 1.0


class MockFetcher:
    """Fetches through httpx's MockTransport; counts the requests per path."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requested: list[str] = []

        def counting(request: httpx.Request) -> httpx.Response:
            self.requested.append(request.url.path)
            return handler(request)

        self._transport = httpx.MockTransport(counting)

    async def fetch(self, url: str, *, timeout_s: float | None = None) -> FetchedPage:
        async with httpx.AsyncClient(transport=self._transport) as client:
            response = await client.get(url)
        return FetchedPage(url=url, final_url=str(response.url), status=response.status_code,
                           content_type=response.headers.get("content-type", "text/html"),
                           text=response.text, headers=dict(response.headers), truncated=False)


def _adapter(fetcher: MockFetcher, engine: object, **limits: HostLimits) -> LiveSearchAdapter:
    return LiveSearchAdapter(engine=engine, fetcher=fetcher, clock=FixedClock(),  # type: ignore[arg-type]
                             **limits)  # type: ignore[arg-type]


async def test_duckduckgos_202_challenge_is_rate_limited_not_empty() -> None:
    fetcher = MockFetcher(lambda request: httpx.Response(202, html=CHALLENGE))
    result = await _adapter(fetcher, DuckDuckGoHtml("https://html.duckduckgo.com/html/")).collect(
        PLAN, timeout_s=5)
    assert result.items == []
    assert [(a.tool, a.outcome) for a in result.attempts] == [("search", "rate_limited")] * 2
    assert all("202" in (a.error or "") for a in result.attempts)


async def test_a_429_from_any_host_is_rate_limited() -> None:
    page = "https://site.example/weather"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/search":
            return httpx.Response(200, json={"results": [{"url": page, "title": "t"}]})
        return httpx.Response(429, text="slow down")

    result = await _adapter(MockFetcher(handler), SearxngJson("https://searx.example")).collect(
        PLAN, timeout_s=5)
    fetches = [a for a in result.attempts if a.tool == "fetch"]
    assert [(a.outcome, a.server) for a in fetches] == [("rate_limited", "site.example")]


async def test_the_engine_pace_holds_across_questions_and_the_rest_is_not_sent() -> None:
    results = "".join(
        f'<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg='
        f'{quote("https://site.example/" + str(n), safe="")}">r{n}</a></div>' for n in range(2))
    fetcher = MockFetcher(lambda request: httpx.Response(
        200, html=results if request.url.path == "/html/" else "<p>广州 天气 晴</p>"))
    # One search may go at once, the next only after 100 s: far beyond any question's budget.
    adapter = _adapter(fetcher, DuckDuckGoHtml("https://html.duckduckgo.com/html/"),
                       engine_limits=HostLimits(rate=0.01, burst=1))
    first = await adapter.collect(PLAN, timeout_s=2)
    second = await adapter.collect(PLAN, timeout_s=2)
    searches = [a.outcome for r in (first, second) for a in r.attempts if a.tool == "search"]
    assert sorted(searches) == ["ok", "rate_limited", "rate_limited", "rate_limited"]
    assert fetcher.requested.count("/html/") == 1  # the paced searches were never sent
    assert all((a.error or "").startswith("not sent") for a in second.attempts)


async def test_pages_of_one_host_are_paced_but_other_hosts_are_not() -> None:
    urls = ["https://busy.example/1", "https://busy.example/2", "https://calm.example/1"]

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/search":
            return httpx.Response(200, json={"results": [{"url": u, "title": u} for u in urls]})
        return httpx.Response(200, html="<p>广州 天气 晴 25 度</p>")

    fetcher = MockFetcher(handler)
    adapter = _adapter(fetcher, SearxngJson("https://searx.example"),
                       page_limits=HostLimits(rate=0.01, burst=1))
    result = await adapter.collect(PLAN.model_copy(update={"search_queries": ["广州 天气"]}),
                                   timeout_s=2)
    fetches = sorted((a.server or "", a.outcome) for a in result.attempts if a.tool == "fetch")
    assert fetches == [("busy.example", "ok"), ("busy.example", "rate_limited"),
                       ("calm.example", "ok")]
