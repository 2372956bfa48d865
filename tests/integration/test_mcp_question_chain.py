"""One question through the stage cores with the real MCP adapter (our server over stdio):
route -> plan (rules) -> evidence (MCP) -> verify+compose -> render. No Kafka here."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import demo_servers
from pmflow_gateway.handlers.evidence import collect_evidence
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.support.builders import verify_and_compose


def route(question: str, locale: str) -> RouteDecided:
    return RouteDecided.model_validate({
        **ROUTE_DECIDED, "question_id": "q-mcp-chain", "question": question, "locale": locale,
        "occurred_at": datetime.now(UTC).isoformat()})


@pytest.mark.parametrize(("question", "locale", "city"), [
    ("帮我看看未来 5 天的广州天气如何", "zh-CN", "广州"),
    ("What is the weather in London this week?", "en-US", "London"),
])
async def test_weather_question_is_answered_from_mcp_evidence_only(
        question: str, locale: str, city: str) -> None:
    clock = SystemClock()
    adapter = McpAdapter(demo_servers()[0])
    try:
        planned = await plan_question(route(question, locale), planner=RulesPlanner(),
                                      clock=clock, defaults=PlanDefaults())
        assert planned is not None
        evidence = await collect_evidence(planned, adapters=[adapter], clock=clock)
    finally:
        await adapter.aclose()
    answer = await verify_and_compose(evidence, clock=clock)
    reply = render_reply(answer, clock=clock)
    assert [a.adapter for a in evidence.attempts] == ["mcp"] * len(evidence.attempts)
    assert answer.status is AnswerStatus.answered, (answer.reason, evidence.attempts)
    assert answer.sources_used and all(s.url.startswith("https://") for s in answer.sources_used)
    assert city in answer.sources_used[0].title
    assert "Feishu" not in reply.text and "群聊记录" not in reply.text
