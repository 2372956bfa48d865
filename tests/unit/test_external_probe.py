"""The external probe in process: five metrics and no answer, the routing table read first,
and its evidence reused by the answer to the same question."""

from __future__ import annotations

from datetime import UTC, datetime

from pmflow_gateway.adapters.evidence_cache import RecentEvidence
from pmflow_gateway.contract.probe import probe_metrics
from pmflow_gateway.embedded import ask_in_process, probe_in_process
from pmflow_gateway.handlers.evidence import CACHE
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import AnswerStatus, ProbeRequested, RouteDecided
from pmflow_gateway.schemas.events import QueryProfile
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import WEATHER, FakeAdapter, evidence, fake_deps
from tests.support.builders import weather_plan

QUESTION = ROUTE_DECIDED["question"]
OFFICIAL = evidence("https://www.weather.gov.cn/guangzhou", "广州未来5天多云，气温19至26度。")
OTHER_CITY = evidence("https://tianqi.example/shenzhen", "深圳未来5天晴，气温20至28度。")


def deps(adapter: FakeAdapter, *, cache: bool = True) -> Deps:
    return fake_deps(adapters=[adapter],
                     evidence_cache=RecentEvidence(ttl_s=120) if cache else None)


def request(**changes: object) -> ProbeRequested:
    values: dict[str, object] = {
        "event_id": "probe-1", "question_id": "probe-1", "tenant_id": "acme",
        "occurred_at": datetime(2026, 12, 2, 8, 0, tzinfo=UTC), "question": QUESTION,
        "query_profile": QueryProfile(needs_freshness=True), **changes}
    return ProbeRequested.model_validate(values)


def test_the_metrics_read_what_was_found_and_what_the_verifier_kept() -> None:
    trusted = OFFICIAL.model_copy(update={"authority_score": 0.8})
    metrics = probe_metrics(weather_plan(), [WEATHER, trusted, OTHER_CITY], [WEATHER, trusted])
    assert metrics.freshness_required and metrics.external_entity_hit
    assert (metrics.trusted_domain_hit_count, metrics.answerable_page_hit_count) == (1, 2)
    assert metrics.cross_source_agreement == 1.0
    lonely = probe_metrics(weather_plan(), [OTHER_CITY], [])
    assert (lonely.answerable_page_hit_count, lonely.cross_source_agreement) == (0, 0.0)
    assert not lonely.external_entity_hit


async def test_a_probe_answers_nothing_and_its_evidence_serves_the_answer() -> None:
    adapter = FakeAdapter("mcp", items=[WEATHER])
    gateway = deps(adapter)
    completed = await probe_in_process(request(), gateway)
    assert completed.status == "probed" and completed.metrics is not None
    assert completed.metrics.answerable_page_hit_count == 1
    assert completed.metrics.external_entity_hit and completed.metrics.freshness_required
    assert len(adapter.calls) == 1
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), gateway)
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered
    assert len(adapter.calls) == 1  # one look-up for the probe and the answer
    assert [a.adapter for a in outcome.answer.attempts] == [CACHE]


async def test_without_the_cache_the_answer_looks_up_again() -> None:
    adapter = FakeAdapter("mcp", items=[WEATHER])
    gateway = deps(adapter, cache=False)
    await probe_in_process(request(), gateway)
    await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), gateway)
    assert len(adapter.calls) == 2


async def test_another_tenant_never_gets_the_probe_s_evidence() -> None:
    adapter = FakeAdapter("mcp", items=[WEATHER])
    gateway = deps(adapter)
    await probe_in_process(request(), gateway)
    await ask_in_process(RouteDecided.model_validate({**ROUTE_DECIDED, "tenant_id": "globex"}),
                         gateway)
    assert len(adapter.calls) == 2


async def test_a_private_or_internal_only_probe_sends_nothing_out() -> None:
    adapter = FakeAdapter("mcp", items=[WEATHER])
    gateway = deps(adapter)
    private = await probe_in_process(request(query_profile=QueryProfile(
        needs_private_context=True)), gateway)
    internal = await probe_in_process(request(effective_source_policy="internal_only"), gateway)
    unknown = await probe_in_process(request(effective_source_policy="whatever"), gateway)
    assert [p.status for p in (private, internal, unknown)] == ["refused"] * 3
    assert all(p.metrics is None and p.reason for p in (private, internal, unknown))
    assert adapter.calls == []
