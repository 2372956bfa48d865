"""The routing table: every combination PMFlow can send, unknown values, and what each stage
does with a question the table keeps from external sources."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from pmflow_gateway.contract.routing import (
    NO_ROW,
    REPLY_CONTRACTS,
    SOURCE_POLICIES,
    markdown_table,
    route_policy,
)
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.evidence import collect_evidence
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    PlanCreated,
    RouteAction,
    RouteDecided,
    RoutingSnapshot,
)
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import WEATHER, FakeAdapter, FixedClock, InMemoryStore, fake_deps

README = Path(__file__).parents[2] / "README.md"
INTERNAL_QUESTION = "Nightjar 项目第三季度的里程碑进度如何"
COMBINATIONS = list(itertools.product(
    ["external", "uncertain", "internal"], sorted(SOURCE_POLICIES), [False, True],
    sorted(REPLY_CONTRACTS)))


def routing(mode: str, policy: str, private: bool, contract: str) -> RoutingSnapshot:
    return RoutingSnapshot.model_validate({
        "route_mode": mode, "effective_source_policy": policy, "reply_contract": contract,
        "query_profile": {"needs_private_context": private}})


def route_event(**changes: Any) -> RouteDecided:
    profile = {**ROUTE_DECIDED["query_profile"], **changes.pop("query_profile", {})}
    return RouteDecided.model_validate({**ROUTE_DECIDED, "question": INTERNAL_QUESTION,
                                        "query_profile": profile, **changes})


def holds_back(mode: str, policy: str, private: bool, contract: str) -> bool:
    """What must never reach an external source, whatever else the decision says."""
    return (mode == "internal" or policy == "internal_only" or private
            or contract == "internal_answer")


@pytest.mark.parametrize(("mode", "policy", "private", "contract"), COMBINATIONS)
def test_every_known_combination_has_a_row_and_nothing_internal_goes_out(
        mode: str, policy: str, private: bool, contract: str) -> None:
    decided = route_policy(routing(mode, policy, private, contract))
    assert decided.rule != NO_ROW
    if holds_back(mode, policy, private, contract):
        assert decided.action is not RouteAction.answer, decided
    expected_answer = (mode in ("external", "uncertain") and policy != "internal_only"
                       and not private and contract == "external_realtime")
    assert (decided.action is RouteAction.answer) is expected_answer, decided


def test_the_issue_s_decision_is_refused() -> None:
    decided = route_policy(routing("uncertain", "internal_only", True, "internal_answer"))
    assert (decided.action, decided.rule) == (RouteAction.refuse, "internal_only_policy")


@pytest.mark.parametrize(("field", "value"), [
    ("effective_source_policy", "mixed"), ("effective_source_policy", ""),
    ("reply_contract", "external_report"), ("reply_contract", ""),
    ("effective_source_policy", "EXTERNAL_ONLY")])
def test_an_unknown_or_missing_value_fails_closed(field: str, value: str) -> None:
    good = routing("external", "external_only", False, "external_realtime")
    decided = route_policy(good.model_copy(update={field: value}))
    assert decided.action is RouteAction.refuse and decided.rule == "unknown_value"
    assert field in decided.reason


def test_the_readme_shows_the_table_as_the_code_has_it() -> None:
    assert markdown_table() in README.read_text("utf-8")


class CountingPlanner:
    def __init__(self) -> None:
        self.calls = 0

    async def plan(self, route: RouteDecided) -> Any:
        self.calls += 1
        return await RulesPlanner().plan(route)


@pytest.mark.parametrize(("changes", "status", "rule"), [
    ({"effective_source_policy": "internal_only"}, AnswerStatus.refused, "internal_only_policy"),
    ({"query_profile": {"needs_private_context": True}}, AnswerStatus.refused,
     "private_context"),
    ({"route_mode": "uncertain", "query_profile": {"needs_private_context": True}},
     AnswerStatus.clarify, "private_context_unsure"),
    ({"reply_contract": "clarification"}, AnswerStatus.clarify, "clarification"),
    ({"reply_contract": "shout"}, AnswerStatus.refused, "unknown_value")])
async def test_a_held_back_question_is_answered_by_the_plan_stage_without_a_planner(
        changes: dict[str, Any], status: AnswerStatus, rule: str) -> None:
    planner = CountingPlanner()
    answer = await plan_question(route_event(**changes), planner=planner, clock=FixedClock(),
                                 defaults=PlanDefaults())
    assert isinstance(answer, AnswerReady) and planner.calls == 0
    assert answer.status is status and answer.sources_used == []
    policy = answer.context.routing.policy
    assert policy is not None and policy.rule == rule
    assert answer.reason and answer.reason.startswith("routing policy: ")


async def test_a_planned_question_carries_the_table_s_decision() -> None:
    created = await plan_question(RouteDecided.model_validate(ROUTE_DECIDED),
                                  planner=RulesPlanner(), clock=FixedClock(),
                                  defaults=PlanDefaults())
    assert isinstance(created, PlanCreated)
    assert created.context.routing.policy is not None
    assert created.context.routing.policy.action is RouteAction.answer


async def test_the_evidence_stage_asks_no_adapter_for_a_plan_the_table_would_not_let_out() -> None:
    created = await plan_question(RouteDecided.model_validate(ROUTE_DECIDED),
                                  planner=RulesPlanner(), clock=FixedClock(),
                                  defaults=PlanDefaults())
    assert isinstance(created, PlanCreated)
    routing_then = created.context.routing.model_copy(update={
        "effective_source_policy": "internal_only"})
    forged = created.model_copy(update={"context": created.context.model_copy(
        update={"routing": routing_then})})
    adapter = FakeAdapter("mcp", items=[WEATHER])
    result = await collect_evidence(forged, adapters=[adapter], clock=FixedClock())
    assert isinstance(result, AnswerReady) and result.status is AnswerStatus.refused
    assert adapter.calls == []


@pytest.mark.parametrize(("locale", "question", "says"), [
    ("zh-CN", INTERNAL_QUESTION, "只允许使用内部资料"),
    ("en", "How far along is project Nightjar's Q3 milestone?", "internal data only")])
async def test_the_reply_says_why_in_the_question_s_language_and_the_record_keeps_the_decision(
        locale: str, question: str, says: str) -> None:
    store = InMemoryStore()
    adapter = FakeAdapter("mcp", items=[WEATHER])
    deps = fake_deps(adapters=[adapter], store=store)
    outcome = await ask_in_process(route_event(
        locale=locale, question=question, effective_source_policy="internal_only"), deps)
    assert outcome.plan is None and outcome.evidence is None and adapter.calls == []
    assert outcome.reply is not None and says in outcome.reply.text
    assert outcome.reply.sources == [] and "Feishu" not in outcome.reply.text
    [recorded] = store.answers.values()
    assert recorded.status is AnswerStatus.refused
    assert recorded.context.routing.policy is not None
    assert recorded.context.routing.policy.rule == "internal_only_policy"
