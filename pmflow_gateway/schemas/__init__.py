"""What travels: events, contracts and topic names."""

from pmflow_gateway.schemas.contracts import (
    AdapterAttempt,
    AnswerContract,
    AnswerStatus,
    Citation,
    ExternalEvidence,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    PlannerInfo,
    ProbeMetrics,
    QueryKind,
    SourceUsed,
    Verdict,
)
from pmflow_gateway.schemas.envelope import content_id, stage_event_id
from pmflow_gateway.schemas.events import (
    AnswerReady,
    Conclusion,
    DeadLettered,
    DroppedEvidence,
    EvidenceCollected,
    EvidenceVerified,
    FeedbackGiven,
    PlanCreated,
    ProbeCompleted,
    ProbeRequested,
    QuestionContext,
    ReplyRendered,
    RouteAction,
    RouteDecided,
    RouteOutcomeReported,
    RoutePolicy,
    RoutingSnapshot,
    UpstreamSource,
)
from pmflow_gateway.schemas.topics import Topics

__all__ = [
    "AdapterAttempt", "AnswerContract", "AnswerReady", "AnswerStatus", "Citation",
    "Conclusion", "DeadLettered", "DroppedEvidence", "EvidenceCollected", "EvidenceVerified",
    "ExternalEvidence", "ExternalEvidenceBundle", "ExternalQueryPlan", "FeedbackGiven",
    "PlanCreated", "PlannerInfo", "ProbeCompleted", "ProbeMetrics", "ProbeRequested",
    "QueryKind", "QuestionContext", "ReplyRendered", "RouteAction", "RouteDecided",
    "RouteOutcomeReported", "RoutePolicy", "RoutingSnapshot", "SourceUsed", "Topics",
    "UpstreamSource", "Verdict", "content_id", "stage_event_id",
]
