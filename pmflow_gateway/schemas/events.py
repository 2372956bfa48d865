"""The events that travel between stages, one per topic.

Every event carries the envelope. Stage outputs also carry the `QuestionContext`, so each
stage reads everything it needs from its one input event and nothing else.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field

from pmflow_gateway.schemas.contracts import (
    MAX_ITEMS,
    MAX_TERMS,
    REPLY_CHARS,
    AdapterAttempt,
    AnswerStatus,
    Citation,
    ClippedAnswer,
    ClippedLine,
    ClippedPassage,
    ExternalEvidence,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    Frozen,
    Line,
    Name,
    Passage,
    PlannerInfo,
    ProbeMetrics,
    SourceUsed,
    Url,
    Verdict,
    clipped,
)
from pmflow_gateway.schemas.envelope import SCHEMA_VERSION, Envelope, ProbeSnapshot

__all__ = ["SCHEMA_VERSION", "STAGE_OUTPUTS", "Envelope"]

# Lists the stages produce: clipped to their bound, so a stage never fails on its own output.
Attempts = Annotated[list[AdapterAttempt], Field(max_length=MAX_ITEMS), clipped(MAX_ITEMS)]
Citations = Annotated[list[Citation], Field(max_length=MAX_ITEMS), clipped(MAX_ITEMS)]
SourcesUsed = Annotated[list[SourceUsed], Field(max_length=MAX_ITEMS), clipped(MAX_ITEMS)]


class QueryProfile(Frozen):
    needs_private_context: bool = False
    needs_freshness: bool = False
    referenced_objects: list[Name] = Field(default_factory=list, max_length=MAX_TERMS * 2)


class UpstreamSource(Frozen):
    """A source PMFlow attached upstream. The source contract never lets one out."""

    source_type: Name = ""
    source_label: Name = ""
    title: Line = ""
    target_url: Url | None = None
    snippet: Passage = ""


class RouteAction(StrEnum):
    """What the gateway may do with a route decision (`contract/routing.py` decides)."""

    answer = "answer"  # search external sources and answer from them
    clarify = "clarify"  # ask the user back, nothing searched
    refuse = "refuse"  # answer that it may not look outside, nothing searched
    skip = "skip"  # not ours: PMFlow answers internal routes itself, no reply from here


class RoutePolicy(Frozen):
    """The routing table's reading of PMFlow's routing fields, kept with the question."""

    action: RouteAction
    rule: Name = Field(description="The table row that decided, e.g. internal_only_policy")
    reason: ClippedLine = Field(description="Why, naming the values that decided")


RouteMode = Literal["internal", "external", "uncertain"]


class RoutingSnapshot(Frozen):
    route_mode: RouteMode
    effective_source_policy: Name = ""
    decision_origin: Name = ""
    reply_contract: Name = ""
    query_profile: QueryProfile = Field(default_factory=QueryProfile)
    probe_snapshot: ProbeSnapshot = Field(default_factory=dict)
    policy: RoutePolicy | None = Field(default=None, description=(
        "What the gateway's routing table decided from the fields above (set by the plan "
        "stage; absent on events made before it was)."))


class Routed(Envelope):
    """A question and PMFlow's routing fields, as its route gateway publishes them."""

    question: str = Field(min_length=1, max_length=4000)
    locale: Name = "zh-CN"
    thread_id: Name | None = None
    route_mode: RouteMode
    effective_source_policy: Name = ""
    decision_origin: Name = ""
    reply_contract: Name = ""
    query_profile: QueryProfile = Field(default_factory=QueryProfile)
    probe_snapshot: ProbeSnapshot = Field(default_factory=dict)

    def routing(self) -> RoutingSnapshot:
        return RoutingSnapshot(
            route_mode=self.route_mode,
            effective_source_policy=self.effective_source_policy,
            decision_origin=self.decision_origin,
            reply_contract=self.reply_contract,
            query_profile=self.query_profile,
            probe_snapshot=self.probe_snapshot,
        )


class RouteDecided(Routed):
    """PMFlow's route decision for one question (input)."""

    sources: list[UpstreamSource] = Field(default_factory=list, max_length=MAX_ITEMS)
    deadline_ms: int | None = Field(default=None, ge=100, le=600_000)
    previous_question: str | None = Field(
        default=None, max_length=1000,
        description="The thread's previous question, when PMFlow passes it: a follow-up such "
        "as \"那明天呢\" is planned with its subject; without it such a question ends in clarify.")


class RouteOutcomeReported(Routed):
    """How a question PMFlow answered itself (an internal route) or sent elsewhere ended
    (input): recorded in the tenant's route memories beside ours, so the route prior learns
    both sides."""

    outcome: AnswerStatus = Field(description=(
        "How it ended, in the gateway's words: answered, clarify, freshness_guard (nothing "
        "reliable found), failed, ..."))
    query_kind: Name = Field(default="unknown", description="What kind of question it was, "
                             "if PMFlow knows (its query type)")


class QuestionContext(Frozen):
    """What every stage after planning needs to know about the question."""

    question: Passage
    locale: Name
    thread_id: Name | None = None
    routing: RoutingSnapshot
    deadline_at: datetime = Field(description=(
        "When the question's work must be done. Set when it is planned; the evidence stage "
        "moves it to when it takes the question up plus what was left of the budget (never "
        "past expires_at), so time spent waiting in a queue is not charged to it."))
    expires_at: datetime | None = Field(default=None, description=(
        "The latest moment a source may be asked: when the gateway first saw the question, "
        "plus its budget, plus the wait allowed in the queues. A question taken up later is not "
        "looked up and ends timed_out. Absent: no bound."))
    upstream_sources: list[UpstreamSource] = Field(default_factory=list, max_length=MAX_ITEMS)
    stage_timings_ms: dict[str, float] = Field(default_factory=dict, max_length=MAX_TERMS)


class PlanCreated(Envelope):
    context: QuestionContext
    plan: ExternalQueryPlan
    planner: PlannerInfo


class EvidenceCollected(Envelope):
    context: QuestionContext
    plan: ExternalQueryPlan
    planner: PlannerInfo
    bundle: ExternalEvidenceBundle
    attempts: Attempts = Field(default_factory=list)


DroppedContract = Literal["source", "freshness", "question", "limit"]


class DroppedEvidence(Frozen):
    """A collected item no answer may rest on, and why."""

    item: ExternalEvidence
    contract: DroppedContract = Field(description=(
        "Which rule dropped it: source (not external http(s) evidence of this execution, an "
        "internal label, an upstream repeat, a duplicate), freshness (stale or undated), "
        "question (not about the asked place, subject, day or metric; an ambiguous reading) "
        "or limit (about it, but better items filled the result limit)"))
    reason: ClippedLine


class Conclusion(Frozen):
    """The verifier alone decided how the question ends: nothing may be composed."""

    status: AnswerStatus
    reason: ClippedLine
    answer: ClippedPassage = Field(description="What the user is told instead")


EvidenceItems = Annotated[list[ExternalEvidence], Field(max_length=MAX_ITEMS), clipped(MAX_ITEMS)]


class EvidenceVerified(Envelope):
    """The evidence the answer may rest on, and every collected item it may not, with why."""

    context: QuestionContext
    plan: ExternalQueryPlan = Field(description=(
        "The plan as the verifier read it: the short names the evidence declares for the "
        "asked subjects (a ticker) count as theirs from here on."))
    planner: PlannerInfo
    execution_id: Name
    kept: EvidenceItems = Field(default_factory=list)
    dropped: Annotated[list[DroppedEvidence], Field(max_length=MAX_ITEMS),
                       clipped(MAX_ITEMS)] = Field(default_factory=list)
    verdict: Verdict
    conclusion: Conclusion | None = Field(default=None, description=(
        "Set when nothing may be composed (the plan asks back, the place or subject reads "
        "two ways, nothing was kept): the status the question ends in."))
    attempts: Attempts = Field(default_factory=list)


class AnswerReady(Envelope):
    """The final answer event: everything that happened to the question."""

    context: QuestionContext
    status: AnswerStatus
    answer: ClippedAnswer
    reason: ClippedLine | None = None
    citations: Citations = Field(default_factory=list)
    sources_used: SourcesUsed = Field(default_factory=list)
    execution_id: Name | None = None
    plan: ExternalQueryPlan
    planner: PlannerInfo
    verdict: Verdict
    attempts: Attempts = Field(default_factory=list)
    composer: Name = "extractive"
    demo: bool = Field(default=False, description="The answer cites demo pages (hosts reserved "
                       "for examples): the reply carries a demo notice.")


class ReplyRendered(Envelope):
    """The reply the user sees."""

    answer_event_id: Name
    status: AnswerStatus
    locale: Name
    thread_id: Name | None = None
    text: str = Field(max_length=REPLY_CHARS)
    sources: list[SourceUsed] = Field(default_factory=list, max_length=MAX_ITEMS)


FeedbackOutcome = Literal["helpful", "unhelpful", "wrong_route", "stale", "incorrect"]


class FeedbackGiven(Envelope):
    """A user's verdict on an answer (input, from PMFlow's feedback center)."""

    outcome: FeedbackOutcome
    comment: str | None = Field(default=None, max_length=4000)


PROBE_DEADLINE_MS = 3000


class ProbeRequested(Envelope):
    """PMFlow's route gateway asks, before it decides, what a short external look-up finds
    (input; `question_id` names the probe and its reply)."""

    question: str = Field(min_length=1, max_length=4000)
    locale: Name = "zh-CN"
    thread_id: Name | None = None
    previous_question: str | None = Field(default=None, max_length=1000)
    effective_source_policy: Name = Field(default="external_first", description=(
        "Read by the routing table: `internal_only` (or an unknown value) probes nothing"))
    query_profile: QueryProfile = Field(default_factory=QueryProfile, description=(
        "`needs_private_context` probes nothing: the question is not sent out"))
    deadline_ms: int = Field(default=PROBE_DEADLINE_MS, ge=100, le=10_000)


class ProbeCompleted(Envelope):
    """The external probe's reply: the metrics of seed 003 step 3, no answer. Its evidence is
    kept for the answer to the same question (same tenant and plan) for a short while."""

    request_event_id: Name
    status: Literal["probed", "refused"]
    reason: ClippedLine | None = None
    metrics: ProbeMetrics | None = None
    plan: ExternalQueryPlan | None = None
    execution_id: Name | None = None
    attempts: Attempts = Field(default_factory=list)
    elapsed_ms: float = 0.0


class DeadLettered(Frozen):
    """A message a stage could not take, and why. Its envelope fields may be unknown."""

    event_id: str
    question_id: str | None = None
    tenant_id: str | None = None
    occurred_at: AwareDatetime
    schema_version: Literal[1] = SCHEMA_VERSION
    stage: Name
    reason: ClippedPassage
    origin_topic: str
    origin_partition: int
    origin_offset: int
    original_headers: dict[str, str] = Field(default_factory=dict)
    original_value: str = ""


STAGE_OUTPUTS: dict[str, type[Frozen]] = {
    "RouteDecided": RouteDecided,
    "PlanCreated": PlanCreated,
    "EvidenceCollected": EvidenceCollected,
    "EvidenceVerified": EvidenceVerified,
    "AnswerReady": AnswerReady,
    "ReplyRendered": ReplyRendered,
    "FeedbackGiven": FeedbackGiven,
    "RouteOutcomeReported": RouteOutcomeReported,
    "ProbeRequested": ProbeRequested,
    "ProbeCompleted": ProbeCompleted,
    "DeadLettered": DeadLettered,
}
