"""Evidence stage: PlanCreated -> EvidenceCollected.

The provider registry runs adapters in order, MCP first and the bounded live-search fallback
after it, and stops at the first that returns fresh evidence about what was asked: stale or
off-topic evidence lets the next adapter run with the time left. Every attempt is recorded.

The question's budget runs from when this stage takes it up: a question that waited in a
backlog gets what was left of its budget when it was planned, up to its bound (`expires_at`).
Past the bound no adapter is asked, and every attempt says `expired`.

Evidence a look-up for the same tenant and plan found about the plan a moment ago (the
external probe PMFlow asked for before deciding) is reused from the evidence cache, and the
attempt says so; nothing is asked again.

The routing table is read again before any adapter is asked: a plan whose routing snapshot it
would not let out (made by an older plan stage, or by hand) ends here, answered `refused`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from pmflow_gateway.contract.envelopes import elapsed_ms, execution_id, header_after
from pmflow_gateway.contract.relevance import off_topic, with_declared_aliases
from pmflow_gateway.contract.routing import route_policy
from pmflow_gateway.contract.urls import canonical_url, url_scheme
from pmflow_gateway.contract.verify import freshness_problem
from pmflow_gateway.handlers.failure import held_back_answer
from pmflow_gateway.ports import Clock, EvidenceAdapter, EvidenceCache
from pmflow_gateway.schemas import (
    AdapterAttempt,
    AnswerContract,
    AnswerReady,
    EvidenceCollected,
    ExternalEvidence,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    PlanCreated,
    RouteAction,
)

MIN_ATTEMPT_S = 0.05
EXPIRED = "expired"  # the outcome of an adapter never asked: the question's time ran out first
CACHE = "evidence_cache"  # the attempt of evidence reused from an earlier look-up
# An adapter that is not the last may use this share of the time left, so a hung MCP server
# still leaves the fallback a real chance inside the question's deadline.
EARLIER_ADAPTER_SHARE = 0.6


def about_the_plan(plan: ExternalQueryPlan, item: ExternalEvidence) -> bool:
    """The verifier's own question contract and freshness window, applied early."""
    return (freshness_problem(plan, item) is None
            and off_topic(plan, f"{item.title}\n{item.snippet}") is None)


def usable(items: Sequence[ExternalEvidence]) -> list[ExternalEvidence]:
    """Only http(s) evidence counts, one item per canonical URL, in the adapter's order."""
    seen: set[str] = set()
    kept: list[ExternalEvidence] = []
    for item in items:
        key = canonical_url(item.target_url)
        if url_scheme(item.target_url) in ("http", "https") and key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def evidence_deadline(event: PlanCreated, taken_at: datetime) -> datetime:
    """What was left of the budget when the plan was made, counted from `taken_at` (when
    this stage takes the question up), never past the question's bound."""
    left = max(event.context.deadline_at - event.occurred_at, timedelta(0))
    bound = event.context.expires_at
    return min(taken_at + left, bound) if bound is not None else taken_at + left


def never_asked(event: EvidenceCollected) -> bool:
    """No adapter was asked: the question's time ran out before the evidence stage's turn."""
    return bool(event.attempts) and all(a.outcome == EXPIRED for a in event.attempts)


def _why_expired(event: PlanCreated, taken_at: datetime) -> str:
    waited_s = (taken_at - event.occurred_at).total_seconds()
    if event.context.expires_at is not None and taken_at >= event.context.expires_at:
        return (f"not asked: the question waited {waited_s:.1f} s for the evidence stage, "
                "past its bound (budget plus the wait allowed)")
    return "not asked: the question's budget was used up before the evidence stage"


async def _looked_up(event: PlanCreated, adapters: Sequence[EvidenceAdapter],
                     deadline: datetime, clock: Clock,
                     cache: EvidenceCache | None) -> tuple[list[ExternalEvidence],
                                                           list[AdapterAttempt]]:
    """The cache's evidence for this plan, or the adapters'; what was about the plan is kept."""
    if cache is not None and (kept := cache.get(event.tenant_id, event.plan)) is not None:
        return kept, [AdapterAttempt(adapter=CACHE, outcome="ok", evidence_count=len(kept))]
    items, attempts, relevant = await _ask(event, adapters, deadline, clock)
    if cache is not None and relevant:
        cache.put(event.tenant_id, event.plan, items)
    return items, attempts


async def _ask(event: PlanCreated, adapters: Sequence[EvidenceAdapter], deadline: datetime,
               clock: Clock) -> tuple[list[ExternalEvidence], list[AdapterAttempt], bool]:
    attempts: list[AdapterAttempt] = []
    items: list[ExternalEvidence] = []
    for position, adapter in enumerate(adapters, start=1):
        left_s = (deadline - clock.now()).total_seconds()
        if left_s < MIN_ATTEMPT_S:
            attempts.append(AdapterAttempt(adapter=adapter.name, outcome="skipped",
                                           error="question deadline reached"))
            continue
        share = 1.0 if position == len(adapters) else EARLIER_ADAPTER_SHARE
        result = await adapter.collect(event.plan, timeout_s=left_s * share)
        attempts.extend(result.attempts)
        found = usable(result.items)
        plan = with_declared_aliases(event.plan, (f"{i.title}\n{i.snippet}" for i in found))
        relevant = [i for i in found if about_the_plan(plan, i)]
        if relevant:
            return relevant[: event.plan.result_limit], attempts, True
        if found:
            # Stale or about something else: the next adapter gets the time left, and
            # when none does better the verifier sees these and says why it refused.
            items = items or found[: event.plan.result_limit]
            attempts.append(AdapterAttempt(
                adapter=adapter.name, outcome="insufficient",
                error=f"{len(found)} item(s), none fresh and about what was asked"))
    return items, attempts, False


async def collect_evidence(
    event: PlanCreated, *, adapters: Sequence[EvidenceAdapter], clock: Clock,
    cache: EvidenceCache | None = None,
) -> EvidenceCollected | AnswerReady:
    """Evidence for the plan, from the first adapter (in order) that returns something usable;
    the refusal when the routing table keeps the question from external sources."""
    policy = route_policy(event.context.routing)
    if policy.action is not RouteAction.answer:
        return held_back_answer(event, policy, clock=clock)
    started = time.perf_counter()
    taken_at = clock.now()
    deadline = evidence_deadline(event, taken_at)
    items: list[ExternalEvidence] = []
    attempts: list[AdapterAttempt] = []
    clarify = event.plan.answer_contract is AnswerContract.clarify  # nothing to look up
    if not clarify and (deadline - taken_at).total_seconds() < MIN_ATTEMPT_S:
        why = _why_expired(event, taken_at)
        attempts = [AdapterAttempt(adapter=a.name, outcome=EXPIRED, error=why) for a in adapters]
    elif not clarify:
        items, attempts = await _looked_up(event, adapters, deadline, clock, cache)
    timings = {**event.context.stage_timings_ms, "evidence": elapsed_ms(started)}
    return EvidenceCollected(
        **header_after(event, "evidence", clock.now()),
        context=event.context.model_copy(update={"stage_timings_ms": timings,
                                                 "deadline_at": deadline}),
        plan=event.plan,
        planner=event.planner,
        bundle=ExternalEvidenceBundle(
            execution_id=execution_id(event.tenant_id, event.question_id, items),
            items=items,
        ),
        attempts=attempts,
    )
