"""What `external_search` makes of an AnswerReady: the demo flag and the deadline rule."""

from __future__ import annotations

from datetime import timedelta

from pmflow_gateway.agent_tools.server import ran_out_of_time, search_result
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import WEATHER, FakeAdapter, FixedClock, InMemoryStore


async def an_answer() -> AnswerReady:
    deps = Deps(clock=FixedClock(), planner=RulesPlanner(), store=InMemoryStore(),
                adapters=[FakeAdapter("mcp", items=[WEATHER])], composer=EXTRACTIVE)
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), deps)
    assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered
    return outcome.answer


async def test_the_result_says_whether_its_sources_are_demo_pages() -> None:
    answer = await an_answer()
    assert search_result(answer).demo is False
    assert search_result(answer.model_copy(update={"demo": True})).demo is True


async def test_an_unanswered_question_at_its_deadline_ran_out_of_time() -> None:
    answer = await an_answer()
    deadline = answer.context.deadline_at
    refused = answer.model_copy(update={"status": AnswerStatus.freshness_guard})
    assert ran_out_of_time(refused.model_copy(update={"occurred_at": deadline}))
    assert ran_out_of_time(refused.model_copy(
        update={"occurred_at": deadline - timedelta(milliseconds=10)}))
    # With time to spare, the sources were what failed, and the caller gets the refusal.
    assert not ran_out_of_time(refused.model_copy(
        update={"occurred_at": deadline - timedelta(seconds=5)}))
    # An answer made in time is an answer, however close to the deadline.
    assert not ran_out_of_time(answer.model_copy(update={"occurred_at": deadline}))
