"""Plan stage: RouteDecided -> PlanCreated.

A planner (the model when configured, the rules planner otherwise) proposes an
`ExternalQueryPlan`; the gateway step below validates it and fills the defaults. The model
only plans: it never answers and never sees fetched pages.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from pmflow_gateway.handlers.ports import Clock
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlanCreated,
    PlannerInfo,
    QuestionContext,
    RouteDecided,
    stage_event_id,
)

MAX_QUERIES = 3
MAX_QUERY_CHARS = 200


class Planner(Protocol):
    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        """A plan for the question; never raises for a bad question (it plans `clarify`)."""
        ...


@dataclass(frozen=True, kw_only=True)
class PlanDefaults:
    deadline_ms: int = 20_000
    result_limit: int = 3


def is_for_us(route: RouteDecided) -> bool:
    """`internal` decisions are PMFlow's own job; `uncertain` is treated external-first."""
    return route.route_mode != "internal"


def finish_plan(plan: ExternalQueryPlan, route: RouteDecided, defaults: PlanDefaults) -> ExternalQueryPlan:
    """The gateway step: whatever a planner proposed, leave with a plan that can be executed."""
    queries: list[str] = []
    for query in plan.search_queries:
        query = " ".join(query.split())
        if query and len(query) <= MAX_QUERY_CHARS and query not in queries:
            queries.append(query)
    if not queries and plan.answer_contract is not AnswerContract.clarify:
        fallback = " ".join(route.question.split())[:MAX_QUERY_CHARS]
        queries = [fallback] if fallback else []
    entities: list[str] = []
    for entity in plan.subject_entities:
        entity = entity.strip()
        if entity and entity not in entities:
            entities.append(entity)
    return plan.model_copy(
        update={
            "search_queries": queries[:MAX_QUERIES],
            "subject_entities": entities,
            "result_limit": min(max(plan.result_limit or defaults.result_limit, 1), 10),
            "freshness_required": plan.freshness_required or route.query_profile.needs_freshness,
            "topic": plan.topic.strip() or route.question.strip()[:MAX_QUERY_CHARS],
        }
    )


async def plan_question(
    route: RouteDecided, *, planner: Planner, clock: Clock, defaults: PlanDefaults
) -> PlanCreated | None:
    """The plan for one route decision, or None when the decision is not ours to answer."""
    if not is_for_us(route):
        return None
    started = time.perf_counter()
    received = clock.now()
    plan, info = await planner.plan(route)
    plan = finish_plan(plan, route, defaults)
    now = clock.now()
    budget_ms = route.deadline_ms or defaults.deadline_ms
    context = QuestionContext(
        question=route.question,
        locale=route.locale,
        thread_id=route.thread_id,
        routing=route.routing(),
        # The budget starts when we first see the question: a backlog or a replay of an old
        # event must still get a real attempt, not an instant guard.
        deadline_at=received + timedelta(milliseconds=budget_ms),
        upstream_sources=route.sources,
        stage_timings_ms={"plan": round((time.perf_counter() - started) * 1000, 3)},
    )
    return PlanCreated(
        event_id=stage_event_id(route.question_id, "plan"),
        question_id=route.question_id,
        tenant_id=route.tenant_id,
        occurred_at=now,
        context=context,
        plan=plan,
        planner=info,
    )
