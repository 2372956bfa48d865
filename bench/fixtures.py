"""What the scenarios feed the stages: PMFlow's example route decision, evidence, and the
fakes of the outside world (from `tests/fakes.py`) that keep no per-question state, so memory
stays theirs to measure."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

from bench.support import CountingStore, InstantAdapter
from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.contract.gazetteer import CITIES
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps, PlanDefaults
from pmflow_gateway.schemas import (
    AnswerReady,
    ExternalEvidence,
    ExternalQueryPlan,
    PlanCreated,
    RouteDecided,
)
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.codec import encode

# The documented RouteDecided, as PMFlow publishes it; a long budget so a backlog never
# times out.
EXAMPLE: dict[str, Any] = {**ROUTE_DECIDED, "deadline_ms": 600_000}

EVIDENCE = [
    ExternalEvidence(source_type="mcp_search", source_label=label, title=title, target_url=url,
                     snippet=snippet, retrieved_at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
                     freshness_score=0.9, authority_score=0.6)
    for label, title, url, snippet in [
        ("中国天气网", "广州未来5天天气", "https://www.weather.com.cn/guangzhou/5d",
         "广州未来5天以多云为主，气温18至25度，周四有小雨。"),
        ("广州气象", "广州天气预报", "https://gz.weather.example.org/forecast",
         "未来五天广州多云间晴，最高气温25度，最低18度。"),
        ("Weather", "Guangzhou 5-day forecast", "https://weather.example.com/guangzhou",
         "Guangzhou: mostly cloudy for 5 days, 18-25°C, light rain on Thursday."),
    ]
]


# The whole-pipeline scenarios ask about these cities in turn, and every question gets pages
# of its own (its own station number and readings): asking one question thousands of times
# would measure the caches of the pure text functions, not what a question costs.
ASKED_CITIES = CITIES[:24]


def question_id(run: str, i: int) -> str:
    return f"q-{run}-{i:06d}"


def route_decided(run: str, i: int) -> tuple[bytes, bytes]:
    """Key and value of question `i` of this run, as a plain Kafka client would send them."""
    qid = question_id(run, i)
    city = ASKED_CITIES[i % len(ASKED_CITIES)][0]
    doc = {**EXAMPLE, "event_id": str(uuid.uuid4()), "question_id": qid,
           "question": f"帮我看看未来 5 天的{city}天气如何",
           "occurred_at": datetime.now(UTC).isoformat()}
    return qid.encode(), RouteDecided.model_validate(doc).model_dump_json().encode()


def weather_pages(city: str, n: int) -> list[ExternalEvidence]:
    """Three forecast pages about `city` (two Chinese, one English), the `n`-th set: its own
    station number and temperatures, so no two questions quote the same text."""
    english = next((en for zh, en in CITIES if zh == city), city)
    slug = english.lower().replace(" ", "-")
    low = 5 + n % 17
    high = low + 7
    pages = [
        ("中国天气网", f"{city}未来5天天气", f"https://www.weather.com.cn/{slug}/5d",
         f"{city}气象站第{n}号观测：未来5天以多云为主，气温{low}至{high}度，周四有小雨。"),
        (f"{city}气象", f"{city}天气预报", f"https://{slug}.weather.example.org/forecast/{n}",
         f"未来五天{city}多云间晴，最高气温{high}度，最低{low}度。数据编号{n}。"),
        ("Weather", f"{english} 5-day forecast", f"https://weather.example.com/{slug}?obs={n}",
         f"{english} (station {n}): mostly cloudy for 5 days, {low}-{high}°C, light rain on "
         "Thursday."),
    ]
    return [ExternalEvidence(source_type="mcp_search", source_label=label, title=title,
                             target_url=url, snippet=snippet,
                             retrieved_at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
                             freshness_score=0.9, authority_score=0.6)
            for label, title, url, snippet in pages]


def fresh_pages(plan: ExternalQueryPlan, n: int) -> list[ExternalEvidence]:
    """The adapter's answer to its `n`-th plan: new forecast pages about the asked city."""
    return weather_pages(plan.location_hint or ASKED_CITIES[0][0], n)


def gateway(*, adapter_delay_s: float = 0.0, real_mcp: bool = False) -> Deps:
    """Instant (or delayed) fake adapter; with `real_mcp`, the project's own MCP server over
    stdio, started with `--delay-ms` (only where `pmflow_gateway.mcp_server` exists)."""
    adapters: list[Any] = [InstantAdapter(fresh_pages, delay_s=adapter_delay_s)]
    if real_mcp:
        from pmflow_gateway.adapters.mcp import McpAdapter  # type: ignore[import-not-found]
        from pmflow_gateway.adapters.mcp_config import (  # type: ignore[import-not-found]
            McpServerConfig,
        )

        delay_ms = str(round(adapter_delay_s * 1000))
        config = McpServerConfig(
            name="pmflow-corpus", transport="stdio", command=sys.executable,
            args=["-m", "pmflow_gateway.mcp_server", "--delay-ms", delay_ms], timeout_s=30.0)
        adapters = [McpAdapter(config)]
    return Deps(composer=EXTRACTIVE, clock=SystemClock(), planner=RulesPlanner(),
                adapters=adapters, store=CountingStore())


def has_real_mcp_server() -> bool:
    return importlib.util.find_spec("pmflow_gateway.mcp_server") is not None


async def plan_created(run: str, i: int) -> tuple[bytes, bytes]:
    """Question `i` as the plan stage would have published it."""
    key, value = route_decided(run, i)
    route = RouteDecided.model_validate_json(value)
    plan = await plan_question(route, planner=RulesPlanner(), clock=SystemClock(),
                               defaults=PlanDefaults(deadline_ms=600_000))
    assert isinstance(plan, PlanCreated)
    return key, encode(plan)


async def answer_ready(run: str, i: int) -> tuple[bytes, bytes]:
    """Question `i` as the answer stage would have published it (three sources)."""
    key, value = route_decided(run, i)
    outcome = await ask_in_process(RouteDecided.model_validate_json(value), gateway())
    assert isinstance(outcome.answer, AnswerReady)
    return key, encode(outcome.answer)
