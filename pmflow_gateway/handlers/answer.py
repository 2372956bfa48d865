"""Answer stage: EvidenceVerified -> AnswerReady.

1. What the verify stage kept is all there is to answer from; when it concluded that nothing
   may be composed (the plan asks back, an ambiguous reading, nothing kept), its conclusion is
   the answer.
2. A composer (extractive by default, a model when configured) writes the answer only from
   the verified evidence.
3. The answer verifier checks the draft again; any violation rejects it and nothing goes out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pmflow_gateway.contract.agreement import DISAGREE
from pmflow_gateway.contract.demo import is_demo_url
from pmflow_gateway.contract.envelopes import elapsed_ms, header_after
from pmflow_gateway.contract.scoring import published_at
from pmflow_gateway.contract.slots import figures_not_in
from pmflow_gateway.contract.sources import source_title
from pmflow_gateway.contract.statuses import (
    NOTHING_ABOUT_IT,
    reply_locale,
    single_source_note,
    status_text,
)
from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.contract.verify import (
    asked_about,
    misses_the_question,
    quotes_of_upstream,
    renumbered,
    unsupported,
    verify_draft,
    verify_sources,
)
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.ports import Clock, Composer, Draft
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    Citation,
    EvidenceCollected,
    EvidenceVerified,
    ExternalEvidence,
    ExternalEvidenceBundle,
    SourceUsed,
    Verdict,
)

# ---------------------------------------------------------------- the stage

MIN_COMPOSE_S = 0.2  # below this a model call cannot finish: compose extractively


@dataclass(frozen=True, kw_only=True)
class Outcome:
    status: AnswerStatus
    answer: str
    verdict: Verdict
    reason: str | None = None
    sources: tuple[SourceUsed, ...] = ()  # of the items the answer cites, numbered as cited
    composer: str = "none"


async def decide(event: EvidenceVerified, *, clock: Clock, composer: Composer) -> Outcome:
    """Compose from the verified evidence and verify the draft: the status and what may go
    out; the verifier's conclusion when it left nothing to compose."""
    if event.conclusion is not None:
        return Outcome(status=event.conclusion.status, answer=event.conclusion.answer,
                       verdict=event.verdict, reason=event.conclusion.reason)
    collected = _as_collected(event)
    kept, verdict = list(event.kept), event.verdict
    locale = reply_locale(event.context.question, event.context.locale)
    left_s = (event.context.deadline_at - clock.now()).total_seconds()
    try:
        draft = await (composer if left_s >= MIN_COMPOSE_S else EXTRACTIVE).compose(
            event.context.question, event.plan, kept, timeout_s=max(left_s, MIN_COMPOSE_S))
        draft = await _reextracted_if_unsupported(collected, draft, kept)
    # A composer bug must end the question with a clear status, not a redelivery loop.
    except Exception as exc:
        return _refused(AnswerStatus.failed, verdict, f"composer failed: {type(exc).__name__}",
                        status_text(AnswerStatus.failed, locale))
    if not draft.answer.strip():
        # Evidence came back but no sentence of it is about what was asked: nothing reliable
        # to say, which is the guard's message, not a contract violation.
        return _refused(AnswerStatus.freshness_guard, verdict,
                        f"{NOTHING_ABOUT_IT}: "
                        f"{draft.note or 'no usable sentence in the external evidence'}",
                        status_text(AnswerStatus.freshness_guard, locale, off_topic=True))
    return _checked(collected, draft, kept, verdict, locale)


def _as_collected(event: EvidenceVerified) -> EvidenceCollected:
    """The draft checks read the question, the plan and the upstream sources as collected:
    the verified event in the shape those checks take (built, not validated again)."""
    return EvidenceCollected.model_construct(
        event_id=event.event_id, question_id=event.question_id, tenant_id=event.tenant_id,
        occurred_at=event.occurred_at, schema_version=event.schema_version,
        context=event.context, plan=event.plan, planner=event.planner,
        bundle=ExternalEvidenceBundle.model_construct(execution_id=event.execution_id,
                                                      items=list(event.kept)),
        attempts=event.attempts)


async def _reextracted_if_unsupported(event: EvidenceCollected, draft: Draft,
                                      kept: list[ExternalEvidence]) -> Draft:
    """A model sentence its evidence does not carry, or a draft that does not state the asked
    kind of value or states another qualifier, is replaced by the quoted answer. A draft
    that breaks the source contract (an upstream quote, a foreign link, an internal name) is
    not repaired: it goes to the answer verifier as it is and is rejected there, so the
    violation is recorded and nothing goes out."""
    if draft.composer == EXTRACTIVE.name or not draft.answer.strip():
        return draft
    problems = (unsupported(draft, kept, event.plan)
                + misses_the_question(draft, event.context.question, event.plan))
    if not problems or _breaks_source_contract(event, draft, kept):
        return draft
    quoted = await EXTRACTIVE.compose(event.context.question, event.plan, kept,
                                      timeout_s=MIN_COMPOSE_S)
    return Draft(answer=quoted.answer, cited=quoted.cited, composer=quoted.composer,
                 note=f"model draft rejected: {problems[0]}"[:300])


def _breaks_source_contract(event: EvidenceCollected, draft: Draft,
                            kept: list[ExternalEvidence]) -> bool:
    return bool(quotes_of_upstream(draft.answer, event)
                or verify_draft(draft, [i.target_url for i in kept], asked=asked_about(event)))


def _refused(status: AnswerStatus, verdict: Verdict, reason: str, answer: str) -> Outcome:
    return Outcome(status=status, verdict=verdict.model_copy(update={"passed": False}),
                   reason=reason, answer=answer)


def _checked(event: EvidenceCollected, draft: Draft, kept: list[ExternalEvidence],
             verdict: Verdict, locale: str) -> Outcome:
    if not verdict.multi_source_ok and draft.answer.strip():
        disagree = any(r.startswith(DISAGREE) for r in verdict.dropped_reasons)
        note = single_source_note(locale, disagree=disagree)
        draft = Draft(answer=f"{draft.answer}\n{note}", cited=draft.cited,
                      composer=draft.composer, note=draft.note)
    draft, used = renumbered(draft, kept)
    asked = asked_about(event)
    sources = _sources(used, draft.answer)
    urls = [i.target_url for i in used]
    violations = verify_draft(draft, urls, asked=asked)
    violations += verify_sources(sources, urls, asked=asked)
    violations += quotes_of_upstream(draft.answer, event)
    violations += unsupported(draft, used, event.plan)
    if violations:
        return Outcome(status=AnswerStatus.rejected, reason="; ".join(violations)[:1000],
                       verdict=verdict.model_copy(update={"passed": False,
                                                          "violations": violations}),
                       answer=status_text(AnswerStatus.rejected, locale), composer=draft.composer)
    return Outcome(status=AnswerStatus.answered, answer=draft.answer, reason=draft.note,
                   verdict=verdict.model_copy(update={"passed": True, "violations": []}),
                   sources=tuple(sources), composer=draft.composer)


def _sources(items: list[ExternalEvidence], answer: str) -> list[SourceUsed]:
    """The numbered sources; a title shows no figure the answer does not state."""
    return [SourceUsed(n=n, title=figures_not_in(source_title(i.title, i.target_url), answer),
                       site=bare_host(i.target_url), url=i.target_url, published_at=published_at(i),
                       freshness=i.freshness_score)
            for n, i in enumerate(items, start=1)]


async def compose_answer(event: EvidenceVerified, *, clock: Clock,
                         composer: Composer = EXTRACTIVE) -> AnswerReady:
    started = time.perf_counter()
    outcome = await decide(event, clock=clock, composer=composer)
    sources = list(outcome.sources)
    timings = {**event.context.stage_timings_ms, "answer": elapsed_ms(started)}
    return AnswerReady(
        **header_after(event, "answer", clock.now()),
        # Upstream sources are dropped here for good, so no later stage can bring them back.
        context=event.context.model_copy(update={"stage_timings_ms": timings,
                                                 "upstream_sources": []}),
        status=outcome.status,
        answer=outcome.answer,
        reason=outcome.reason,
        citations=[Citation(n=s.n, target_url=s.url, title=s.title) for s in sources],
        sources_used=sources,
        execution_id=event.execution_id,
        plan=event.plan,
        planner=event.planner,
        verdict=outcome.verdict,
        attempts=event.attempts,
        composer=outcome.composer,
        demo=any(is_demo_url(s.url) for s in sources),
    )
