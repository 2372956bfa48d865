"""The model planner's decisions, with an in-memory chat model (HTTP is tested in integration)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pmflow_gateway.handlers.planners.model import ModelPlanner, parse_plan
from pmflow_gateway.schemas import AnswerContract, RouteDecided
from tests.fakes import BrokenPlanner, ScriptedModel

PLAN = {"query_kind": "company", "answer_contract": "direct_fact", "topic": "腾讯 CEO",
        "subject_entities": ["腾讯"], "search_queries": ["腾讯 CEO"]}


def route(question: str = "腾讯的 CEO 是谁") -> RouteDecided:
    return RouteDecided.model_validate({
        "event_id": "e", "question_id": "q", "tenant_id": "t", "question": question,
        "occurred_at": datetime(2026, 12, 2, tzinfo=UTC), "route_mode": "uncertain"})


async def test_a_fenced_json_reply_is_accepted() -> None:
    model = ScriptedModel(["```json\n" + json.dumps(PLAN, ensure_ascii=False) + "\n```"])
    plan, info = await ModelPlanner(model=model, timeout_s=1).plan(route())
    assert info.mode == "model" and plan.subject_entities == ["腾讯"]


async def test_a_plan_with_nothing_to_search_is_repaired() -> None:
    empty = json.dumps({**PLAN, "search_queries": []})
    model = ScriptedModel([empty, json.dumps(PLAN)])
    plan, info = await ModelPlanner(model=model, timeout_s=1).plan(route())
    assert info.mode == "model" and plan.search_queries == ["腾讯 CEO"]
    assert "search_queries" in model.calls[1][-1]["content"]


async def test_any_client_failure_falls_back_with_its_name() -> None:
    model = ScriptedModel([RuntimeError("connection reset")])
    plan, info = await ModelPlanner(model=model, timeout_s=1).plan(route())
    assert info.mode == "fallback"
    assert info.reason == "model call failed: RuntimeError: connection reset"
    assert plan.query_kind == "company"


async def test_when_neither_planner_can_plan_the_user_is_asked() -> None:
    model = ScriptedModel([TimeoutError()])
    plan, info = await ModelPlanner(model=model, timeout_s=0.5,
                                    fallback=BrokenPlanner()).plan(route())
    assert plan.answer_contract is AnswerContract.clarify and plan.clarify_on_ambiguity
    assert info.mode == "fallback"
    assert info.reason is not None
    assert info.reason.startswith("model timed out after 0.5s; rules planner failed")


async def test_the_rules_reason_for_clarify_is_kept_after_a_fallback() -> None:
    model = ScriptedModel([TimeoutError()])
    plan, info = await ModelPlanner(model=model, timeout_s=1).plan(route("最新消息呢"))
    assert plan.answer_contract is AnswerContract.clarify
    assert info.reason == ("model timed out after 1s; "
                           "nothing to search for: the question names no subject")


def test_a_clarify_plan_may_have_no_queries() -> None:
    assert parse_plan(json.dumps({"answer_contract": "clarify"})).search_queries == []


async def test_the_model_sees_the_thread_s_previous_question_when_there_is_one() -> None:
    model = ScriptedModel([json.dumps(PLAN)])
    follow_up = route("那明天呢").model_copy(update={"previous_question": "广州今天天气如何"})
    await ModelPlanner(model=model, timeout_s=1).plan(follow_up)
    shown = json.loads(model.calls[0][-1]["content"])
    assert (shown["question"], shown["previous_question"]) == ("那明天呢", "广州今天天气如何")
    alone = ScriptedModel([json.dumps(PLAN)])
    await ModelPlanner(model=alone, timeout_s=1).plan(route())
    assert "previous_question" not in json.loads(alone.calls[0][-1]["content"])
    assert "previous_question" in alone.calls[0][0]["content"]  # the prompt explains it
