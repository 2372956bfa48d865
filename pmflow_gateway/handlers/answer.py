"""Answer stage: EvidenceCollected -> AnswerReady.

1. The evidence verifier keeps only external http(s) evidence of this execution (fail-closed:
   an empty result stays empty; upstream sources never come back) and checks freshness and
   the multi-source wish.
2. A composer (extractive by default, a model when configured) writes the answer only from
   what was kept.
3. The answer verifier checks the draft again; any violation rejects it and nothing goes out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pmflow_gateway.contract.demo import is_demo_url
from pmflow_gateway.contract.sources import source_title
from pmflow_gateway.contract.statuses import (
    is_english,
    missing_detail,
    single_source_note,
    status_text,
)
from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.contract.verify import (
    asked_about,
    quotes_of_upstream,
    renumbered,
    verify_draft,
    verify_evidence,
    verify_sources,
)
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.ports import Clock, Composer, Draft
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerReady,
    AnswerStatus,
    Citation,
    EvidenceCollected,
    ExternalEvidence,
    SourceUsed,
    Verdict,
    stage_event_id,
)

# ---------------------------------------------------------------- the stage

MIN_COMPOSE_S = 0.2  # below this a model call cannot finish: compose extractively


@dataclass(frozen=True, kw_only=True)
class Outcome:
    status: AnswerStatus
    answer: str
    verdict: Verdict
    reason: str | None = None
    items: tuple[ExternalEvidence, ...] = ()
    composer: str = "none"


async def decide(event: EvidenceCollected, *, clock: Clock, composer: Composer) -> Outcome:
    """Verify the evidence, compose, verify the draft: the status and what may go out."""
    kept, verdict = verify_evidence(event)
    locale = event.context.locale
    if event.plan.answer_contract is AnswerContract.clarify:
        missing = missing_detail(event.plan, is_english(locale))
        return Outcome(status=AnswerStatus.clarify, verdict=verdict.model_copy(
            update={"passed": False}), reason=f"plan needs clarification: {missing}",
            answer=status_text(AnswerStatus.clarify, locale, missing=missing))
    if not kept:
        stale = any(r.startswith("stale") for r in verdict.dropped_reasons)
        reason = "no evidence inside the freshness window" if stale else "no external grounding"
        return Outcome(status=AnswerStatus.freshness_guard, verdict=verdict, reason=reason,
                       answer=status_text(AnswerStatus.freshness_guard, locale, stale=stale))
    left_s = (event.context.deadline_at - clock.now()).total_seconds()
    try:
        draft = await (composer if left_s >= MIN_COMPOSE_S else EXTRACTIVE).compose(
            event.context.question, event.plan, kept, timeout_s=max(left_s, MIN_COMPOSE_S))
    # A composer bug must end the question with a clear status, not a redelivery loop.
    except Exception as exc:
        return Outcome(status=AnswerStatus.failed, verdict=verdict.model_copy(
            update={"passed": False}), reason=f"composer failed: {type(exc).__name__}",
            answer=status_text(AnswerStatus.failed, locale))
    if not draft.answer.strip():
        # Evidence came back but every sentence was planted text or off-limits: nothing
        # reliable to say, which is the guard's message, not a contract violation.
        return Outcome(status=AnswerStatus.freshness_guard, verdict=verdict.model_copy(
            update={"passed": False}), reason="no usable sentence in the external evidence",
            answer=status_text(AnswerStatus.freshness_guard, locale))
    return _checked(event, draft, kept, verdict)


def _checked(event: EvidenceCollected, draft: Draft, kept: list[ExternalEvidence],
             verdict: Verdict) -> Outcome:
    locale = event.context.locale
    if not verdict.multi_source_ok and draft.answer.strip():
        draft = Draft(answer=f"{draft.answer}\n{single_source_note(locale)}", cited=draft.cited,
                      composer=draft.composer, note=draft.note)
    draft, used = renumbered(draft, kept)
    asked = asked_about(event)
    violations = verify_draft(draft, used, asked=asked)
    violations += verify_sources(_sources(used), used, asked=asked)
    violations += quotes_of_upstream(draft.answer, event)
    if violations:
        return Outcome(status=AnswerStatus.rejected, reason="; ".join(violations)[:1000],
                       verdict=verdict.model_copy(update={"passed": False,
                                                          "violations": violations}),
                       answer=status_text(AnswerStatus.rejected, locale), composer=draft.composer)
    return Outcome(status=AnswerStatus.answered, answer=draft.answer, reason=draft.note,
                   verdict=verdict.model_copy(update={"passed": True, "violations": []}),
                   items=tuple(used), composer=draft.composer)


def _sources(items: list[ExternalEvidence]) -> list[SourceUsed]:
    return [SourceUsed(n=n, title=source_title(i), site=bare_host(i.target_url),
                       url=i.target_url)
            for n, i in enumerate(items, start=1)]


async def verify_and_compose(event: EvidenceCollected, *, clock: Clock,
                             composer: Composer = EXTRACTIVE) -> AnswerReady:
    started = time.perf_counter()
    outcome = await decide(event, clock=clock, composer=composer)
    items = list(outcome.items)
    timings = {**event.context.stage_timings_ms,
               "answer": round((time.perf_counter() - started) * 1000, 3)}
    return AnswerReady(
        event_id=stage_event_id(event.tenant_id, event.question_id, "answer"),
        question_id=event.question_id,
        tenant_id=event.tenant_id,
        occurred_at=clock.now(),
        # Upstream sources are dropped here for good, so no later stage can bring them back.
        context=event.context.model_copy(update={"stage_timings_ms": timings,
                                                 "upstream_sources": []}),
        status=outcome.status,
        answer=outcome.answer,
        reason=outcome.reason,
        citations=[Citation(n=s.n, target_url=s.url, title=s.title) for s in _sources(items)],
        sources_used=_sources(items),
        execution_id=event.bundle.execution_id,
        plan=event.plan,
        planner=event.planner,
        verdict=outcome.verdict,
        attempts=event.attempts,
        composer=outcome.composer,
        demo=any(is_demo_url(s.url) for s in _sources(items)),
    )
