"""One question through every stage core in process, with fakes for the outside world."""

from __future__ import annotations

import pytest

from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.ports import Deps, Planner
from pmflow_gateway.schemas import AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.retries import Retries
from tests.fakes import WEATHER, FakeAdapter, FlakyPlanner, fake_deps


def gateway(*adapters: FakeAdapter, planner: Planner | None = None) -> Deps:
    return fake_deps(planner=planner, adapters=adapters)


async def test_answered_reply_lists_only_external_sources_of_this_execution() -> None:
    g = gateway(FakeAdapter("mcp", items=[WEATHER]))
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), g)
    assert outcome.answer is not None and outcome.reply is not None
    assert outcome.answer.status is AnswerStatus.answered
    assert outcome.reply.text.startswith("外部实时查询：")
    assert "来源摘要：" in outcome.reply.text
    assert [s.url for s in outcome.reply.sources] == [WEATHER.target_url]
    assert "Feishu" not in outcome.reply.text and "上周广州下雨" not in outcome.reply.text
    assert outcome.answer.execution_id == outcome.evidence.bundle.execution_id  # type: ignore[union-attr]


async def test_seed_bug_empty_external_result_never_falls_back_to_upstream_sources() -> None:
    g = gateway(FakeAdapter("mcp", outcome="error"), FakeAdapter("live_search"))
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), g)
    assert outcome.answer is not None and outcome.reply is not None
    assert outcome.answer.status is AnswerStatus.freshness_guard
    assert outcome.reply.sources == [] and outcome.answer.sources_used == []
    assert "Feishu" not in outcome.reply.text and "来源摘要" not in outcome.reply.text
    assert outcome.answer.verdict.dropped >= 1  # the upstream Feishu source, dropped
    assert [a.adapter for a in outcome.answer.attempts] == ["mcp", "live_search"]


async def test_fallback_runs_only_when_mcp_has_nothing() -> None:
    mcp, fallback = FakeAdapter("mcp", items=[WEATHER]), FakeAdapter("live_search", items=[WEATHER])
    await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), gateway(mcp, fallback))
    assert len(mcp.calls) == 1 and fallback.calls == []


async def test_internal_route_is_skipped() -> None:
    route = RouteDecided.model_validate({**ROUTE_DECIDED, "route_mode": "internal"})
    outcome = await ask_in_process(route, gateway(FakeAdapter("mcp", items=[WEATHER])))
    assert outcome.reply is None


@pytest.mark.parametrize("route_mode", ["external", "uncertain"])
async def test_external_and_uncertain_are_answered(route_mode: str) -> None:
    route = RouteDecided.model_validate({**ROUTE_DECIDED, "route_mode": route_mode})
    outcome = await ask_in_process(route, gateway(FakeAdapter("mcp", items=[WEATHER])))
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered


async def test_redelivered_answer_is_stored_once_with_the_same_event_ids() -> None:
    g = gateway(FakeAdapter("mcp", items=[WEATHER]))
    route = RouteDecided.model_validate(ROUTE_DECIDED)
    first = await ask_in_process(route, g)
    second = await ask_in_process(route, g)
    assert first.answer.event_id == second.answer.event_id  # type: ignore[union-attr]
    assert first.reply.event_id == second.reply.event_id  # type: ignore[union-attr]
    assert len(g.store.answers) == 1  # type: ignore[attr-defined]


async def test_an_earlier_adapter_leaves_the_fallback_part_of_the_deadline() -> None:
    budgets: list[float] = []

    class Recording(FakeAdapter):
        async def collect(self, plan, *, timeout_s):  # type: ignore[no-untyped-def]
            budgets.append(timeout_s)
            return await super().collect(plan, timeout_s=timeout_s)

    g = gateway(Recording("mcp", outcome="timeout"), Recording("live_search"))
    route = RouteDecided.model_validate({**ROUTE_DECIDED, "deadline_ms": 10_000})
    await ask_in_process(route, g)
    assert budgets == [pytest.approx(6.0), pytest.approx(10.0)]  # the fixed clock stands still


async def test_a_stage_that_keeps_failing_leaves_a_rendered_failed_answer() -> None:
    planner = FlakyPlanner(failures=10)
    g = gateway(FakeAdapter("mcp", items=[WEATHER]), planner=planner)
    route = RouteDecided.model_validate(ROUTE_DECIDED)
    outcome = await ask_in_process(route, g, retry=Retries(retries=2, backoff_s=0))
    assert planner.calls == 3  # the runner's count: the first try and two retries
    assert outcome.plan is None and outcome.evidence is None
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.failed
    assert outcome.answer.reason == "ConnectionError: planner away (call 3)"
    assert outcome.reply is not None and outcome.reply.status is AnswerStatus.failed
    assert g.store.answers[(route.tenant_id, route.question_id)] is outcome.answer  # type: ignore[attr-defined]


async def test_a_briefly_failing_stage_is_retried_and_answers() -> None:
    planner = FlakyPlanner(failures=1)
    g = gateway(FakeAdapter("mcp", items=[WEATHER]), planner=planner)
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), g,
                                   retry=Retries(retries=2, backoff_s=0))
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered
