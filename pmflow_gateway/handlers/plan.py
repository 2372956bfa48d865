"""Plan stage: RouteDecided -> PlanCreated.

The routing table (`contract/routing.py`) reads PMFlow's routing fields first: a question it
keeps from external sources is answered here (`refused` or `clarify`, saying why) and never
reaches a planner, so nothing about it is sent to a model or a source. For the rest, a
planner (the model when configured, the rules planner otherwise) proposes an
`ExternalQueryPlan`; the gateway step below validates it and fills the defaults. The model
only plans: it never answers and never sees fetched pages.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import timedelta

from pmflow_gateway.contract.envelopes import elapsed_ms, header_after
from pmflow_gateway.contract.routing import route_policy
from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.handlers.failure import held_back_answer
from pmflow_gateway.ports import Clock, PlanDefaults, Planner
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerReady,
    ExternalQueryPlan,
    PlanCreated,
    QuestionContext,
    RouteAction,
    RouteDecided,
)

MAX_ENTITY_CHARS = 100
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")


def is_for_us(route: RouteDecided) -> bool:
    """Whether the routing table lets this question be planned and searched."""
    return route_policy(route.routing()).action is RouteAction.answer


def finish_plan(
    plan: ExternalQueryPlan, route: RouteDecided, defaults: PlanDefaults,
    domain_hints: Sequence[str] = (),
) -> ExternalQueryPlan:
    """The gateway step: whatever a planner proposed, leave with a plan that can be executed.

    `model_copy(update=...)` does not validate, so every bound is enforced here by hand.
    """
    clarify = plan.answer_contract is AnswerContract.clarify
    # An oversize query is dropped, not cut: half a query searches for something else.
    queries = _unique(plan.search_queries, max_chars=defaults.max_query_chars)
    if not queries and not clarify:
        fallback = " ".join(route.question.split())[: defaults.max_query_chars]
        queries = [fallback] if fallback else []
    return plan.model_copy(
        update={
            "search_queries": queries[: max(defaults.max_queries, 1)],
            "subject_entities": _unique(plan.subject_entities, max_chars=MAX_ENTITY_CHARS),
            # hints from well-rated past answers only raise authority; they never filter
            "preferred_domains": _domains([*plan.preferred_domains, *domain_hints]),
            "result_limit": min(max(plan.result_limit or defaults.result_limit, 1), 10),
            "freshness_required": plan.freshness_required or route.query_profile.needs_freshness,
            "topic": " ".join(plan.topic.split())[: defaults.max_query_chars]
            or " ".join(route.question.split())[: defaults.max_query_chars],
            "location_hint": _blank_to_none(plan.location_hint),
            "time_range_hint": _blank_to_none(plan.time_range_hint),
            "clarify_on_ambiguity": plan.clarify_on_ambiguity or clarify,
        }
    )


def _unique(items: list[str], *, max_chars: int) -> list[str]:
    """Whitespace collapsed; empty and oversize ones dropped; case-insensitive duplicates too."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        item = " ".join(item.split())
        if item and len(item) <= max_chars and item.casefold() not in seen:
            seen.add(item.casefold())
            kept.append(item)
    return kept


def _domains(proposed: list[str]) -> list[str]:
    """Bare host names only: a URL is cut to its host, anything else that is not one is dropped.

    Preferred domains raise evidence authority, so a model's odd entry must not slip through.
    """
    hosts: list[str] = []
    for entry in proposed:
        entry = entry.strip()
        host = bare_host(entry if "://" in entry else f"http://{entry}")
        if _HOST.fullmatch(host) and host not in hosts:
            hosts.append(host)
    return hosts


def _blank_to_none(hint: str | None) -> str | None:
    hint = " ".join((hint or "").split())
    return hint or None


async def plan_question(
    route: RouteDecided, *, planner: Planner, clock: Clock, defaults: PlanDefaults,
    domain_hints: Sequence[str] = (),
) -> PlanCreated | AnswerReady | None:
    """The plan for one route decision; the answer itself when the routing table keeps it from
    external sources; None when it is not ours to answer (PMFlow answers internal routes)."""
    routing = route.routing()
    policy = route_policy(routing)
    if policy.action is RouteAction.skip:
        return None
    if policy.action is not RouteAction.answer:
        return held_back_answer(route, policy, clock=clock)
    started = time.perf_counter()
    received = clock.now()
    plan, info = await planner.plan(route)
    plan = finish_plan(plan, route, defaults, domain_hints)
    now = clock.now()
    budget_ms = route.deadline_ms or defaults.deadline_ms
    context = QuestionContext(
        question=route.question,
        locale=route.locale,
        thread_id=route.thread_id,
        routing=routing.model_copy(update={"policy": policy}),
        # The budget starts when we first see the question: a replay of an old event must
        # still get a real attempt, not an instant guard. The evidence stage restarts what is
        # left of it when it takes the question up; `expires_at` bounds how long that may be.
        deadline_at=received + timedelta(milliseconds=budget_ms),
        expires_at=received + timedelta(milliseconds=budget_ms + defaults.max_wait_ms),
        upstream_sources=route.sources,
        stage_timings_ms={"plan": elapsed_ms(started)},
    )
    return PlanCreated(
        **header_after(route, "plan", now),
        context=context,
        plan=plan,
        planner=info,
    )
