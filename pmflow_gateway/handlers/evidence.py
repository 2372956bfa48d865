"""Evidence stage: PlanCreated -> EvidenceCollected.

The provider registry runs adapters in order, MCP first and the bounded live-search fallback
after it, and stops at the first that returns fresh evidence about what was asked: stale or
off-topic evidence lets the next adapter run with the time left. Every attempt is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from pmflow_gateway.contract.envelopes import elapsed_ms, header_after
from pmflow_gateway.contract.relevance import off_topic
from pmflow_gateway.contract.urls import canonical_url
from pmflow_gateway.contract.verify import freshness_problem
from pmflow_gateway.ports import Clock, EvidenceAdapter
from pmflow_gateway.schemas import (
    AdapterAttempt,
    AnswerContract,
    EvidenceCollected,
    ExternalEvidence,
    ExternalEvidenceBundle,
    ExternalQueryPlan,
    PlanCreated,
    stage_event_id,
)

MIN_ATTEMPT_S = 0.05
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
        scheme = urlsplit(item.target_url).scheme.lower()
        key = canonical_url(item.target_url)
        if scheme in ("http", "https") and key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


async def collect_evidence(
    event: PlanCreated, *, adapters: Sequence[EvidenceAdapter], clock: Clock
) -> EvidenceCollected:
    """Evidence for the plan, from the first adapter (in order) that returns something usable."""
    started = time.perf_counter()
    attempts: list[AdapterAttempt] = []
    items: list[ExternalEvidence] = []
    if event.plan.answer_contract is not AnswerContract.clarify:
        for position, adapter in enumerate(adapters, start=1):
            left_s = (event.context.deadline_at - clock.now()).total_seconds()
            if left_s < MIN_ATTEMPT_S:
                attempts.append(AdapterAttempt(adapter=adapter.name, outcome="skipped",
                                               error="question deadline reached"))
                continue
            share = 1.0 if position == len(adapters) else EARLIER_ADAPTER_SHARE
            result = await adapter.collect(event.plan, timeout_s=left_s * share)
            attempts.extend(result.attempts)
            found = usable(result.items)
            relevant = [i for i in found if about_the_plan(event.plan, i)]
            if relevant:
                items = relevant[: event.plan.result_limit]
                break
            if found:
                # Stale or about something else: the next adapter gets the time left, and
                # when none does better the verifier sees these and says why it refused.
                items = items or found[: event.plan.result_limit]
                attempts.append(AdapterAttempt(
                    adapter=adapter.name, outcome="insufficient",
                    error=f"{len(found)} item(s), none fresh and about what was asked"))
    timings = {**event.context.stage_timings_ms, "evidence": elapsed_ms(started)}
    return EvidenceCollected(
        **header_after(event, "evidence", clock.now()),
        context=event.context.model_copy(update={"stage_timings_ms": timings}),
        plan=event.plan,
        planner=event.planner,
        bundle=ExternalEvidenceBundle(
            execution_id=stage_event_id(event.tenant_id, event.question_id, "execution"),
            items=items,
        ),
        attempts=attempts,
    )
