"""What the agent tools make of an AnswerReady (the demo flag, the deadline rule, whether it is
remembered) and of a routing prior (its confidence in steps)."""

from __future__ import annotations

from datetime import timedelta

from pmflow_gateway.agent_tools.server import coarse_confidence, ran_out_of_time, search_result
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.memory import AGENT_TOOL_ORIGIN
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import InMemoryStore, fake_deps


async def an_answer() -> AnswerReady:
    deps = fake_deps()
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


async def test_an_agents_question_is_remembered_only_when_configured() -> None:
    agent = RouteDecided.model_validate({**ROUTE_DECIDED, "decision_origin": AGENT_TOOL_ORIGIN})
    for remember, kept in ((False, 0), (True, 1)):
        store = InMemoryStore()
        deps = fake_deps(store=store, remember_agent_questions=remember)
        outcome = await ask_in_process(agent, deps)
        assert outcome.answer is not None and outcome.answer.status is AnswerStatus.answered
        assert len(await store.similar(agent.tenant_id, agent.question, limit=5)) == kept
    # PMFlow's own questions are remembered either way.
    store = InMemoryStore()
    await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED), fake_deps(store=store))
    assert await store.similar("acme", ROUTE_DECIDED["question"], limit=5)


def test_route_prior_confidence_comes_in_steps() -> None:
    assert [coarse_confidence(c) for c in (0.0, 0.01, 0.123, 0.25, 0.26, 0.5, 0.74, 0.99, 1.0,
                                           1.5)] == [0.0, 0.25, 0.25, 0.25, 0.5, 0.5, 0.75,
                                                     1.0, 1.0, 1.0]
