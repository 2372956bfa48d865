"""The stages: which topic each reads, which core it calls, where the result goes.

Follow one question by reading this table top to bottom; each core lives in `handlers/`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Span

from pmflow_gateway import tracing
from pmflow_gateway.handlers.answer import verify_and_compose
from pmflow_gateway.handlers.evidence import collect_evidence
from pmflow_gateway.handlers.failure import failed_answer
from pmflow_gateway.handlers.feedback import remember_feedback
from pmflow_gateway.handlers.memory import preferred_domain_hints, remember_answer
from pmflow_gateway.handlers.plan import is_for_us, plan_question
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    FeedbackGiven,
    PlanCreated,
    ReplyRendered,
    RouteDecided,
    Topics,
)
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope

Handle = Callable[[Deps, Any], Awaitable[Frozen | None]]


@dataclass(frozen=True, kw_only=True)
class Stage:
    name: str
    description: str
    source: Callable[[Topics], str]
    model: type[Envelope]
    handle: Handle
    sink: Callable[[Topics], str] | None = None
    # When the stage gives up on a question, the user still gets a `failed` answer.
    gives_up_with_answer: bool = False


async def _plan(g: Deps, e: RouteDecided) -> PlanCreated | None:
    hints = (await preferred_domain_hints(g.store, e.tenant_id, e.question)
             if g.memory_domain_hints and is_for_us(e) else [])
    return await plan_question(e, planner=g.planner, clock=g.clock, defaults=g.plan_defaults,
                               domain_hints=hints)


async def _evidence(g: Deps, e: PlanCreated) -> EvidenceCollected:
    return await collect_evidence(e, adapters=g.adapters, clock=g.clock)


async def _answer(g: Deps, e: EvidenceCollected) -> AnswerReady:
    return await verify_and_compose(e, clock=g.clock, composer=g.composer)


async def _render(g: Deps, e: AnswerReady) -> Frozen:
    return render_reply(e, clock=g.clock)


async def _remember(g: Deps, e: AnswerReady) -> None:
    with tracing.span("db write qa_records", **{"db.operation.name": "record_answer"}) as s:
        s.set_attribute("pmflow.applied", await remember_answer(e, store=g.store))


async def _feedback(g: Deps, e: FeedbackGiven) -> None:
    with tracing.span("db write qa_records", **{"db.operation.name": "apply_feedback"}) as s:
        s.set_attribute("pmflow.applied", await remember_feedback(e, store=g.store))


STAGES: dict[str, Stage] = {
    s.name: s
    for s in [
        Stage(name="plan", description="Route decision -> search plan (model or rules).",
              source=lambda t: t.route_decided, model=RouteDecided, handle=_plan,
              sink=lambda t: t.plan_created, gives_up_with_answer=True),
        Stage(name="evidence", description="Plan -> external evidence (MCP first, then fallback).",
              source=lambda t: t.plan_created, model=PlanCreated, handle=_evidence,
              sink=lambda t: t.evidence_collected, gives_up_with_answer=True),
        Stage(name="answer", description="Evidence -> verified, grounded answer (final event).",
              source=lambda t: t.evidence_collected, model=EvidenceCollected, handle=_answer,
              sink=lambda t: t.answer_ready, gives_up_with_answer=True),
        Stage(name="render", description="Answer -> the reply the user sees.",
              source=lambda t: t.answer_ready, model=AnswerReady, handle=_render,
              sink=lambda t: t.reply_rendered),
        Stage(name="memory", description="Answer -> QA record and route memory.",
              source=lambda t: t.answer_ready, model=AnswerReady, handle=_remember),
        # Feedback for an unknown question is retried like any failure before it is
        # dead-lettered: it may simply have overtaken the answer it is about.
        Stage(name="feedback", description="Feedback -> QA record and route memory.",
              source=lambda t: t.feedback, model=FeedbackGiven, handle=_feedback),
    ]
}


def give_up_answer(g: Deps, event: Envelope, reason: str) -> AnswerReady:
    assert isinstance(event, RouteDecided | PlanCreated | EvidenceCollected)
    return failed_answer(event, reason, clock=g.clock)


def annotate(span: Span, output: Frozen) -> None:
    """What a reader of the trace needs to know about a stage's result, on its span."""
    if isinstance(output, PlanCreated):
        span.set_attributes({"pmflow.planner.mode": output.planner.mode,
                             "pmflow.plan.query_kind": str(output.plan.query_kind),
                             "pmflow.plan.answer_contract": str(output.plan.answer_contract),
                             "pmflow.plan.queries": len(output.plan.search_queries)})
        if output.planner.reason:
            span.add_event("planner.fallback", {"reason": output.planner.reason[:500]})
    elif isinstance(output, EvidenceCollected):
        span.set_attributes({"pmflow.evidence.count": len(output.bundle.items),
                             "pmflow.evidence.attempts": len(output.attempts),
                             "pmflow.execution_id": output.bundle.execution_id})
        for a in output.attempts:
            span.add_event("adapter.attempt", {
                "adapter": a.adapter, "server": a.server or "", "tool": a.tool or "",
                "outcome": a.outcome, "latency_ms": a.latency_ms,
                "evidence_count": a.evidence_count, "error": (a.error or "")[:300]})
    elif isinstance(output, AnswerReady):
        v = output.verdict
        span.set_attributes({"pmflow.status": str(output.status),
                             "pmflow.composer": output.composer})
        span.add_event("verifier.verdict", {
            "passed": v.passed, "kept": v.kept, "dropped": v.dropped,
            "freshness_ok": v.freshness_ok, "multi_source_ok": v.multi_source_ok,
            "violations": "; ".join(v.violations)[:500],
            "dropped_reasons": "; ".join(v.dropped_reasons)[:500]})
    elif isinstance(output, ReplyRendered):
        span.set_attributes({"pmflow.status": str(output.status),
                             "pmflow.reply.sources": len(output.sources)})
