"""The stages: which topic each reads, which core it calls, where the result goes.

Follow one question by reading this table top to bottom; each core lives in `handlers/`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pmflow_gateway.bootstrap import Gateway
from pmflow_gateway.handlers.answer import verify_and_compose
from pmflow_gateway.handlers.evidence import collect_evidence
from pmflow_gateway.handlers.failure import failed_answer
from pmflow_gateway.handlers.memory import remember_answer, remember_feedback
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.ports import UnknownQuestion
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    FeedbackGiven,
    PlanCreated,
    RouteDecided,
    Topics,
)
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope

Handle = Callable[[Gateway, Any], Awaitable[Frozen | None]]


@dataclass(frozen=True, kw_only=True)
class Stage:
    name: str
    description: str
    source: Callable[[Topics], str]
    model: type[Envelope]
    handle: Handle
    sink: Callable[[Topics], str] | None = None
    # Inputs no retry can fix (raised by the core) go to the dead-letter topic at once.
    refusals: tuple[type[Exception], ...] = ()
    # When the stage gives up on a question, the user still gets a `failed` answer.
    gives_up_with_answer: bool = False


async def _plan(g: Gateway, e: RouteDecided) -> PlanCreated | None:
    return await plan_question(e, planner=g.planner, clock=g.clock, defaults=g.plan_defaults)


async def _evidence(g: Gateway, e: PlanCreated) -> EvidenceCollected:
    return await collect_evidence(e, adapters=g.adapters, clock=g.clock)


async def _answer(g: Gateway, e: EvidenceCollected) -> AnswerReady:
    return await verify_and_compose(e, clock=g.clock)


async def _render(g: Gateway, e: AnswerReady) -> Frozen:
    return render_reply(e, clock=g.clock)


async def _remember(g: Gateway, e: AnswerReady) -> None:
    await remember_answer(e, store=g.store)


async def _feedback(g: Gateway, e: FeedbackGiven) -> None:
    await remember_feedback(e, store=g.store)


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
        Stage(name="feedback", description="Feedback -> QA record and route memory.",
              source=lambda t: t.feedback, model=FeedbackGiven, handle=_feedback,
              refusals=(UnknownQuestion,)),
    ]
}


def give_up_answer(g: Gateway, event: Envelope, reason: str) -> AnswerReady:
    assert isinstance(event, RouteDecided | PlanCreated | EvidenceCollected)
    return failed_answer(event, reason, clock=g.clock)
