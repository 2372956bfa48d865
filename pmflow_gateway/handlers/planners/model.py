"""The model planner: an OpenAI-compatible model turns the question into an ExternalQueryPlan.

The model is shown the question, the thread's previous question when PMFlow passed one (a
follow-up such as "那明天呢" is planned with its subject), and the routing context only
(locale, route mode, query profile), never upstream sources, probe results or fetched
pages: it plans, it does not answer, and text from the web must not steer it. One repair
round on invalid output; any other failure hands the question to the rules planner and says
why in `PlannerInfo`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import ValidationError

from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import ChatModel, Planner
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlannerInfo,
    RouteDecided,
)

PLAN_SCHEMA: dict[str, Any] = ExternalQueryPlan.model_json_schema()
SCHEMA_NAME = "ExternalQueryPlan"
_MAX_ECHO_CHARS = 2_000  # of the invalid reply shown back to the model in the repair round
_MAX_REASON_CHARS = 500
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


class InvalidPlan(ValueError):
    """The model's reply is not a plan this gateway can run."""


@cache
def planner_prompt() -> str:
    return (files("pmflow_gateway") / "prompts" / "planner.md").read_text(encoding="utf-8")


def planner_messages(route: RouteDecided) -> list[dict[str, str]]:
    """What the model is shown: the prompt, then the question and its routing context."""
    context: dict[str, object] = {
        "question": route.question,
        **({"previous_question": route.previous_question} if route.previous_question else {}),
        "locale": route.locale,
        "route_mode": route.route_mode,
        "query_profile": route.query_profile.model_dump(mode="json"),
    }
    return [
        {"role": "system", "content": planner_prompt()},
        {"role": "user", "content": json.dumps(context, ensure_ascii=False)},
    ]


def parse_plan(reply: str) -> ExternalQueryPlan:
    """The plan in a model reply; raises `InvalidPlan` saying what is wrong with it."""
    try:
        plan = ExternalQueryPlan.model_validate_json(_FENCE.sub("", reply))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise InvalidPlan(problems[:_MAX_REASON_CHARS]) from exc
    if plan.answer_contract is not AnswerContract.clarify and not any(
        q.strip() for q in plan.search_queries
    ):
        raise InvalidPlan("search_queries: empty, but the plan is not clarify")
    return plan


class ModelPlanner:
    """Plans with the model; the fallback planner (rules by default) stands in on failure."""

    def __init__(self, *, model: ChatModel, timeout_s: float,
                 fallback: Planner | None = None) -> None:
        """`timeout_s` bounds each model call (the repair round gets its own)."""
        self._model = model
        self._timeout_s = timeout_s
        self._fallback = fallback or RulesPlanner()

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        started = time.perf_counter()
        messages = planner_messages(route)
        try:
            reply = await self._ask(messages)
            try:
                plan = parse_plan(reply)
            except InvalidPlan as first:
                messages += [
                    {"role": "assistant", "content": reply[:_MAX_ECHO_CHARS]},
                    {"role": "user", "content": (
                        f"That reply is not a valid ExternalQueryPlan: {first}. Reply again "
                        "with only the corrected JSON object.")},
                ]
                plan = parse_plan(await self._ask(messages))
        except InvalidPlan as exc:
            reason = f"model output invalid after one repair: {exc}"
        except TimeoutError:
            reason = f"model timed out after {self._timeout_s:g}s"
        # Whatever else the model client raises (ModelError, a transport error), the rules
        # planner stands in: a model outage must never stop questions from being planned.
        except Exception as exc:
            reason = f"model call failed: {type(exc).__name__}: {exc}"
        else:
            return plan, PlannerInfo(mode="model", model=self._model.model,
                                     latency_ms=_ms_since(started))
        return await self._fall_back(route, reason[:_MAX_REASON_CHARS], started)

    async def _ask(self, messages: list[dict[str, str]]) -> str:
        # The client's own timeout covers each network phase; this one bounds the whole call.
        return await asyncio.wait_for(
            self._model.complete_json(messages, schema=PLAN_SCHEMA, schema_name=SCHEMA_NAME,
                                      timeout_s=self._timeout_s),
            timeout=self._timeout_s,
        )

    async def _fall_back(self, route: RouteDecided, reason: str,
                         started: float) -> tuple[ExternalQueryPlan, PlannerInfo]:
        try:
            plan, info = await self._fallback.plan(route)
        except Exception as exc:  # neither planner could plan: ask the user instead
            plan = ExternalQueryPlan(answer_contract=AnswerContract.clarify,
                                     clarify_on_ambiguity=True)
            info = PlannerInfo(mode="rules", reason=f"rules planner failed: {exc!r}")
        if info.reason:
            reason = f"{reason}; {info.reason}"
        return plan, PlannerInfo(mode="fallback", model=self._model.model,
                                 latency_ms=_ms_since(started), reason=reason)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
