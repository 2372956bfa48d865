"""The stages: which topic each reads, which core it calls, where the result goes.

Follow one question by reading this table top to bottom; each core lives in `handlers/`.
How a stage is run (retries, spans and their attributes, commits) is the runner's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pmflow_gateway.contract.envelopes import identified
from pmflow_gateway.handlers.answer import compose_answer
from pmflow_gateway.handlers.evidence import collect_evidence, never_asked
from pmflow_gateway.handlers.failure import Unanswered, failed_answer, timed_out_answer
from pmflow_gateway.handlers.feedback import remember_feedback
from pmflow_gateway.handlers.memory import (
    is_remembered,
    preferred_domain_hints,
    remember_answer,
)
from pmflow_gateway.handlers.outcome import remember_outcome
from pmflow_gateway.handlers.plan import is_for_us, plan_question
from pmflow_gateway.handlers.probe import probe
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.handlers.verify import verify_collected
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import (
    AnswerReady,
    EvidenceCollected,
    EvidenceVerified,
    FeedbackGiven,
    PlanCreated,
    ProbeCompleted,
    ProbeRequested,
    ReplyRendered,
    RouteDecided,
    RouteOutcomeReported,
    Topics,
)
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope

In = TypeVar("In", bound=Envelope)
Out = TypeVar("Out", bound=Frozen | None)


@dataclass(frozen=True, kw_only=True)
class Stage(Generic[In, Out]):
    name: str
    description: str
    source: Callable[[Topics], str]
    model: type[In]
    handle: Callable[[Deps, In], Awaitable[Out]]
    sink: Callable[[Topics], str] | None = None
    # When the stage gives up on a question, the user still gets this `failed` answer.
    give_up: Callable[[Deps, In, str], AnswerReady] | None = None

    def sink_of(self, topics: Topics, output: Frozen) -> str | None:
        """Where an output goes: a stage that ends the question early (the routing policy
        refused it, its time ran out) sends its AnswerReady where every answer goes."""
        if isinstance(output, AnswerReady):
            return topics.answer_ready
        return self.sink(topics) if self.sink is not None else None

    def writes_to(self, topics: Topics) -> tuple[str, ...]:
        """Every topic an output of the stage may go to: its sink, where every answer goes
        (a stage that gives up or ends a question early answers it), the dead letters."""
        sink = (self.sink(topics),) if self.sink is not None else ()
        answers = (topics.answer_ready,) if self.give_up is not None else ()
        return tuple(dict.fromkeys((*sink, *answers, topics.dead_letter)))


async def _plan(g: Deps, e: RouteDecided) -> PlanCreated | AnswerReady | None:
    hints = (await preferred_domain_hints(g.store, e.tenant_id, e.question)
             if g.memory_domain_hints and is_for_us(e) else [])
    return await plan_question(e, planner=g.planner, clock=g.clock, defaults=g.plan_defaults,
                               domain_hints=hints)


async def _evidence(g: Deps, e: PlanCreated) -> EvidenceCollected | AnswerReady:
    return await collect_evidence(e, adapters=g.adapters, clock=g.clock, cache=g.evidence_cache)


async def _verify(g: Deps, e: EvidenceCollected) -> EvidenceVerified | AnswerReady:
    if never_asked(e):  # no evidence was looked for: nothing for the verifier to judge
        return timed_out_answer(e, clock=g.clock)
    return verify_collected(e, clock=g.clock)


async def _answer(g: Deps, e: EvidenceVerified) -> AnswerReady:
    return await compose_answer(e, clock=g.clock, composer=g.composer)


async def _render(g: Deps, e: AnswerReady) -> ReplyRendered:
    return render_reply(e, clock=g.clock)


async def _remember(g: Deps, e: AnswerReady) -> None:
    if is_remembered(e, agent_questions=g.remember_agent_questions):
        await remember_answer(e, store=g.store)


async def _feedback(g: Deps, e: FeedbackGiven) -> None:
    await remember_feedback(e, store=g.store)


async def _probe(g: Deps, e: ProbeRequested) -> ProbeCompleted:
    return await probe(e, plan=lambda r: _plan(g, r), collect=lambda p: _evidence(g, p),
                       verify=lambda c: verify_collected(c, clock=g.clock), clock=g.clock)


async def _outcome(g: Deps, e: RouteOutcomeReported) -> None:
    await remember_outcome(e, store=g.store)


def _failed(g: Deps, e: Unanswered, reason: str) -> AnswerReady:
    return identified(failed_answer(e, reason, clock=g.clock))


PLAN: Stage[RouteDecided, PlanCreated | AnswerReady | None] = Stage(
    name="plan", description="Route decision -> search plan (model or rules).",
    source=lambda t: t.route_decided, model=RouteDecided, handle=_plan,
    sink=lambda t: t.plan_created, give_up=_failed)
EVIDENCE: Stage[PlanCreated, EvidenceCollected | AnswerReady] = Stage(
    name="evidence", description="Plan -> external evidence (MCP first, then fallback).",
    source=lambda t: t.plan_created, model=PlanCreated, handle=_evidence,
    sink=lambda t: t.evidence_collected, give_up=_failed)
VERIFY: Stage[EvidenceCollected, EvidenceVerified | AnswerReady] = Stage(
    name="verify", description="Evidence -> what the answer may rest on, and every dropped "
    "item with its reason (source, freshness and question contracts).",
    source=lambda t: t.evidence_collected, model=EvidenceCollected, handle=_verify,
    sink=lambda t: t.evidence_verified, give_up=_failed)
ANSWER: Stage[EvidenceVerified, AnswerReady] = Stage(
    name="answer", description="Verified evidence -> composed, checked answer (final event).",
    source=lambda t: t.evidence_verified, model=EvidenceVerified, handle=_answer,
    sink=lambda t: t.answer_ready, give_up=_failed)
RENDER: Stage[AnswerReady, ReplyRendered] = Stage(
    name="render", description="Answer -> the reply the user sees.",
    source=lambda t: t.answer_ready, model=AnswerReady, handle=_render,
    sink=lambda t: t.reply_rendered)
MEMORY: Stage[AnswerReady, None] = Stage(
    name="memory", description="Answer -> QA record and route memory.",
    source=lambda t: t.answer_ready, model=AnswerReady, handle=_remember)
# Feedback for a question with no record yet is kept by the store until the record lands
# (it may simply have overtaken the answer it is about): it neither waits here nor fails.
FEEDBACK: Stage[FeedbackGiven, None] = Stage(
    name="feedback", description="Feedback -> QA record and route memory.",
    source=lambda t: t.feedback, model=FeedbackGiven, handle=_feedback)

PROBE: Stage[ProbeRequested, ProbeCompleted] = Stage(
    name="probe", description="Probe request -> the five external-probe metrics (plan, "
    "evidence and verify within the probe's deadline; no answer).",
    source=lambda t: t.probe_requested, model=ProbeRequested, handle=_probe,
    sink=lambda t: t.probe_completed)
OUTCOME: Stage[RouteOutcomeReported, None] = Stage(
    name="outcome", description="PMFlow's own route outcome -> QA record and route memory.",
    source=lambda t: t.route_outcome, model=RouteOutcomeReported, handle=_outcome)

# The runner's view: each stage decodes its own `model` and hands that to its own `handle`,
# so the pairing holds even though one dict cannot spell each entry's types.
STAGES: dict[str, Stage[Any, Any]] = {
    s.name: s for s in (PLAN, EVIDENCE, VERIFY, ANSWER, RENDER, MEMORY, FEEDBACK, OUTCOME,
                        PROBE)}
