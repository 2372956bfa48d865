"""The slow parts of a question show in its trace: each live-search request is an HTTP client
span under the evidence stage, each SQL statement a span under the memory stage's write; the
embedded `ask` chains its stages as the workers do. Real local site, real databases."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan

from pmflow_gateway import tracing
from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.adapters.ssrf import FetchRefused, SafeFetcher
from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.schemas import AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import FixedClock, fake_deps
from tests.support.pages import ANSWER_PAGE, HTML, searx_results
from tests.support.traces import session_exporter
from tests.support.web_site import LocalSite


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        local.routes.update({
            "/search": (200, {"Content-Type": "application/json"},
                        searx_results(local, ["/weather/guangzhou", "/gone"])),
            "/weather/guangzhou": (200, HTML, ANSWER_PAGE),
            "/gone": (404, HTML, "<p>not here</p>"),
            "/old": (301, {"Location": "/weather/guangzhou"}, ""),
        })
        yield local


def _trace_of(root: ReadableSpan) -> list[ReadableSpan]:
    exporter, _ = session_exporter()
    assert root.context is not None
    return [s for s in exporter.get_finished_spans()
            if s.context is not None and s.context.trace_id == root.context.trace_id]


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None
            and s.parent.span_id == parent.context.span_id]


def _tree(spans: list[ReadableSpan], node: ReadableSpan, depth: int = 0) -> list[str]:
    attrs = {k: v for k, v in (node.attributes or {}).items()
             if k in ("pmflow.stage", "url.full", "http.response.status_code", "error.type",
                      "db.statement", "db.system")}
    lines = [f"{'  ' * depth}{node.name} {attrs}"]
    for child in sorted(_children(spans, node), key=lambda s: s.start_time or 0):
        lines += _tree(spans, child, depth + 1)
    return lines


async def test_each_fetch_is_an_http_client_span_under_the_caller(site: LocalSite) -> None:
    session_exporter()
    fetcher = SafeFetcher(allow_hosts=[f"localhost:{site.port}"])
    with tracing.span("caller") as caller:
        await fetcher.fetch(site.url("/old?q=秘密&x=1", host="localhost"))
        with pytest.raises(FetchRefused):
            await fetcher.fetch(site.url("/x", host="127.0.0.1"))  # refused before any request
    spans = _trace_of(caller)  # type: ignore[arg-type]
    [root] = [s for s in spans if s.name == "caller"]
    hops = sorted(_children(spans, root), key=lambda s: s.start_time or 0)
    assert [s.name for s in hops] == ["GET", "GET"]  # the redirect, then its target
    first, second = (dict(s.attributes or {}) for s in hops)
    assert first["http.request.method"] == "GET"
    assert first["url.full"] == f"http://localhost:{site.port}/old?q=REDACTED&x=REDACTED"
    assert first["server.address"] == "localhost" and first["server.port"] == site.port
    assert first["http.response.status_code"] == 301
    assert second["url.full"] == f"http://localhost:{site.port}/weather/guangzhou"
    assert second["http.response.status_code"] == 200 and "error.type" not in second
    assert all(s.kind.name == "CLIENT" for s in hops)


async def _ask_embedded(site: LocalSite, database: tuple[str, dict[str, Any]]) -> ReadableSpan:
    """One question in process against the site and the database; its trace's root span."""
    session_exporter()
    url, options = database
    store = await SqlMemoryStore.from_url(url, clock=FixedClock(), **options)
    live = LiveSearchAdapter(engine=SearxngJson(site.url("", host="localhost")),
                             allow_hosts=[f"localhost:{site.port}"], clock=FixedClock())
    deps = fake_deps(adapters=[live], store=store)
    try:
        with tracing.span("pmflow ask") as root:
            outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), deps)
    finally:
        await deps.aclose()
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered
    return root  # type: ignore[return-value]


async def test_an_embedded_question_traces_its_fetches_and_sql_statements(
        site: LocalSite, database: tuple[str, dict[str, Any]]) -> None:
    spans = _trace_of(await _ask_embedded(site, database))
    [top] = [s for s in spans if s.name == "pmflow ask"]
    print("\n".join(_tree(spans, top)))
    stage = {str((s.attributes or {}).get("pmflow.stage")): s for s in spans
             if (s.attributes or {}).get("pmflow.stage")}
    assert set(stage) == {"plan", "evidence", "verify", "answer", "render", "memory"}
    # chained as the workers' spans are: each stage descends from the one before
    assert _children(spans, top) == [stage["plan"]]
    assert _children(spans, stage["plan"]) == [stage["evidence"]]
    assert stage["verify"] in _children(spans, stage["evidence"])
    assert stage["answer"] in _children(spans, stage["verify"])
    assert {stage["render"], stage["memory"]} <= set(_children(spans, stage["answer"]))
    fetches = [s for s in _children(spans, stage["evidence"]) if s.name == "GET"]
    fetched = {(urlsplit(str((s.attributes or {})["url.full"])).path,
                (s.attributes or {})["http.response.status_code"]) for s in fetches}
    assert fetched == {("/search", 200), ("/weather/guangzhou", 200), ("/gone", 404)}
    [missing] = [s for s in fetches if (s.attributes or {})["http.response.status_code"] == 404]
    assert (missing.attributes or {})["error.type"] == "404"
    [write] = [s for s in _children(spans, stage["memory"]) if s.name == "db write qa_records"]
    statements = [str((s.attributes or {}).get("db.statement", "")) for s in
                  _children(spans, write)]
    assert any(q.lstrip().upper().startswith("INSERT") for q in statements), statements


@pytest.mark.jaeger
@pytest.mark.parametrize("database", ["sqlite"], indirect=True)  # one backend is enough here
async def test_jaeger_shows_the_fetches_and_the_sql_of_one_question(
        site: LocalSite, database: tuple[str, dict[str, Any]], jaeger_url: str) -> None:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        pytest.skip("jaeger test: set OTEL_EXPORTER_OTLP_ENDPOINT")
    root = await _ask_embedded(site, database)
    session_exporter()[1].force_flush()
    assert root.context is not None
    trace_id = format(root.context.trace_id, "032x")
    names: set[str] = set()
    async with httpx.AsyncClient(base_url=jaeger_url) as client:
        for _ in range(100):  # spans reach Jaeger in batches
            response = await client.get(f"/api/traces/{trace_id}")
            if response.status_code == 200:
                names = {span["operationName"] for t in response.json().get("data") or []
                         for span in t["spans"]}
                if "db write qa_records" in names and any(n.startswith("INSERT") for n in names):
                    break
            await asyncio.sleep(0.2)
    assert {"pmflow ask", "GET", "db write qa_records"} <= names, sorted(names)
    assert any(n.startswith("INSERT") for n in names), sorted(names)
