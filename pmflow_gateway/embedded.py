"""The embedded default: one question through the same stage cores, in process, no Kafka."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    PlanCreated,
    ReplyRendered,
    RouteDecided,
)
from pmflow_gateway.streams.stages import (
    ANSWER,
    EVIDENCE,
    MEMORY,
    PLAN,
    RENDER,
    In,
    Out,
    Retries,
    Stage,
    failure_reason,
)

log = logging.getLogger(__name__)
Progress = Callable[[str, object], None]


@dataclass(frozen=True)
class Outcome:
    plan: PlanCreated | None
    evidence: EvidenceCollected | None
    answer: AnswerReady | None
    reply: ReplyRendered | None


class _GaveUp(Exception):
    """A stage kept failing; carries the `failed` answer the user gets instead."""

    def __init__(self, answer: AnswerReady) -> None:
        super().__init__(answer.reason)
        self.answer = answer


async def _attempt(stage: Stage[In, Out], deps: Deps, event: In, retry: Retries) -> Out:
    """The stage's output with the runner's retries; after the last, the give-up answer."""
    def on_retry(attempt: int, exc: Exception) -> None:
        log.warning("stage %s failed on %s (attempt %d): %r", stage.name, event.question_id,
                    attempt, exc)

    try:
        return await stage.call(deps, event, retry, on_retry)
    except Exception as exc:
        if stage.give_up is None:
            raise
        raise _GaveUp(stage.give_up(deps, event, failure_reason(exc))) from exc


async def ask_in_process(route: RouteDecided, deps: Deps, *, progress: Progress | None = None,
                         retry: Retries | None = None) -> Outcome:
    """Plan, collect, answer, render and remember, exactly as the workers would: a stage that
    keeps failing leaves the user a `failed` answer, rendered and remembered like any other."""
    report = progress or (lambda stage, event: None)
    retry = retry or Retries()
    plan = evidence = None
    try:
        plan = await _attempt(PLAN, deps, route, retry)
        if plan is None:
            report("skipped", route)
            return Outcome(None, None, None, None)
        report("plan", plan)
        evidence = await _attempt(EVIDENCE, deps, plan, retry)
        report("evidence", evidence)
        answer = await _attempt(ANSWER, deps, evidence, retry)
    except _GaveUp as gave_up:
        answer = gave_up.answer
    report("answer", answer)
    reply = await _attempt(RENDER, deps, answer, retry)
    await _attempt(MEMORY, deps, answer, retry)
    report("reply", reply)
    return Outcome(plan, evidence, answer, reply)
