"""Probe stage: ProbeRequested -> ProbeCompleted.

PMFlow's route gateway asks, before it decides a route, what a short external look-up finds
(seed 003's external probe). The stage runs the question through the same cores a route
decision goes through, plan, evidence and verify, within the probe's own short deadline, and
replies with five metrics instead of an answer. The routing table is read first, as for any
question: a probe of a question that needs private context, or under an internal-only policy,
sends nothing out. The evidence it found stays in the evidence cache a short while, so the
answer to the same question, once routed here, reuses it instead of asking again.

`probe` runs that sequence; the stage table hands it the plan, evidence and verify cores bound
to their dependencies.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from pmflow_gateway.contract.envelopes import elapsed_ms, header_after
from pmflow_gateway.contract.probe import probe_metrics
from pmflow_gateway.ports import Clock
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    EvidenceVerified,
    PlanCreated,
    ProbeCompleted,
    ProbeRequested,
    RouteDecided,
)

PROBE_ORIGIN = "external_probe"
# Kept back from the probe's deadline for verifying and counting once the sources answered.
RESERVE_SHARE = 0.2
MAX_RESERVE_MS = 300


async def probe(request: ProbeRequested, *,
                plan: Callable[[RouteDecided], Awaitable[PlanCreated | AnswerReady | None]],
                collect: Callable[[PlanCreated], Awaitable[EvidenceCollected | AnswerReady]],
                verify: Callable[[EvidenceCollected], EvidenceVerified],
                clock: Clock) -> ProbeCompleted:
    """Plan, collect and verify as for a route decision, then count instead of answering."""
    started = time.perf_counter()
    planned = await plan(probe_route(request))
    if not isinstance(planned, PlanCreated):
        return probe_refused(request, planned, clock=clock, started=started)
    collected = await collect(planned)
    if isinstance(collected, AnswerReady):
        return probe_refused(request, collected, clock=clock, started=started)
    verified = verify(collected)
    return probe_completed(request, collected, verified, clock=clock, started=started)


def probe_route(request: ProbeRequested) -> RouteDecided:
    """The probe as a route decision: not decided yet (`uncertain`, external-first unless the
    request says otherwise), with the probe's deadline less the time to verify and count."""
    reserve = min(MAX_RESERVE_MS, int(request.deadline_ms * RESERVE_SHARE))
    return RouteDecided(
        event_id=request.event_id, question_id=request.question_id,
        tenant_id=request.tenant_id, occurred_at=request.occurred_at,
        question=request.question, locale=request.locale, thread_id=request.thread_id,
        previous_question=request.previous_question, route_mode="uncertain",
        effective_source_policy=request.effective_source_policy,
        decision_origin=PROBE_ORIGIN, reply_contract="external_realtime",
        query_profile=request.query_profile,
        deadline_ms=max(100, request.deadline_ms - reserve))


def probe_refused(request: ProbeRequested, answer: AnswerReady | None, *, clock: Clock,
                  started: float) -> ProbeCompleted:
    """The reply of a probe the routing table kept from external sources: nothing was sent."""
    reason = answer.reason if answer is not None else "routing policy: not an external question"
    return ProbeCompleted(**header_after(request, "probe", clock.now()),
                          request_event_id=request.event_id, status="refused", reason=reason,
                          elapsed_ms=elapsed_ms(started))


def probe_completed(request: ProbeRequested, collected: EvidenceCollected,
                    verified: EvidenceVerified, *, clock: Clock,
                    started: float) -> ProbeCompleted:
    """The metrics of what the look-up collected and what the verifier kept of it."""
    return ProbeCompleted(
        **header_after(request, "probe", clock.now()),
        request_event_id=request.event_id, status="probed",
        metrics=probe_metrics(verified.plan, collected.bundle.items, verified.kept),
        plan=verified.plan, execution_id=collected.bundle.execution_id,
        attempts=collected.attempts, elapsed_ms=elapsed_ms(started))
