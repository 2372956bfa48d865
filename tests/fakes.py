"""In-memory fakes of the ports, one per port, for unit tests and the benchmarks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiokafka import TopicPartition
from pydantic import BaseModel

from pmflow_gateway.handlers.planner_rules import RulesPlanner
from pmflow_gateway.ports import AdapterResult, Headers
from pmflow_gateway.schemas import (
    AdapterAttempt,
    ExternalEvidence,
    ExternalQueryPlan,
    PlannerInfo,
    RouteDecided,
)


@dataclass
class FixedClock:
    at: datetime = field(default_factory=lambda: datetime(2026, 12, 2, 8, 0, tzinfo=UTC))

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@dataclass
class FakeAdapter:
    """Returns the evidence it was given, or fails the way it was told to."""

    name: str
    items: list[ExternalEvidence] = field(default_factory=list)
    outcome: str = "ok"
    calls: list[ExternalQueryPlan] = field(default_factory=list)

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls.append(plan)
        items = self.items if self.outcome == "ok" else []
        return AdapterResult(items=items, attempts=[AdapterAttempt(
            adapter=self.name, outcome=self.outcome if items or self.outcome != "ok" else "empty",
            evidence_count=len(items), error=None if self.outcome == "ok" else self.outcome)])

    async def aclose(self) -> None:
        return None


@dataclass
class InstantAdapter:
    """An MCP server that answers every plan at once (or after `delay_s`) with the same items,
    keeping no per-question state."""

    items: list[ExternalEvidence]
    name: str = "mcp"
    delay_s: float = 0.0
    calls: int = 0

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return AdapterResult(items=list(self.items), attempts=[AdapterAttempt(
            adapter=self.name, outcome="ok", latency_ms=self.delay_s * 1000,
            evidence_count=len(self.items))])

    async def aclose(self) -> None:
        return None


@dataclass
class ScriptedModel:
    """A chat model that replies from its script in order, repeating the last reply; an
    exception in the script is raised instead."""

    replies: list[str | BaseException]
    delay_s: float = 0.0
    model: str = "fake-model"
    calls: list[list[dict[str, str]]] = field(default_factory=list)

    async def complete_json(self, messages: Sequence[dict[str, str]], *, schema: dict[str, Any],
                            schema_name: str, timeout_s: float) -> str:
        self.calls.append(list(messages))
        await asyncio.sleep(self.delay_s)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return reply


class FlakyPlanner:
    """Fails the first `failures` calls, as a planner whose model is briefly away, then plans
    with the rules."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"planner away (call {self.calls})")
        return await RulesPlanner().plan(route)


class BrokenPlanner:
    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        raise RuntimeError("rules unavailable")


@dataclass(frozen=True)
class Sent:
    topic: str
    key: str | None
    event: BaseModel
    headers: Headers


@dataclass
class RecordingPublisher:
    """The Publisher port that keeps what it was given, in order."""

    sent: list[Sent] = field(default_factory=list)
    started: bool = False

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.started = False

    async def send(self, topic: str, key: str | None, event: BaseModel, *,
                   headers: Headers = ()) -> None:
        self.sent.append(Sent(topic, key, event, headers))

    def to(self, topic: str) -> list[BaseModel]:
        return [s.event for s in self.sent if s.topic == topic]


@dataclass
class CommittingConsumer:
    """The one call the runner makes on its Kafka consumer: committing offsets."""

    commits: list[dict[TopicPartition, int]] = field(default_factory=list)
    fail_next: int = 0  # how many commits fail, as during a rebalance

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("rebalance in progress")
        self.commits.append(dict(offsets))


def evidence(url: str, snippet: str, *, fresh: float = 0.9, source_type: str = "mcp_search",
             label: str = "Example", title: str = "A page") -> ExternalEvidence:
    return ExternalEvidence(
        source_type=source_type, source_label=label, title=title, target_url=url,
        snippet=snippet, retrieved_at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
        freshness_score=fresh, authority_score=0.5)


WEATHER = evidence("https://www.weather.com.cn/guangzhou/5d",
                   "广州未来5天以多云为主，气温18至25度。")


@dataclass
class InMemoryStore:
    """The MemoryStore port as two dicts; idempotent by event id like the real one."""

    answers: dict[tuple[str, str], object] = field(default_factory=dict)
    applied: set[str] = field(default_factory=set)
    feedback: dict[tuple[str, str], str] = field(default_factory=dict)

    async def record_answer(self, event: object) -> bool:
        event_id = event.event_id  # type: ignore[attr-defined]
        if event_id in self.applied:
            return False
        self.applied.add(event_id)
        self.answers[(event.tenant_id, event.question_id)] = event  # type: ignore[attr-defined]
        return True

    async def apply_feedback(self, event: object) -> bool:
        from pmflow_gateway.ports import UnknownQuestion

        key = (event.tenant_id, event.question_id)  # type: ignore[attr-defined]
        if key not in self.answers:
            raise UnknownQuestion(f"no question {key[1]} for tenant {key[0]}")
        if event.event_id in self.applied:  # type: ignore[attr-defined]
            return False
        self.applied.add(event.event_id)  # type: ignore[attr-defined]
        self.feedback[key] = event.outcome  # type: ignore[attr-defined]
        return True

    async def similar(self, tenant_id: str, question: str, *, limit: int = 5) -> list[object]:
        return []

    async def aclose(self) -> None:
        return None


@dataclass
class CountingStore:
    """The MemoryStore port that only counts, so a benchmark's memory stays its own."""

    answers: int = 0
    feedback: int = 0

    async def record_answer(self, event: object) -> bool:
        self.answers += 1
        return True

    async def apply_feedback(self, event: object) -> bool:
        self.feedback += 1
        return True

    async def similar(self, tenant_id: str, question: str, *, limit: int = 5) -> list[object]:
        return []

    async def aclose(self) -> None:
        return None
