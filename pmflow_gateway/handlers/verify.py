"""Verify stage: EvidenceCollected -> EvidenceVerified.

1. The short names the evidence itself declares for the asked subjects (a ticker) count as
   theirs in every check from here on, and the plan the event carries says so.
2. The evidence verifier keeps only external http(s) evidence of this execution (the source
   contract, fail-closed: an empty result stays empty, upstream sources never come back), about
   what was asked (the question contract) and inside the freshness window (the freshness
   contract), and checks the multi-source wish.
3. A place or subject the evidence reads two ways, which the question does not settle, leaves
   nothing to answer from.

Every collected item that was not kept is listed with its reason. When nothing may be
composed (the plan asks back, the reading is ambiguous, nothing was kept) the event carries
the conclusion: the status the question ends in and what the user is told.
"""

from __future__ import annotations

import time

from pmflow_gateway.contract.envelopes import elapsed_ms, header_after
from pmflow_gateway.contract.relevance import asked_place, spelt_as_asked, with_declared_aliases
from pmflow_gateway.contract.statuses import (
    AMBIGUOUS,
    AMBIGUOUS_SUBJECT,
    NOTHING_ABOUT_IT,
    ambiguity_reason,
    firm_ambiguity_reason,
    is_english,
    missing_detail,
    reply_locale,
    status_text,
    subject_ambiguity_reason,
    which_one,
)
from pmflow_gateway.contract.urls import url_key
from pmflow_gateway.contract.verify import (
    ambiguous_firm,
    ambiguous_place,
    ambiguous_subject,
    evidence_text,
    verify_evidence,
)
from pmflow_gateway.ports import Clock
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerStatus,
    Conclusion,
    DroppedEvidence,
    EvidenceCollected,
    EvidenceVerified,
    ExternalEvidence,
    Verdict,
)
from pmflow_gateway.schemas.events import DroppedContract

Judged = tuple[list[ExternalEvidence], Verdict, Conclusion | None]


def verify_collected(event: EvidenceCollected, *, clock: Clock) -> EvidenceVerified:
    """What the answer may rest on, what it may not and why, and whether anything may be
    composed at all."""
    started = time.perf_counter()
    event = event.model_copy(update={"plan": with_declared_aliases(
        event.plan, (evidence_text(i) for i in event.bundle.items))})
    kept, verdict, conclusion = judge(event)
    dropped = dropped_items(event, kept, verdict)
    timings = {**event.context.stage_timings_ms, "verify": elapsed_ms(started)}
    return EvidenceVerified(
        **header_after(event, "verify", clock.now()),
        context=event.context.model_copy(update={"stage_timings_ms": timings}),
        plan=event.plan,
        planner=event.planner,
        execution_id=event.bundle.execution_id,
        kept=kept,
        dropped=dropped,
        verdict=verdict,
        conclusion=conclusion,
        attempts=event.attempts,
    )


def judge(event: EvidenceCollected) -> Judged:
    """The kept evidence and the verdict, and the conclusion when nothing may be composed."""
    kept, verdict = verify_evidence(event)
    locale = reply_locale(event.context.question, event.context.locale)
    if event.plan.answer_contract is AnswerContract.clarify:
        missing = missing_detail(event.plan, is_english(locale))
        return kept, *_refused(AnswerStatus.clarify, verdict,
                               f"plan needs clarification: {missing}",
                               status_text(AnswerStatus.clarify, locale, missing=missing))
    kept, reason = _ambiguity(event, kept)
    if reason:
        verdict = verdict.model_copy(update={
            "dropped_reasons": [*verdict.dropped_reasons, reason]})
        if event.plan.clarify_on_ambiguity:
            which = which_one(reason, is_english(locale))
            return kept, *_refused(AnswerStatus.clarify, verdict, reason,
                                   status_text(AnswerStatus.clarify, locale, missing=which))
    if not kept:
        return kept, *_nothing_kept(verdict, locale)
    return kept, verdict, None


def _ambiguity(event: EvidenceCollected,
               kept: list[ExternalEvidence]) -> tuple[list[ExternalEvidence], str | None]:
    """The evidence for the reading the question asks, or none and why nobody may guess."""
    kept, readings = ambiguous_place(event.plan, event.context.question, kept)
    if readings:
        return kept, ambiguity_reason(asked_place(event.plan), readings)
    kept, subject = ambiguous_subject(event.plan, kept)
    if subject:
        return kept, subject_ambiguity_reason(*subject)
    kept, firms = ambiguous_firm(event.plan, event.context.question, kept)
    if firms:
        return kept, firm_ambiguity_reason(*firms)
    return kept, None


def _refused(status: AnswerStatus, verdict: Verdict, reason: str,
             answer: str) -> tuple[Verdict, Conclusion]:
    return (verdict.model_copy(update={"passed": False}),
            Conclusion(status=status, reason=reason, answer=answer))


def _nothing_kept(verdict: Verdict, locale: str) -> tuple[Verdict, Conclusion]:
    """Fresh evidence about something else is no evidence: the user is told which it was."""
    reasons = verdict.dropped_reasons
    for prefix, what in ((AMBIGUOUS, "place"), (AMBIGUOUS_SUBJECT, "subject")):
        if any(r.startswith(prefix) for r in reasons):
            return _refused(AnswerStatus.freshness_guard, verdict,
                            f"{NOTHING_ABOUT_IT}: the {what} is ambiguous",
                            status_text(AnswerStatus.freshness_guard, locale, off_topic=True))
    if any(r.startswith("off-topic") for r in reasons):
        return _refused(AnswerStatus.freshness_guard, verdict,
                        f"{NOTHING_ABOUT_IT}: every item was off-topic or out of date",
                        status_text(AnswerStatus.freshness_guard, locale, off_topic=True))
    stale = any(r.startswith("stale") for r in reasons)
    undated = not stale and any(r.startswith("undated") for r in reasons)
    return _refused(AnswerStatus.freshness_guard, verdict,
                    "no evidence inside the freshness window" if stale
                    else "no dated evidence" if undated else "no external grounding",
                    status_text(AnswerStatus.freshness_guard, locale, stale=stale,
                                undated=undated))


# ---------------------------------------------------------------- why each item was dropped


def dropped_items(event: EvidenceCollected, kept: list[ExternalEvidence],
                  verdict: Verdict) -> list[DroppedEvidence]:
    """Each collected item that was not kept, with its reason. An item's own reason is what
    the verifier says of it alone; one it would keep alone was dropped for the others'
    sake (a duplicate, an ambiguous reading, a better-spelt, dated or preferred page)."""
    chosen = {id(item) for item in kept}
    seen: set[str | None] = set()
    dropped = []
    for item in event.bundle.items:
        key = url_key(item.target_url)
        if id(item) not in chosen:
            reason = _own_reason(event, item) or _reason_among_others(
                event, item, verdict, duplicate=key in seen)
            dropped.append(DroppedEvidence(item=item, contract=_contract(reason),
                                           reason=reason))
        seen.add(key)
    return dropped


def _own_reason(event: EvidenceCollected, item: ExternalEvidence) -> str | None:
    alone = event.model_copy(update={"bundle": event.bundle.model_copy(update={"items": [item]})})
    kept, verdict = verify_evidence(alone)
    upstream = len(event.context.upstream_sources)  # one line each, before the items' own
    return None if kept else next(iter(verdict.dropped_reasons[upstream:]), "not kept")


def _reason_among_others(event: EvidenceCollected, item: ExternalEvidence, verdict: Verdict,
                         *, duplicate: bool) -> str:
    if duplicate:
        return "duplicate url"
    ambiguous = [r for r in verdict.dropped_reasons
                 if r.startswith((AMBIGUOUS, AMBIGUOUS_SUBJECT))]
    if ambiguous:
        return ambiguous[0]
    if not spelt_as_asked(event.plan, evidence_text(item)):
        return "off-topic: names the subject only in another spelling"
    if "undated: a dated page answers" in verdict.dropped_reasons and not item.freshness_score:
        return "undated: a dated page answers"
    return (f"limit: {event.plan.result_limit} better item(s) (preferred domains, authority) "
            "answer")


def _contract(reason: str) -> DroppedContract:
    if reason.startswith(("stale", "undated")):
        return "freshness"
    if reason.startswith(("off-topic", AMBIGUOUS, AMBIGUOUS_SUBJECT)):
        return "question"
    return "limit" if reason.startswith("limit") else "source"
