"""One stage on Kafka: decode, call the core, publish, dead-letter, retry, commit.

Its consume loop (`polling.StagePoller`) hands it each fetched batch; the in-flight work and
the commit points are `OrderedExecutor`'s; when outputs leave and how offsets are committed
is its `CommitStrategy`'s (`streams/commits.py`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from opentelemetry.trace import Span

from pmflow_gateway.contract.envelopes import identified
from pmflow_gateway.ports import Deps, Publisher, Unpublishable, Unstorable
from pmflow_gateway.schemas import DeadLettered, Topics
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope
from pmflow_gateway.streams.codec import Poison, decode, record_headers
from pmflow_gateway.streams.commits import AtLeastOnce, CommitStrategy
from pmflow_gateway.streams.health import (
    DEAD_LETTERS,
    QUEUE_WAIT,
    STAGE_SECONDS,
    question_id_var,
    record_outcome,
)
from pmflow_gateway.streams.outage import Backoff, Outage
from pmflow_gateway.streams.parallel import OrderedExecutor
from pmflow_gateway.streams.retries import Retries, call_stage, failure_reason
from pmflow_gateway.streams.span_attributes import annotate
from pmflow_gateway.streams.stages import STAGES, Stage
from pmflow_gateway.tracing import consuming, mark_error

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class RunnerConfig:
    max_in_flight: int = 256
    max_message_bytes: int = 1_048_576
    retry: Retries = field(default_factory=Retries)
    # Pauses between tries while a dependency is away (no limit on how many).
    outage: Backoff = field(default_factory=Backoff)
    commit_interval_s: float = 0.1


def group_id(stage: Stage[Any, Any], topics: Topics) -> str:
    return f"{topics.prefix}gateway-{stage.name}"


class StageRunner:
    def __init__(self, stage: Stage[Any, Any], *, deps: Deps | None, publisher: Publisher,
                 topics: Topics, config: RunnerConfig,
                 commits: CommitStrategy | None = None) -> None:
        self.stage = stage
        self.topic = stage.source(topics)
        self.group_id = group_id(stage, topics)
        self.deps = deps  # bound at start-up, once the dependencies are built
        self._publisher = publisher
        self._topics = topics
        self._config = config
        # Render and memory both read every answer: its decoded event is shared between them.
        self._shared = sum(s.source(topics) == self.topic for s in STAGES.values()) > 1
        self.commits = commits or AtLeastOnce(interval_s=config.commit_interval_s)
        self.executor = OrderedExecutor(self.commits.running(self.handle, publisher, self.refuse),
                                        max_in_flight=config.max_in_flight)
        # Its consumer, set before the consumer starts: a rebalance may come first.
        self.consumer: AIOKafkaConsumer | None = None
        self._commit_task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._seconds = STAGE_SECONDS.labels(stage.name)  # the labelled children, looked up once
        self._waited = QUEUE_WAIT.labels(stage.name)
        self.outage = Outage(stage.name, config.outage, pause=self._pause, resume=self._resume)
        self.counts = {"processed": 0, "skipped": 0, "dead_lettered": 0, "failed": 0}
        # How often each partition was revoked: a batch polled before a revocation is stale.
        self._revocations: dict[tuple[str, int], int] = {}

    def _bound(self) -> Deps:
        assert self.deps is not None, "runner used before start-up bound its dependencies"
        return self.deps

    async def on_batch(self, records: Iterable[ConsumerRecord]) -> None:
        """Take a fetched batch; called right after the poll that fetched it. While the batch
        waits for room, its partitions may be revoked (and even assigned back, the consumer
        then fetching again from the committed offset): the rest of a revoked partition's
        records are not taken. Taking them would start the partition's progress past records
        that come again, and commit past them before they ran."""
        asked = self.commits.admission()
        revocations = dict(self._revocations)

        def wanted(record: ConsumerRecord) -> bool:
            key = (record.topic, record.partition)
            if self._revocations.get(key, 0) != revocations.get(key, 0):
                return False
            return asked is None or asked(record)

        for record in records:
            await self.commits.room()
            await self.executor.submit(record, wanted)

    async def process(self, record: ConsumerRecord) -> None:
        """Run one record, its sends going straight to the runner's publisher."""
        await self.handle(record, self._publisher)

    async def handle(self, record: ConsumerRecord, publisher: Publisher) -> None:
        """Run one record; every send it makes (output, dead letter, `failed` answer) goes to
        `publisher`, which the commit strategy chose."""
        self._waited.observe(max(time.time() - record.timestamp / 1000, 0.0))
        timer = self._seconds.time()
        headers = record_headers(record.headers)
        with timer, consuming(topic=record.topic, partition=record.partition,
                              offset=record.offset, key=record.key, group=self.group_id,
                              headers=headers, stage=self.stage.name) as span:
            try:
                event = decode(self.stage.model, record.value,
                               max_bytes=self._config.max_message_bytes, shared=self._shared)
            except Poison as poison:
                mark_error(span, poison.reason)
                await self._dead_letter(record, poison.reason, None, publisher)
                return
            span.set_attributes({"pmflow.question_id": event.question_id,
                                 "pmflow.tenant_id": event.tenant_id})
            question_id_var.set(event.question_id)
            output = await self._run_core(record, event, span, publisher)
            if output is not None:
                annotate(span, output)
                record_outcome(output)
                sink = self.stage.sink_of(self._topics, output)
                if sink is not None:
                    await self._publish(record, event, sink, output, span, publisher)

    async def refuse(self, record: ConsumerRecord, reason: str, publisher: Publisher) -> None:
        """End a record whose output the broker refused after the record had finished."""
        try:
            event = decode(self.stage.model, record.value,
                           max_bytes=self._config.max_message_bytes)
        except Poison:  # its output was already its dead letter
            await self._dead_letter(record, f"dead letter not publishable: {reason}", None,
                                    publisher)
            return
        await self._give_up(record, event, f"output not publishable: {reason}", publisher)

    async def _publish(self, record: ConsumerRecord, event: Envelope, sink: str, output: Frozen,
                       span: Span, publisher: Publisher) -> None:
        try:
            await publisher.send(sink, event.question_id, output)
        except Unpublishable as refused:
            mark_error(span, refused.reason)
            await self._give_up(record, event, f"output not publishable: {refused.reason}",
                                publisher)

    async def _run_core(self, record: ConsumerRecord, event: Envelope, span: Span,
                        publisher: Publisher) -> Frozen | None:
        """The core's output; on a refusal or after the last retry, None (the runner has
        dead-lettered the input and, where the stage says so, answered `failed`). While a
        dependency is away the record waits for it (`Outage`), however long that takes."""
        def on_retry(attempt: int, exc: Exception) -> None:
            span.add_event("retry", {"attempt": attempt, "error": repr(exc)[:200]})
            log.warning("stage %s failed on %s (attempt %d): %r", self.stage.name,
                        event.question_id, attempt, exc)

        def call() -> Awaitable[Frozen | None]:
            return call_stage(self.stage, self._bound(), event, self._config.retry, on_retry)

        try:
            output = await self.outage.through(TopicPartition(record.topic, record.partition),
                                               call)
        except Unstorable as refused:
            mark_error(span, refused.reason)
            await self._give_up(record, event, f"not storable: {refused.reason}", publisher)
            return None
        except Exception as exc:
            mark_error(span, repr(exc))
            tries = self._config.retry.retries + 1
            await self._give_up(record, event,
                                f"gave up after {tries} tries: {failure_reason(exc)}", publisher)
            return None
        self.counts["processed" if output is not None else "skipped"] += 1
        return output

    async def _give_up(self, record: ConsumerRecord, event: Envelope, reason: str,
                       publisher: Publisher) -> None:
        self.counts["failed"] += 1
        await self._dead_letter(record, reason, event, publisher)
        if self.stage.give_up is not None:
            answer = self.stage.give_up(self._bound(), event, reason)
            await publisher.send(self._topics.answer_ready, answer.question_id, answer)

    async def _dead_letter(self, record: ConsumerRecord, reason: str,
                           event: Envelope | None, publisher: Publisher) -> None:
        self.counts["dead_lettered"] += 1
        DEAD_LETTERS.labels(self.stage.name).inc()
        value = record.value or b""
        try:
            original = value.decode("utf-8")
        except UnicodeDecodeError:
            original = "base64:" + base64.b64encode(value).decode()
        letter = identified(DeadLettered(
            event_id="",
            question_id=event.question_id if event else _key(record),
            tenant_id=event.tenant_id if event else None,
            occurred_at=self._bound().clock.now(),
            stage=self.stage.name,
            reason=reason,
            origin_topic=record.topic,
            origin_partition=record.partition,
            origin_offset=record.offset,
            original_headers={k[:200]: v[:1000].decode("utf-8", "replace")
                              for k, v in record_headers(record.headers)[:64]},
            original_value=original[:65536],
        ))
        log.warning("dead-lettered %s/%d/%d: %s", record.topic, record.partition, record.offset,
                    reason)
        try:
            await publisher.send(self._topics.dead_letter, letter.question_id, letter)
        except Unpublishable as refused:  # the input is ended either way; say so loudly
            log.error("dead letter of %s/%d/%d refused: %s", record.topic, record.partition,
                      record.offset, refused.reason)

    def _pause(self, tp: TopicPartition) -> None:
        consumer = self.consumer
        if consumer is not None and tp in consumer.assignment():
            consumer.pause(tp)

    def _resume(self, partitions: Iterable[TopicPartition]) -> None:
        consumer = self.consumer
        if consumer is not None:
            consumer.resume(*(set(partitions) & consumer.assignment()))

    # -- commits ------------------------------------------------------------------------

    def start_committing(self) -> None:
        self._commit_task = asyncio.create_task(self._commit_loop())
        self._commit_task.add_done_callback(self._commit_loop_ended)

    def _commit_loop_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("stage %s stopped committing", self.stage.name, exc_info=task.exception())

    async def _commit_loop(self) -> None:
        while not self._stopping.is_set():
            await self.commits.due(self.executor, self._stopping)
            await self.commit()

    async def commit(self) -> None:
        if self.consumer is not None:
            await self.commits.commit(self.consumer, self.executor)

    async def drain(self, grace_s: float) -> None:
        """Finish what is in flight (within the grace), commit it, stop committing. The
        commit loop is asked to stop, not cancelled: a transaction cut off half way would
        leave its outputs' fate unknown."""
        await self.executor.drain(grace_s)
        if self._commit_task is not None:
            self._stopping.set()
            _, late = await asyncio.wait({self._commit_task}, timeout=grace_s)
            for task in late:  # a commit that hangs past the grace (broker gone)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.commit()
        await self.commits.close()

    def stale(self, revoked: Iterable[TopicPartition]) -> None:
        """Records of these partitions polled until now are not to be taken (`on_batch`)."""
        for tp in revoked:
            key = (tp.topic, tp.partition)
            self._revocations[key] = self._revocations.get(key, 0) + 1

    def rebalance_listener(self) -> ConsumerRebalanceListener:
        runner = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                runner.stale(revoked)  # first: a batch waiting for room takes no more of them
                await runner.commit()
                dropped = runner.executor.revoke(revoked)
                runner.outage.forget(revoked)
                runner.commits.revoked(revoked)
                if dropped:
                    log.info("%s: abandoned %d in-flight records of revoked partitions",
                             runner.stage.name, dropped)

            async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                if runner.consumer is not None:
                    await runner.commits.assigned(assigned, runner.consumer, runner.executor)

        return Listener()


def _key(record: ConsumerRecord) -> str | None:
    return record.key.decode("utf-8", "replace") if record.key else None
