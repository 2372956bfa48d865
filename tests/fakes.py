"""In-memory fakes of the ports, one per port, for unit tests and the benchmarks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from aiokafka import TopicPartition
from aiokafka.errors import KafkaConnectionError
from aiokafka.structs import RecordMetadata
from pydantic import BaseModel

from pmflow_gateway.contract.memory_rules import (
    MemoryRow,
    RecordRow,
    answer_is_late,
    count_answer,
    count_feedback,
    feedback_is_late,
    rank_good_domains,
)
from pmflow_gateway.contract.similarity import most_similar, question_key
from pmflow_gateway.handlers.composers import EXTRACTIVE
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import (
    AdapterResult,
    Clock,
    Composer,
    Deps,
    EvidenceAdapter,
    Headers,
    MemoryStore,
    Planner,
    SimilarQuestion,
)
from pmflow_gateway.schemas import (
    AdapterAttempt,
    AnswerReady,
    ExternalEvidence,
    ExternalQueryPlan,
    FeedbackGiven,
    PlannerInfo,
    RouteDecided,
    RouteOutcomeReported,
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
class SlowAdapter:
    """An MCP server that answers every plan with `items` after `delay_s`, and a plan whose
    topic contains `slow_marker` after `slow_s`; `slow_done` is set when such a call ends."""

    items: list[ExternalEvidence]
    delay_s: float = 0.0
    slow_marker: str | None = None
    slow_s: float = 0.0
    name: str = "mcp"
    calls: int = 0
    slow_done: asyncio.Event = field(default_factory=asyncio.Event)

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls += 1
        slow = self.slow_marker is not None and self.slow_marker in plan.topic
        await asyncio.sleep(self.slow_s if slow else self.delay_s)
        if slow:
            self.slow_done.set()
        return AdapterResult(items=self.items, attempts=[AdapterAttempt(
            adapter=self.name, outcome="ok", evidence_count=len(self.items))])

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


@dataclass
class SlowPlanner:
    """The rules planner, after `slow_s` for a question containing `slow_marker`; `slow_done`
    is set when such a plan is made."""

    slow_marker: str
    slow_s: float
    slow_done: asyncio.Event = field(default_factory=asyncio.Event)

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        if self.slow_marker in route.question:
            await asyncio.sleep(self.slow_s)
            self.slow_done.set()
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
    """The calls the runner makes on its Kafka consumer: committing offsets, pausing and
    resuming the assigned partitions while a dependency is away, and seeking where the last
    transaction left a partition."""

    commits: list[dict[TopicPartition, int]] = field(default_factory=list)
    fail_next: int = 0  # how many commits fail, as during a rebalance
    assigned: set[TopicPartition] = field(default_factory=set)
    paused: set[TopicPartition] = field(default_factory=set)
    resumed: list[TopicPartition] = field(default_factory=list)
    seeks: list[tuple[TopicPartition, int]] = field(default_factory=list)

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("rebalance in progress")
        self.commits.append(dict(offsets))

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        assert set(partitions) <= self.assigned, "pausing a partition that is not assigned"
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        assert set(partitions) <= self.assigned, "resuming a partition that is not assigned"
        self.paused.difference_update(partitions)
        self.resumed.extend(partitions)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        assert partition in self.assigned, "seeking in a partition that is not assigned"
        self.seeks.append((partition, offset))


@dataclass
class Transaction:
    """One committed transaction: what it produced, in order, and the offsets it committed."""

    outputs: list[tuple[str, bytes | None, bytes]] = field(default_factory=list)
    offsets: dict[TopicPartition, tuple[int, str]] = field(default_factory=dict)
    group_id: str = ""


class RecordingTransactionalProducer:
    """The calls the exactly-once strategy makes on a transactional producer; a committed
    transaction is appended to `committed`, an aborted one to `aborted` when given. A send
    goes to the partition it names, or partition 0."""

    def __init__(self, transactional_id: str, committed: list[Transaction],
                 aborted: list[Transaction] | None = None) -> None:
        self.transactional_id = transactional_id
        self.committed = committed
        self.aborted = aborted if aborted is not None else []
        self._open: Transaction | None = None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def partitions_for(self, topic: str) -> set[int]:
        return {0}

    async def begin_transaction(self) -> None:
        assert self._open is None, "a transaction is already open"
        self._open = Transaction()

    async def send(self, topic: str, value: bytes, *, key: bytes | None = None,
                   headers: object = None, partition: int | None = None
                   ) -> asyncio.Future[RecordMetadata]:
        assert self._open is not None, "a send outside a transaction"
        self._open.outputs.append((topic, key, value))
        done: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        partition = partition or 0
        done.set_result(RecordMetadata(topic, partition, TopicPartition(topic, partition),
                                       len(self._open.outputs), -1, 0, 0))
        return done

    async def send_offsets_to_transaction(self, offsets: dict[TopicPartition, tuple[int, str]],
                                          group_id: str) -> None:
        assert self._open is not None
        self._open.offsets.update(offsets)
        self._open.group_id = group_id

    async def commit_transaction(self) -> None:
        assert self._open is not None
        self.committed.append(self._open)
        self._open = None

    async def abort_transaction(self) -> None:
        if self._open is not None:
            self.aborted.append(self._open)
        self._open = None


class OpenTransactionsAt:
    """Which partitions have a transaction open, as told (None: every one asked about);
    `failing`: the broker cannot tell."""

    def __init__(self, open_at: set[TopicPartition] | None = None, *,
                 failing: bool = False) -> None:
        self.open_at = open_at
        self.failing = failing

    async def among(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        if self.failing:
            raise KafkaConnectionError("no broker")
        return set(partitions) if self.open_at is None else partitions & self.open_at

    async def stable(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """A partition with a transaction open: stable up to its start; any other: past
        everything written."""
        open_at = await self.among(partitions)
        return {tp: 0 if tp in open_at else 10**9 for tp in partitions}

    async def close(self) -> None:
        return None


def evidence(url: str, snippet: str, *, fresh: float = 0.9, source_type: str = "mcp_search",
             label: str = "Example", title: str = "A page") -> ExternalEvidence:
    return ExternalEvidence(
        source_type=source_type, source_label=label, title=title, target_url=url,
        snippet=snippet, retrieved_at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
        freshness_score=fresh, authority_score=0.5)


WEATHER = evidence("https://www.weather.com.cn/guangzhou/5d",
                   "广州未来5天以多云为主，气温18至25度。")


@dataclass
class _Memory:
    sample_question: str
    route_mode: str
    query_kind: str
    row: MemoryRow = field(default_factory=MemoryRow)
    feedback_outcome: str | None = None
    good_domains: list[str] = field(default_factory=list)


@dataclass
class InMemoryStore:
    """The MemoryStore port in dicts, applying the same memory rules as the SQL store:
    idempotent by event id, late answers and late feedback change nothing, outcomes and
    votes move, good domains are recounted, similar questions are scored alike."""

    records: dict[tuple[str, str], RecordRow] = field(default_factory=dict)
    answers: dict[tuple[str, str], AnswerReady] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], RouteOutcomeReported] = field(default_factory=dict)
    memories: dict[tuple[str, str], _Memory] = field(default_factory=dict)
    applied: set[tuple[str, str, str]] = field(default_factory=set)
    pending: dict[tuple[str, str], list[FeedbackGiven]] = field(default_factory=dict)

    def _claim(self, tenant_id: str, kind: str, event_id: str) -> bool:
        claim = (tenant_id, kind, event_id)
        if claim in self.applied:
            return False
        self.applied.add(claim)
        return True

    async def record_answer(self, event: AnswerReady) -> bool:
        recorded = self._record(
            event, "answer", question=event.context.question, status=str(event.status),
            route_mode=event.context.routing.route_mode, query_kind=str(event.plan.query_kind),
            sources_used=[s.model_dump(mode="json") for s in event.sources_used])
        if recorded:
            self.answers[(event.tenant_id, event.question_id)] = event
        return recorded

    async def record_outcome(self, event: RouteOutcomeReported) -> bool:
        recorded = self._record(event, "outcome", question=event.question,
                                status=str(event.outcome), route_mode=event.route_mode,
                                query_kind=event.query_kind, sources_used=[])
        if recorded:
            self.outcomes[(event.tenant_id, event.question_id)] = event
        return recorded

    def _record(self, event: AnswerReady | RouteOutcomeReported, kind: str, *, question: str,
                status: str, route_mode: str, query_kind: str,
                sources_used: list[dict[str, Any]]) -> bool:
        at = (event.tenant_id, event.question_id)
        previous = self.records.get(at)
        if answer_is_late(previous, event.occurred_at) or not self._claim(
                event.tenant_id, kind, event.event_id):
            return False
        key = question_key(question)
        memory = self.memories.setdefault((event.tenant_id, key),
                                          _Memory(question, route_mode, query_kind))
        memory.sample_question, memory.route_mode, memory.query_kind = (
            question, route_mode, query_kind)
        counts = count_answer(memory.row, previous, key=key, status=status)
        memory.row = replace(memory.row, **counts)
        self.records[at] = RecordRow(
            question_key=key, status=status, answered_at=event.occurred_at,
            feedback_outcome=previous.feedback_outcome if previous else None,
            feedback_at=previous.feedback_at if previous else None, sources_used=sources_used)
        self._recount(event.tenant_id, key)
        if previous is None:
            for rating in sorted(self.pending.pop(at, []), key=lambda e: e.occurred_at):
                self._rate(rating)
        return True

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        at = (event.tenant_id, event.question_id)
        record = self.records.get(at)
        if record is None:  # waits for its record, as the SQL store's pending_feedback
            if self._claim(event.tenant_id, "feedback", event.event_id):
                self.pending.setdefault(at, []).append(event)
            return False
        if feedback_is_late(record, event.occurred_at) or not self._claim(
                event.tenant_id, "feedback", event.event_id):
            return False
        return self._rate(event)

    def _rate(self, event: FeedbackGiven) -> bool:
        at = (event.tenant_id, event.question_id)
        record = self.records[at]
        if feedback_is_late(record, event.occurred_at):
            return False
        memory = self.memories[(event.tenant_id, record.question_key)]
        values = count_feedback(memory.row, record, outcome=event.outcome, at=event.occurred_at)
        memory.feedback_outcome = values.pop("feedback_outcome", memory.feedback_outcome)
        memory.row = replace(memory.row, **values)
        self.records[at] = replace(record, feedback_outcome=event.outcome,
                                   feedback_at=event.occurred_at)
        self._recount(event.tenant_id, record.question_key)
        return True

    def _recount(self, tenant_id: str, key: str) -> None:
        mine = [r for (tenant, _), r in self.records.items()
                if tenant == tenant_id and r.question_key == key and r.status == "answered"]
        self.memories[(tenant_id, key)].good_domains = rank_good_domains(mine)

    def feedback_of(self, tenant_id: str, question_id: str) -> str | None:
        record = self.records.get((tenant_id, question_id))
        return record.feedback_outcome if record else None

    async def similar(self, tenant_id: str, question: str, *,
                      limit: int = 5) -> list[SimilarQuestion]:
        keys = [key for tenant, key in self.memories if tenant == tenant_id]
        found = most_similar(question, keys, limit=limit, min_similarity=0.2)
        return [self._similar(self.memories[(tenant_id, s.key)], s.similarity) for s in found]

    @staticmethod
    def _similar(memory: _Memory, score: float) -> SimilarQuestion:
        row = memory.row
        return SimilarQuestion(
            question=memory.sample_question, query_kind=memory.query_kind,
            route_mode=memory.route_mode, hit_count=row.hit_count,
            outcomes=dict(row.outcome_counts), feedback_counts=dict(row.feedback_counts),
            feedback_outcome=memory.feedback_outcome, good_domains=list(memory.good_domains),
            similarity=score)

    async def aclose(self) -> None:
        return None


def fake_deps(*, adapters: Sequence[EvidenceAdapter] | None = None, clock: Clock | None = None,
              planner: Planner | None = None, store: MemoryStore | None = None,
              composer: Composer | None = None, **options: Any) -> Deps:
    """The dependencies a test runs the stages with, built in this one place: a fixed clock,
    the rules planner, an MCP fake that answers with WEATHER, an in-memory store and the
    extractive composer; each can be replaced, and `options` sets the rest of `Deps`."""
    return Deps(clock=clock or FixedClock(), planner=planner or RulesPlanner(),
                adapters=list(adapters) if adapters is not None
                else [FakeAdapter("mcp", items=[WEATHER])],
                store=store or InMemoryStore(), composer=composer or EXTRACTIVE, **options)
