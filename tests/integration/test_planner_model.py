"""The model planner against a real OpenAI-compatible HTTP endpoint with scripted replies."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from pmflow_gateway.adapters.llm import OpenAIChatModel, strict_schema
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.model import ModelPlanner
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import ExternalQueryPlan, PlannerInfo, RouteDecided
from tests.fakes import FixedClock
from tests.support.openai_server import ScriptedOpenAI

QUESTION = "帮我看看未来 5 天的广州天气如何"
UPSTREAM_SNIPPET = "上周广州下雨"
SEED_PLAN = {
    "plan_version": "v1", "query_kind": "weather", "answer_contract": "summary_with_sources",
    "freshness_required": True, "topic": "广州未来5天天气", "subject_entities": ["广州"],
    "location_hint": "广州", "time_range_hint": "未来5天", "preferred_domains": ["nmc.cn"],
    "search_queries": ["广州 未来5天天气", "广州 天气 5日预报"], "result_limit": 3,
    "requires_multi_source": False, "clarify_on_ambiguity": False}


def route_decided() -> RouteDecided:
    """The route event exactly as PMFlow documents it, probe results included."""
    return RouteDecided.model_validate({
        "event_id": "5b0c2f4e-0d7e-4a36-9d1e-8f3f3a8f2c11", "question_id": "q-20261202-0001",
        "tenant_id": "acme", "occurred_at": datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
        "schema_version": 1, "question": QUESTION, "locale": "zh-CN", "thread_id": "t-42",
        "route_mode": "external", "effective_source_policy": "external_only",
        "decision_origin": "probe", "reply_contract": "external_realtime",
        "query_profile": {"needs_private_context": False, "needs_freshness": True,
                          "referenced_objects": ["weather"]},
        "probe_snapshot": {"live_results": [{"snippet": UPSTREAM_SNIPPET}]},
        "sources": [{"source_type": "feishu", "source_label": "Feishu history",
                     "title": "群聊记录", "target_url": None, "snippet": UPSTREAM_SNIPPET}]})


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


async def plan_with(server: ScriptedOpenAI, *replies: Any,
                    timeout_s: float = 5.0) -> tuple[ExternalQueryPlan, PlannerInfo]:
    server.replies.extend(replies)
    model = OpenAIChatModel(base_url=server.base_url, model="planner-test")
    try:
        return await ModelPlanner(model=model, timeout_s=timeout_s).plan(route_decided())
    finally:
        await model.aclose()


async def test_a_valid_reply_is_the_plan(server: ScriptedOpenAI) -> None:
    plan, info = await plan_with(server, json.dumps(SEED_PLAN, ensure_ascii=False))
    assert plan == ExternalQueryPlan.model_validate(SEED_PLAN)
    assert info.mode == "model" and info.model == "planner-test" and info.reason is None
    assert info.latency_ms > 0
    [request] = server.requests
    assert request["temperature"] == 0
    assert request["response_format"]["json_schema"]["name"] == "ExternalQueryPlan"
    assert request["response_format"]["json_schema"]["strict"] is True
    assert request["response_format"]["json_schema"]["schema"] == strict_schema(
        ExternalQueryPlan.model_json_schema())


async def test_invalid_json_is_repaired_once(server: ScriptedOpenAI) -> None:
    broken = json.dumps(SEED_PLAN, ensure_ascii=False)[:60]
    plan, info = await plan_with(server, broken, json.dumps(SEED_PLAN, ensure_ascii=False))
    assert info.mode == "model"
    assert plan.location_hint == "广州"
    first, repair = server.requests
    assert len(repair["messages"]) == len(first["messages"]) + 2
    assert repair["messages"][-2] == {"role": "assistant", "content": broken}
    assert "not a valid ExternalQueryPlan" in repair["messages"][-1]["content"]
    assert "Invalid JSON" in repair["messages"][-1]["content"]


async def test_an_out_of_contract_value_is_sent_back_with_the_field(server: ScriptedOpenAI) -> None:
    wrong = json.dumps({**SEED_PLAN, "query_kind": "sports", "result_limit": 99})
    _, info = await plan_with(server, wrong, json.dumps(SEED_PLAN))
    assert info.mode == "model"
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "query_kind" in feedback and "result_limit" in feedback


async def test_garbage_twice_falls_back_to_the_rules_with_the_reason(
        server: ScriptedOpenAI) -> None:
    plan, info = await plan_with(server, "I think it will rain.", "```sunny```")
    assert info.mode == "fallback" and info.model == "planner-test"
    assert info.reason is not None and "invalid after one repair" in info.reason
    assert plan == plan_by_rules(QUESTION, needs_freshness=True)
    assert len(server.requests) == 2


async def test_a_timeout_falls_back_without_waiting_for_the_model(
        server: ScriptedOpenAI) -> None:
    started = time.perf_counter()
    plan, info = await plan_with(server, ("sleep", 2), timeout_s=0.3)
    assert time.perf_counter() - started < 1.5
    assert info.mode == "fallback" and info.reason == "model timed out after 0.3s"
    assert plan.location_hint == "广州" and plan.time_range_hint == "未来5天"
    assert len(server.requests) == 1  # no repair round after a timeout


async def test_a_server_error_falls_back(server: ScriptedOpenAI) -> None:
    plan, info = await plan_with(server, ("status", 503))
    assert info.mode == "fallback"
    assert info.reason is not None and "ModelError" in info.reason
    assert plan.query_kind == "weather"


async def test_the_model_sees_only_the_question_and_route_context(
        server: ScriptedOpenAI) -> None:
    await plan_with(server, "not json", json.dumps(SEED_PLAN))
    for request in server.requests:
        assert UPSTREAM_SNIPPET not in json.dumps(request, ensure_ascii=False)
        assert "Feishu" not in json.dumps(request, ensure_ascii=False)
    system, user = server.requests[0]["messages"]
    assert system["role"] == "system" and "ExternalQueryPlan" in system["content"]
    assert json.loads(user["content"]) == {
        "question": QUESTION, "locale": "zh-CN", "route_mode": "external",
        "query_profile": {"needs_private_context": False, "needs_freshness": True,
                          "referenced_objects": ["weather"]}}


async def test_the_plan_stage_records_the_model_planner(server: ScriptedOpenAI) -> None:
    repeated = ["广州 未来5天天气", "  ", "广州 未来5天天气"]
    server.replies.append(json.dumps({**SEED_PLAN, "search_queries": repeated}))
    model = OpenAIChatModel(base_url=server.base_url, model="planner-test")
    try:
        created = await plan_question(route_decided(),
                                      planner=ModelPlanner(model=model, timeout_s=5.0),
                                      clock=FixedClock(), defaults=PlanDefaults())
    finally:
        await model.aclose()
    assert created is not None and created.planner.mode == "model"
    assert created.plan.search_queries == ["广州 未来5天天气"]
    assert UPSTREAM_SNIPPET not in created.plan.model_dump_json()


async def test_strict_output_nulls_for_optional_fields_take_their_defaults(
        server: ScriptedOpenAI) -> None:
    strict = {**SEED_PLAN, "result_limit": None, "preferred_domains": None,
              "time_range_hint": None}  # strict mode sends every field, null when unsure
    plan, info = await plan_with(server, json.dumps(strict, ensure_ascii=False))
    assert info.mode == "model", info.reason
    assert (plan.result_limit, plan.preferred_domains, plan.time_range_hint) == (3, [], None)


@pytest.mark.parametrize(("reply", "why"), [
    (("refusal", "I can't help with that."), "the model refused: I can't help with that."),
    (("length", '{"plan_version": "v1", "topic": "广州未'), "cut off at its token limit"),
])
async def test_a_refusal_or_a_truncated_output_falls_back_at_once_with_why(
        server: ScriptedOpenAI, reply: tuple[str, str], why: str) -> None:
    plan, info = await plan_with(server, reply, json.dumps(SEED_PLAN))
    assert info.mode == "fallback" and info.reason is not None and why in info.reason
    assert plan == plan_by_rules(QUESTION, needs_freshness=True)
    assert len(server.requests) == 1  # not asked again: a refusal is not a typo to repair
