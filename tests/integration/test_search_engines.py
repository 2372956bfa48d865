"""The live search's engines as a deployment configures them: a SearXNG instance on this
machine's loopback address (where one runs it), trusted because it is the configured endpoint
and for the engine's requests only; the Brave Search API with its key; `ask` and `doctor`
against them as a user runs them.

The engine plays SearXNG's (or Brave's) JSON API on 127.0.0.1, with no allow-list entry. The
pages its results link to are a second local site; a page on a local address is reached only
through the allow-list (tests only), which names that site and never the engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.bootstrap import build_adapters
from pmflow_gateway.ops.doctor_sources import check_engine
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind
from pmflow_gateway.settings import Settings
from tests.support.pages import ANSWER_PAGE, HTML, fresh
from tests.support.web_site import LocalSite

QUESTION = "帮我看看未来 5 天的广州天气如何"
PLAN = ExternalQueryPlan(
    query_kind=QueryKind.weather, freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气"], result_limit=3)
JSON = {"Content-Type": "application/json"}
KEY = "brave-key-0123456789abcdef"


@pytest.fixture
def pages() -> Iterator[LocalSite]:
    with LocalSite({"/weather/guangzhou": (200, HTML, fresh(ANSWER_PAGE))}) as site:
        yield site


@pytest.fixture
def engine(pages: LocalSite) -> Iterator[LocalSite]:
    """SearXNG's JSON API on 127.0.0.1: the forecast page, then a page on the engine's own
    address, which page fetches must still refuse."""
    with LocalSite() as site:
        results = [{"url": pages.url("/weather/guangzhou", host="localhost"),
                    "title": "广州天气", "content": "广州未来5天"},
                   {"url": site.url("/private"), "title": "广州天气 内部", "content": ""}]
        site.routes["/search"] = (200, JSON, json.dumps({"results": results}))
        site.routes["/private"] = (200, HTML, "<p>广州 天气 internal</p>")
        yield site


def settings(engine: LocalSite, pages: LocalSite, **more: object) -> Settings:
    return Settings.model_validate({
        "live_search_engine": "searxng", "live_search_endpoint": engine.url(""),
        "fetch_allow_hosts": [f"localhost:{pages.port}"], **more})


def live_search(configured: Settings) -> LiveSearchAdapter:
    [adapter] = build_adapters(configured)
    assert isinstance(adapter, LiveSearchAdapter)
    return adapter


async def test_searxng_on_loopback_is_asked_without_an_allow_list_entry(
        engine: LocalSite, pages: LocalSite) -> None:
    result = await live_search(settings(engine, pages)).collect(PLAN, timeout_s=10)
    outcomes = [(a.tool, a.server, a.outcome) for a in result.attempts]
    assert ("search", "127.0.0.1", "ok") in outcomes
    [item] = result.items
    assert item.target_url == pages.url("/weather/guangzhou", host="localhost")
    assert "12月3日晴" in item.snippet
    # Trusting the engine opened nothing else: its own address is refused as a page.
    private = next(a for a in result.attempts if a.tool == "fetch" and a.server == "127.0.0.1")
    assert private.outcome == "refused" and "loopback" in (private.error or "")
    assert [r.path.split("?")[0] for r in engine.requests] == ["/search"]


async def test_searxng_accepts_its_search_url_and_sends_json_requests(
        engine: LocalSite, pages: LocalSite) -> None:
    configured = settings(engine, pages, live_search_endpoint=engine.url("/search"))
    result = await live_search(configured).collect(PLAN, timeout_s=10)
    assert len(result.items) == 1
    [request] = engine.requests
    assert request.path.startswith("/search?q=") and "format=json" in request.path


async def test_a_redirect_from_the_engine_is_checked_like_any_page(
        engine: LocalSite, pages: LocalSite) -> None:
    elsewhere = pages.url("/weather/guangzhou", host="127.0.0.1")  # not allow-listed
    engine.routes["/search"] = (302, {"Location": elsewhere}, "")
    result = await live_search(settings(engine, pages)).collect(PLAN, timeout_s=10)
    [search] = [a for a in result.attempts if a.tool == "search"]
    assert search.outcome == "refused" and "loopback" in (search.error or "")
    assert pages.requests == []


async def test_brave_search_api_gets_its_key_and_no_page_does(pages: LocalSite) -> None:
    body = {"web": {"results": [{
        "url": pages.url("/weather/guangzhou", host="localhost"),
        "title": "<strong>广州</strong>天气", "description": "广州<strong>未来5天</strong>",
        "page_age": "2026-12-02T06:00:00"}]}}
    with LocalSite({"/res/v1/web/search": (200, JSON, json.dumps(body))}) as api:
        configured = Settings.model_validate({
            "live_search_engine": "brave", "live_search_api_key": KEY,
            "live_search_endpoint": api.url("/res/v1/web/search"),
            "fetch_allow_hosts": [f"localhost:{pages.port}"]})
        assert KEY not in repr(configured)
        result = await live_search(configured).collect(PLAN, timeout_s=10)
    [request] = api.requests
    assert request.headers["x-subscription-token"] == KEY
    assert "count=10" in request.path
    assert [item.target_url for item in result.items] == [
        pages.url("/weather/guangzhou", host="localhost")]
    assert all("x-subscription-token" not in r.headers for r in pages.requests)
    assert all(KEY not in (a.error or "") for a in result.attempts)


def gateway(*args: str, data_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    environment.update({"PMFLOW_DATA_DIR": str(data_dir), **env})
    return subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", *args], env=environment,
                          capture_output=True, text=True, timeout=120)


def test_ask_answers_from_the_pages_a_loopback_searxng_found(
        engine: LocalSite, pages: LocalSite, tmp_path: Path) -> None:
    done = gateway("ask", QUESTION, "--json", data_dir=tmp_path, env={
        "PMFLOW_LIVE_SEARCH_ENGINE": "searxng",
        "PMFLOW_LIVE_SEARCH_ENDPOINT": engine.url(""),
        "PMFLOW_FETCH_ALLOW_HOSTS": f"localhost:{pages.port}"})  # the pages' site only
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)
    answer = events["answer_ready"]
    assert answer["status"] == "answered", answer.get("reason")
    assert "12月3日晴" in answer["answer"]
    assert [s["url"] for s in answer["sources_used"]] == [
        pages.url("/weather/guangzhou", host="localhost")]


async def test_doctor_names_an_unreachable_engine_and_a_searxng_without_json(
        engine: LocalSite, pages: LocalSite) -> None:
    healthy = await check_engine(settings(engine, pages), timeout_s=5)
    assert healthy.check.ok and healthy.results == 2, healthy
    down = await check_engine(Settings(live_search_engine="searxng",
                                       live_search_endpoint="http://127.0.0.1:1"), timeout_s=5)
    assert not down.check.ok and down.check.name == "search.searxng"
    assert "http://127.0.0.1:1 unreachable" in down.check.detail
    engine.routes["/search"] = (403, {"Content-Type": "text/html"}, "Forbidden")
    no_json = await check_engine(settings(engine, pages), timeout_s=5)
    assert not no_json.check.ok and "JSON output is off" in no_json.check.detail
    assert "search.formats" in (no_json.check.fix or "")


def test_doctor_exits_non_zero_naming_the_unreachable_engine(tmp_path: Path) -> None:
    done = gateway("doctor", "--timeout", "2", data_dir=tmp_path, env={
        "PMFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:1",
        "PMFLOW_LIVE_SEARCH_ENGINE": "searxng",
        "PMFLOW_LIVE_SEARCH_ENDPOINT": "http://127.0.0.1:1"})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert any(line.startswith("FAIL search.searxng: http://127.0.0.1:1 unreachable")
               for line in lines), done.stdout
    assert any(line.startswith("FAIL search: no source returned results") for line in lines)
