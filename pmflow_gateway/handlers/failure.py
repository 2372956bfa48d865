"""Answers made without judging any evidence, so the user still hears back: `failed` when a
stage gives up on the question, `timed_out` when its time ran out before any source was asked,
`refused` or `clarify` when the routing policy keeps it from external sources."""

from __future__ import annotations

from datetime import timedelta

from pmflow_gateway.contract.envelopes import header_after
from pmflow_gateway.contract.statuses import policy_text, reply_locale, status_text
from pmflow_gateway.ports import Clock
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    EvidenceCollected,
    EvidenceVerified,
    ExternalQueryPlan,
    PlanCreated,
    PlannerInfo,
    QuestionContext,
    RouteAction,
    RouteDecided,
    RoutePolicy,
    Verdict,
)

Unanswered = RouteDecided | PlanCreated | EvidenceCollected | EvidenceVerified


def failed_answer(event: Unanswered, reason: str, *,
                  clock: Clock, status: AnswerStatus = AnswerStatus.failed,
                  answer: str | None = None) -> AnswerReady:
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
        answer=answer or status_text(status, context.locale),
        reason=reason,
        plan=plan,
        planner=planner,
        verdict=Verdict(passed=False,
                        violations=[reason] if status is AnswerStatus.failed else []),
        attempts=[] if isinstance(event, RouteDecided | PlanCreated) else event.attempts,
        composer="none",
    )


def timed_out_answer(event: EvidenceCollected, *, clock: Clock) -> AnswerReady:
    """The answer of a question no source was asked about: its attempts say why."""
    reason = next((a.error for a in event.attempts if a.error), "no source asked in time")
    return failed_answer(event, reason, clock=clock, status=AnswerStatus.timed_out)


def held_back_answer(event: RouteDecided | PlanCreated, policy: RoutePolicy, *,
                     clock: Clock) -> AnswerReady:
    """The answer of a question the routing policy keeps from external sources: it says why,
    in the question's language, and carries the policy in its routing snapshot."""
    status = AnswerStatus.clarify if policy.action is RouteAction.clarify else AnswerStatus.refused
    question, locale = ((event.question, event.locale) if isinstance(event, RouteDecided)
                        else (event.context.question, event.context.locale))
    locale = reply_locale(question, locale)
    answer = failed_answer(event, f"routing policy: {policy.reason}", clock=clock, status=status,
                           answer=policy_text(policy.rule, locale) or status_text(status, locale))
    routing = answer.context.routing.model_copy(update={"policy": policy})
    return answer.model_copy(update={"context": answer.context.model_copy(
        update={"routing": routing})})
