"""What a reader of the trace needs to know about a stage's result, set on its span by
whoever ran the stage (the workers' runner, the in-process chain)."""

from __future__ import annotations

from opentelemetry.trace import Span

from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    EvidenceVerified,
    PlanCreated,
    ProbeCompleted,
    ReplyRendered,
)
from pmflow_gateway.schemas.contracts import Frozen


def annotate(span: Span, output: Frozen) -> None:
    """What a reader of the trace needs to know about a stage's result, on its span."""
    if not span.is_recording():  # tracing off: nothing to build
        return
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
    elif isinstance(output, EvidenceVerified):
        _annotate_verified(span, output)
    elif isinstance(output, AnswerReady):
        v = output.verdict
        span.set_attributes({"pmflow.status": str(output.status),
                             "pmflow.composer": output.composer})
        if output.reason:  # e.g. why the model composer fell back to the extractive one
            span.set_attribute("pmflow.reason", output.reason[:500])
        span.add_event("verifier.verdict", {
            "passed": v.passed, "kept": v.kept, "dropped": v.dropped,
            "freshness_ok": v.freshness_ok, "multi_source_ok": v.multi_source_ok,
            "violations": "; ".join(v.violations)[:500],
            "dropped_reasons": "; ".join(v.dropped_reasons)[:500]})
    elif isinstance(output, ProbeCompleted):
        span.set_attributes({"pmflow.probe.status": output.status,
                             **({f"pmflow.probe.{k}": v for k, v in
                                 output.metrics.model_dump().items()} if output.metrics else {})})
    elif isinstance(output, ReplyRendered):
        span.set_attributes({"pmflow.status": str(output.status),
                             "pmflow.reply.sources": len(output.sources)})


def _annotate_verified(span: Span, output: EvidenceVerified) -> None:
    v = output.verdict
    span.set_attributes({"pmflow.verify.kept": len(output.kept),
                         "pmflow.verify.dropped": len(output.dropped),
                         "pmflow.verify.conclusion": str(output.conclusion.status)
                         if output.conclusion else "compose"})
    span.add_event("verifier.verdict", {
        "passed": v.passed, "kept": v.kept, "dropped": v.dropped,
        "freshness_ok": v.freshness_ok, "multi_source_ok": v.multi_source_ok,
        "dropped_reasons": "; ".join(v.dropped_reasons)[:500]})
    for d in output.dropped[:10]:
        span.add_event("evidence.dropped", {"url": d.item.target_url[:300],
                                            "contract": d.contract, "reason": d.reason[:300]})
