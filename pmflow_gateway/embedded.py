"""The embedded default: one question through the same stage cores, in process, no Kafka."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Span

from pmflow_gateway import tracing
from pmflow_gateway.adapters.traced_store import traced
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    EvidenceVerified,
    PlanCreated,
    ProbeCompleted,
    ProbeRequested,
    ReplyRendered,
    RouteDecided,
    Topics,
)
from pmflow_gateway.streams.retries import Retries, call_stage, failure_reason
from pmflow_gateway.streams.span_attributes import annotate
from pmflow_gateway.streams.stages import (
    ANSWER,
    EVIDENCE,
    MEMORY,
    PLAN,
    PROBE,
    RENDER,
    VERIFY,
    In,
    Out,
    Stage,
)

log = logging.getLogger(__name__)
Progress = Callable[[str, object], None]


@dataclass(frozen=True)
class Outcome:
    plan: PlanCreated | None
    evidence: EvidenceCollected | None
    answer: AnswerReady | None
    reply: ReplyRendered | None
    memory_error: str | None = None
    """Why the answer could not be remembered (the store away, or refusing it); the answer
    and the reply stand either way."""
    verified: EvidenceVerified | None = None


class _GaveUp(Exception):
    """A stage kept failing; carries the `failed` answer the user gets instead."""

    def __init__(self, answer: AnswerReady) -> None:
        super().__init__(answer.reason)
        self.answer = answer


class _Chain:
    """Runs stages with the runner's retries, each in a span chained to the one before."""

    def __init__(self, deps: Deps, retry: Retries) -> None:
        self.deps, self.retry = traced(deps), retry  # store writes show in the trace
        self.last: Span | None = None

    async def run(self, stage: Stage[In, Out], event: In, *, after: Span | None) -> Out:
        """The stage's output; after the last retry, the give-up answer as `_GaveUp`."""
        def on_retry(attempt: int, exc: Exception) -> None:
            log.warning("stage %s failed on %s (attempt %d): %r", stage.name,
                        event.question_id, attempt, exc)

        with tracing.in_process(topic=stage.source(_TOPICS), stage=stage.name,
                                after=after) as span:
            span.set_attributes({"pmflow.question_id": event.question_id,
                                 "pmflow.tenant_id": event.tenant_id})
            self.last = span
            try:
                output = await call_stage(stage, self.deps, event, self.retry, on_retry)
            except Exception as exc:
                tracing.mark_error(span, failure_reason(exc))
                if stage.give_up is None:
                    raise
                raise _GaveUp(stage.give_up(self.deps, event, failure_reason(exc))) from exc
            if output is not None:
                annotate(span, output)
            return output

    async def remember(self, answer: AnswerReady, *, after: Span | None) -> str | None:
        """Write the answer to the memories; why not, when that failed. A store that is away
        is not waited for here: the caller has its answer and is told it was not kept."""
        try:
            await self.run(MEMORY, answer, after=after)
        except Exception as exc:
            log.warning("the answer to %s was not remembered: %s", answer.question_id,
                        failure_reason(exc))
            return failure_reason(exc)
        return None


_TOPICS = Topics()  # span names as the workers' with the default prefix


async def ask_in_process(route: RouteDecided, deps: Deps, *, progress: Progress | None = None,
                         retry: Retries | None = None) -> Outcome:
    """Plan, collect, verify, answer, render and remember, exactly as the workers would: a
    stage that keeps failing leaves the user a `failed` answer, and a stage that ends the
    question early (the routing policy kept it from external sources, its time ran out) its
    own answer, rendered and remembered like any other. A memory write that fails costs
    nothing else: the outcome carries the answer and says why it was not remembered."""
    report = progress or (lambda stage, event: None)
    chain = _Chain(deps, retry or Retries())
    made: dict[str, Any] = {}
    event: Any = route
    try:
        for stage in (PLAN, EVIDENCE, VERIFY, ANSWER):
            event = await chain.run(stage, event, after=chain.last)
            if event is None:
                report("skipped", route)
                return Outcome(None, None, None, None)
            if isinstance(event, AnswerReady):
                break
            made[stage.name] = event
            report(stage.name, event)
        answer: AnswerReady = event
    except _GaveUp as gave_up:
        answer = gave_up.answer
    report("answer", answer)
    # Both read the answer, as both workers do: siblings under the stage that made it.
    answered = chain.last
    reply = await chain.run(RENDER, answer, after=answered)
    memory_error = await chain.remember(answer, after=answered)
    report("reply", reply)
    return Outcome(made.get("plan"), made.get("evidence"), answer, reply, memory_error,
                   verified=made.get("verify"))


async def probe_in_process(request: ProbeRequested, deps: Deps, *,
                           retry: Retries | None = None) -> ProbeCompleted:
    """The external probe, exactly as the probe stage runs it, in one span."""
    chain = _Chain(deps, retry or Retries())
    completed: ProbeCompleted = await chain.run(PROBE, request, after=None)
    return completed
