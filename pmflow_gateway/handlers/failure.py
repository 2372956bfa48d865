"""Answers made without judging any evidence, so the user still hears back: `failed` when a
stage gives up on the question, `timed_out` when its time ran out before any source was asked."""

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
                  clock: Clock, status: AnswerStatus = AnswerStatus.failed) -> AnswerReady:
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
        status=status,
        answer=status_text(status, context.locale),
        reason=reason,
        plan=plan,
        planner=planner,
        verdict=Verdict(passed=False,
                        violations=[reason] if status is AnswerStatus.failed else []),
        attempts=event.attempts if isinstance(event, EvidenceCollected) else [],
        composer="none",
    )


def timed_out_answer(event: EvidenceCollected, *, clock: Clock) -> AnswerReady:
    """The answer of a question no source was asked about: its attempts say why."""
    reason = next((a.error for a in event.attempts if a.error), "no source asked in time")
    return failed_answer(event, reason, clock=clock, status=AnswerStatus.timed_out)
