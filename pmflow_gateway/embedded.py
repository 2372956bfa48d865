"""The embedded default: one question through the same stage cores, in process, no Kafka."""

from __future__ import annotations

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
from pmflow_gateway.streams.stages import STAGES

Progress = Callable[[str, object], None]


@dataclass(frozen=True)
class Outcome:
    plan: PlanCreated | None
    evidence: EvidenceCollected | None
    answer: AnswerReady | None
    reply: ReplyRendered | None


async def ask_in_process(route: RouteDecided, deps: Deps, *,
                         progress: Progress | None = None) -> Outcome:
    """Plan, collect, answer, render and remember, exactly as the workers would."""
    report = progress or (lambda stage, event: None)
    plan = await STAGES["plan"].handle(deps, route)
    if plan is None:
        report("skipped", route)
        return Outcome(None, None, None, None)
    assert isinstance(plan, PlanCreated)
    report("plan", plan)
    evidence = await STAGES["evidence"].handle(deps, plan)
    assert isinstance(evidence, EvidenceCollected)
    report("evidence", evidence)
    answer = await STAGES["answer"].handle(deps, evidence)
    assert isinstance(answer, AnswerReady)
    report("answer", answer)
    reply = await STAGES["render"].handle(deps, answer)
    assert isinstance(reply, ReplyRendered)
    await STAGES["memory"].handle(deps, answer)
    report("reply", reply)
    return Outcome(plan, evidence, answer, reply)
