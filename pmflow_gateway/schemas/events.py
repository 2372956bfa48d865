"""The events that travel between stages, one per topic.

Every event carries the envelope. Stage outputs also carry the `QuestionContext`, so each
stage reads everything it needs from its one input event and nothing else.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, Field

from pmflow_gateway.schemas.contracts import (
    AdapterAttempt,
    AnswerStatus,
    Citation,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    Frozen,
    PlannerInfo,
    SourceUsed,
    Verdict,
)

SCHEMA_VERSION: Literal[1] = 1
_EVENT_NAMESPACE = uuid.UUID("6f1c6d2e-3a8b-4c1e-9a55-2b1f0c7d9e10")


def stage_event_id(tenant_id: str, question_id: str, stage: str) -> str:
    """The same id for the same (tenant, question, stage), so a redelivered input yields the
    same output id; two tenants' equal question ids never share one."""
    return str(uuid.uuid5(_EVENT_NAMESPACE, f"{tenant_id}\x1f{question_id}\x1f{stage}"))


class Envelope(Frozen):
    event_id: str = Field(min_length=1, max_length=200)
    question_id: str = Field(min_length=1, max_length=200)
    tenant_id: str = Field(min_length=1, max_length=200)
    occurred_at: AwareDatetime
    schema_version: Literal[1] = SCHEMA_VERSION


class QueryProfile(Frozen):
    needs_private_context: bool = False
    needs_freshness: bool = False
    referenced_objects: list[str] = Field(default_factory=list)


class UpstreamSource(Frozen):
    """A source PMFlow attached upstream. The source contract never lets one out."""

    source_type: str = ""
    source_label: str = ""
    title: str = ""
    target_url: str | None = None
    snippet: str = ""


class RoutingSnapshot(Frozen):
    route_mode: Literal["internal", "external", "uncertain"]
    effective_source_policy: str = ""
    decision_origin: str = ""
    reply_contract: str = ""
    query_profile: QueryProfile = Field(default_factory=QueryProfile)
    probe_snapshot: dict[str, Any] = Field(default_factory=dict)


class RouteDecided(Envelope):
    """PMFlow's route decision for one question (input)."""

    question: str = Field(min_length=1, max_length=4000)
    locale: str = "zh-CN"
    thread_id: str | None = None
    route_mode: Literal["internal", "external", "uncertain"]
    effective_source_policy: str = ""
    decision_origin: str = ""
    reply_contract: str = ""
    query_profile: QueryProfile = Field(default_factory=QueryProfile)
    probe_snapshot: dict[str, Any] = Field(default_factory=dict)
    sources: list[UpstreamSource] = Field(default_factory=list)
    deadline_ms: int | None = Field(default=None, ge=100, le=600_000)
    previous_question: str | None = Field(
        default=None, max_length=1000,
        description="The thread's previous question, when PMFlow passes it: a follow-up such "
        "as \"那明天呢\" is planned with its subject; without it such a question ends in clarify.")

    def routing(self) -> RoutingSnapshot:
        return RoutingSnapshot(
            route_mode=self.route_mode,
            effective_source_policy=self.effective_source_policy,
            decision_origin=self.decision_origin,
            reply_contract=self.reply_contract,
            query_profile=self.query_profile,
            probe_snapshot=self.probe_snapshot,
        )


class QuestionContext(Frozen):
    """What every stage after planning needs to know about the question."""

    question: str
    locale: str
    thread_id: str | None = None
    routing: RoutingSnapshot
    deadline_at: datetime
    upstream_sources: list[UpstreamSource] = Field(default_factory=list)
    stage_timings_ms: dict[str, float] = Field(default_factory=dict)


class PlanCreated(Envelope):
    context: QuestionContext
    plan: ExternalQueryPlan
    planner: PlannerInfo


class EvidenceCollected(Envelope):
    context: QuestionContext
    plan: ExternalQueryPlan
    planner: PlannerInfo
    bundle: ExternalEvidenceBundle
    attempts: list[AdapterAttempt] = Field(default_factory=list)


class AnswerReady(Envelope):
    """The final answer event: everything that happened to the question."""

    context: QuestionContext
    status: AnswerStatus
    answer: str
    reason: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    sources_used: list[SourceUsed] = Field(default_factory=list)
    execution_id: str | None = None
    plan: ExternalQueryPlan
    planner: PlannerInfo
    verdict: Verdict
    attempts: list[AdapterAttempt] = Field(default_factory=list)
    composer: str = "extractive"
    demo: bool = Field(default=False, description="The answer cites demo pages (hosts reserved "
                       "for examples): the reply carries a demo notice.")


class ReplyRendered(Envelope):
    """The reply the user sees."""

    answer_event_id: str
    status: AnswerStatus
    locale: str
    thread_id: str | None = None
    text: str
    sources: list[SourceUsed] = Field(default_factory=list)


FeedbackOutcome = Literal["helpful", "unhelpful", "wrong_route", "stale", "incorrect"]


class FeedbackGiven(Envelope):
    """A user's verdict on an answer (input, from PMFlow's feedback center)."""

    outcome: FeedbackOutcome
    comment: str | None = Field(default=None, max_length=4000)


class DeadLettered(Frozen):
    """A message a stage could not take, and why. Its envelope fields may be unknown."""

    event_id: str
    question_id: str | None = None
    tenant_id: str | None = None
    occurred_at: AwareDatetime
    schema_version: Literal[1] = SCHEMA_VERSION
    stage: str
    reason: str
    origin_topic: str
    origin_partition: int
    origin_offset: int
    original_headers: dict[str, str] = Field(default_factory=dict)
    original_value: str = ""


STAGE_OUTPUTS: dict[str, type[Frozen]] = {
    "RouteDecided": RouteDecided,
    "PlanCreated": PlanCreated,
    "EvidenceCollected": EvidenceCollected,
    "AnswerReady": AnswerReady,
    "ReplyRendered": ReplyRendered,
    "FeedbackGiven": FeedbackGiven,
    "DeadLettered": DeadLettered,
}
