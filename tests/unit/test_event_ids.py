"""An event id names one content: the same content (made at another moment, its work taking
another time) keeps its id, any other content gets another; every stage's output leaves the
stage under its content id."""

from __future__ import annotations

from datetime import timedelta

from pmflow_gateway.contract.envelopes import execution_id, identified
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.schemas import AdapterAttempt, AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import WEATHER, fake_deps
from tests.support.pg import answer_ready


def test_when_and_how_long_are_not_content() -> None:
    answer = answer_ready()
    later = answer.model_copy(update={
        "occurred_at": answer.occurred_at + timedelta(minutes=3),
        "context": answer.context.model_copy(update={
            "deadline_at": answer.context.deadline_at + timedelta(minutes=3),
            "stage_timings_ms": {"plan": 9.0}}),
        "attempts": [AdapterAttempt(adapter="mcp", outcome="ok", latency_ms=812.0)],
        "planner": answer.planner.model_copy(update={"latency_ms": 51.0})})
    again = later.model_copy(update={
        "attempts": [AdapterAttempt(adapter="mcp", outcome="ok", latency_ms=3.0)]})
    assert identified(later).event_id == identified(again).event_id
    assert identified(answer).event_id != answer.event_id


def test_any_other_content_is_another_id() -> None:
    answer = answer_ready()
    ids = {identified(a).event_id for a in [
        answer,
        answer.model_copy(update={"status": AnswerStatus.freshness_guard}),
        answer.model_copy(update={"answer": answer.answer + "。"}),
        answer.model_copy(update={"question_id": "q-2"}),
        answer.model_copy(update={"tenant_id": "other"}),
        answer.model_copy(update={"context": answer.context.model_copy(
            update={"question": "未来5天深圳天气"})}),
    ]}
    assert len(ids) == 6


def test_an_execution_is_named_by_its_evidence() -> None:
    fetched_later = WEATHER.model_copy(update={"retrieved_at": WEATHER.retrieved_at
                                               + timedelta(hours=1)})
    assert execution_id("t", "q", [WEATHER]) == execution_id("t", "q", [fetched_later])
    assert execution_id("t", "q", [WEATHER]) != execution_id("t", "q", [])
    assert execution_id("t", "q", [WEATHER]) != execution_id("t", "q2", [WEATHER])


async def test_every_stage_output_leaves_under_its_content_id() -> None:
    deps = fake_deps()
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), deps)
    events = [outcome.plan, outcome.evidence, outcome.answer, outcome.reply]
    assert all(e is not None and identified(e).event_id == e.event_id for e in events)
    assert outcome.reply is not None and outcome.answer is not None
    assert outcome.reply.answer_event_id == outcome.answer.event_id
