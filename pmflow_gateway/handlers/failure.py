"""The `failed` answer a question gets when a stage gives up on it, so the user still hears back."""

from __future__ import annotations

from datetime import timedelta

from pmflow_gateway.contract.envelopes import header_after
from pmflow_gateway.contract.statuses import status_text
from pmflow_gateway.ports import Clock
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    EvidenceCollected,
    ExternalQueryPlan,
    PlanCreated,
    PlannerInfo,
    QuestionContext,
    RouteDecided,
    Verdict,
)


def failed_answer(event: RouteDecided | PlanCreated | EvidenceCollected, reason: str, *,
                  clock: Clock) -> AnswerReady:
    now = clock.now()
    if isinstance(event, RouteDecided):
        context = QuestionContext(question=event.question, locale=event.locale,
                                  thread_id=event.thread_id, routing=event.routing(),
                                  deadline_at=now + timedelta(milliseconds=event.deadline_ms or 0))
        plan, planner = ExternalQueryPlan(), PlannerInfo(mode="none", reason=reason)
    else:
        context, plan, planner = event.context, event.plan, event.planner
    return AnswerReady(
        **header_after(event, "answer", now),
        context=context.model_copy(update={"upstream_sources": []}),
        status=AnswerStatus.failed,
        answer=status_text(AnswerStatus.failed, context.locale),
        reason=reason,
        plan=plan,
        planner=planner,
        verdict=Verdict(passed=False, violations=[reason]),
        attempts=event.attempts if isinstance(event, EvidenceCollected) else [],
        composer="none",
    )
