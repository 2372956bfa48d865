"""Builders shared by the answer, compose and render tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pmflow_gateway.handlers.answer import compose_answer
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.handlers.verify import verify_collected
from pmflow_gateway.ports import Clock, Composer
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    ExternalEvidence,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    PlannerInfo,
    QueryKind,
    QuestionContext,
    RouteDecided,
    RoutingSnapshot,
    UpstreamSource,
)
from tests.fakes import FixedClock

EXECUTION = "exec-1"
CLOCK = FixedClock()

FEISHU_UPSTREAM = UpstreamSource(source_type="feishu", source_label="Feishu history",
                                 title="群聊记录", target_url=None, snippet="上周广州下雨")
DOC_UPSTREAM = UpstreamSource(source_type="doc", source_label="doc", title="项目周报",
                              target_url="https://acme.feishu.cn/docx/abc", snippet="内部周报")
PMFLOW_UPSTREAM = UpstreamSource(source_type="pmflow", source_label="PMFlow records",
                                 title="pmflow records", target_url=None, snippet="记录")
UPSTREAM = [FEISHU_UPSTREAM, DOC_UPSTREAM, PMFLOW_UPSTREAM]


def weather_plan(**changes: Any) -> ExternalQueryPlan:
    base = ExternalQueryPlan(
        query_kind=QueryKind.weather, freshness_required=True, topic="广州未来5天天气",
        subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
        search_queries=["广州 未来5天天气", "广州 天气 5日预报"], result_limit=3)
    return base.model_copy(update=changes)


def collected(items: list[ExternalEvidence], *, plan: ExternalQueryPlan | None = None,
              question: str = "帮我看看未来 5 天的广州天气如何", locale: str = "zh-CN",
              upstream: list[UpstreamSource] | None = None, clock: Clock = CLOCK,
              deadline_s: float = 20.0, execution_id: str = EXECUTION) -> EvidenceCollected:
    context = QuestionContext(
        question=question, locale=locale, thread_id="t-42",
        routing=RoutingSnapshot(route_mode="external", effective_source_policy="external_only",
                                reply_contract="external_realtime"),
        deadline_at=clock.now() + timedelta(seconds=deadline_s),
        upstream_sources=UPSTREAM if upstream is None else upstream)
    return EvidenceCollected(
        event_id="ev-1", question_id="q-1", tenant_id="acme", occurred_at=clock.now(),
        context=context, plan=plan or weather_plan(), planner=PlannerInfo(mode="rules"),
        bundle=ExternalEvidenceBundle(execution_id=execution_id, items=items))


def route(question: str, **fields: object) -> RouteDecided:
    values: dict[str, object] = {
        "event_id": "e-1", "question_id": "q-1", "tenant_id": "acme",
        "occurred_at": datetime(2026, 12, 2, 8, 0, tzinfo=UTC), "question": question,
        "route_mode": "external", "effective_source_policy": "external_only",
        "reply_contract": "external_realtime", **fields}
    return RouteDecided.model_validate(values)


async def verify_and_compose(event: EvidenceCollected, *, clock: Clock,
                             composer: Composer = EXTRACTIVE) -> AnswerReady:
    """The verify and answer stage cores in a row, as the workers run them."""
    return await compose_answer(verify_collected(event, clock=clock), clock=clock,
                                composer=composer)
