"""The question's budget against a queue: the evidence stage restarts what was left of it when
it takes the question up, never past the bound; past the bound no adapter is asked and the
answer is `timed_out`, never the guard's "no reliable data"."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pmflow_gateway.contract.statuses import status_text
from pmflow_gateway.handlers.evidence import EXPIRED, collect_evidence, never_asked
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import AnswerStatus, PlanCreated, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.retries import Retries, call_stage
from pmflow_gateway.streams.stages import VERIFY
from tests.fakes import WEATHER, FakeAdapter, FixedClock, fake_deps

DEFAULTS = PlanDefaults(deadline_ms=2_000, max_wait_ms=10_000)


async def planned(clock: FixedClock, question: str = ROUTE_DECIDED["question"]) -> PlanCreated:
    route = RouteDecided.model_validate({**ROUTE_DECIDED, "question": question})
    plan = await plan_question(route, planner=RulesPlanner(), clock=clock, defaults=DEFAULTS)
    assert plan is not None
    return plan


async def test_the_plan_sets_the_budget_and_the_bound_from_when_it_was_seen() -> None:
    clock = FixedClock()
    plan = await planned(clock)
    assert plan.context.deadline_at == clock.at + timedelta(seconds=2)
    assert plan.context.expires_at == clock.at + timedelta(seconds=12)


async def test_time_spent_queued_is_not_charged_to_the_budget() -> None:
    clock = FixedClock()
    plan = await planned(clock)
    clock.advance(5)  # waited past its deadline, within its bound
    adapter = FakeAdapter("mcp", items=[WEATHER])
    evidence = await collect_evidence(plan, adapters=[adapter], clock=clock)
    assert len(adapter.calls) == 1 and evidence.bundle.items
    assert evidence.context.deadline_at == clock.at + timedelta(seconds=2)


async def test_the_restarted_budget_ends_at_the_bound() -> None:
    clock = FixedClock()
    plan = await planned(clock)
    clock.advance(11)
    evidence = await collect_evidence(plan, adapters=[FakeAdapter("mcp", items=[WEATHER])],
                                      clock=clock)
    assert evidence.context.deadline_at == plan.context.expires_at


async def test_past_the_bound_no_adapter_is_asked_and_the_answer_is_timed_out() -> None:
    clock = FixedClock()
    plan = await planned(clock)
    clock.advance(13)
    mcp, fallback = FakeAdapter("mcp", items=[WEATHER]), FakeAdapter("live_search")
    evidence = await collect_evidence(plan, adapters=[mcp, fallback], clock=clock)
    assert mcp.calls == [] and fallback.calls == []
    assert [a.outcome for a in evidence.attempts] == [EXPIRED, EXPIRED]
    assert never_asked(evidence)
    deps = fake_deps(clock=clock, adapters=[mcp, fallback], composer=FakeComposerNeverCalled())
    answer = await call_stage(VERIFY, deps, evidence, Retries())
    assert answer.status is AnswerStatus.timed_out
    assert answer.answer == status_text(AnswerStatus.timed_out, "zh-CN")
    assert answer.reason is not None and "waited 13.0 s" in answer.reason
    assert answer.sources_used == [] and answer.verdict.violations == []


async def test_a_clarify_plan_stays_clarify_however_late() -> None:
    clock = FixedClock()
    plan = await planned(clock, "帮我查一下天气")
    clock.advance(60)
    evidence = await collect_evidence(plan, adapters=[FakeAdapter("mcp")], clock=clock)
    assert evidence.attempts == [] and not never_asked(evidence)


async def test_an_adapter_that_was_asked_is_not_a_timeout() -> None:
    clock = FixedClock()
    plan = await planned(clock)
    evidence = await collect_evidence(plan, adapters=[FakeAdapter("mcp")], clock=clock)
    assert not never_asked(evidence)


class FakeComposerNeverCalled:
    name = "never"

    async def compose(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("a question no source was asked about is not composed")


@pytest.mark.parametrize("locale", ["zh-CN", "en"])
def test_every_status_that_is_not_an_answer_has_its_own_text(locale: str) -> None:
    texts = {status: status_text(status, locale) for status in AnswerStatus
             if status is not AnswerStatus.answered}
    assert len(set(texts.values())) == len(texts)
    assert texts[AnswerStatus.timed_out] != texts[AnswerStatus.freshness_guard]
