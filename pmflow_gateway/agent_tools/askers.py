"""Two ways to get one question answered (or probed) by the stage cores: in this process, or
by the workers through Kafka. Both end at the question's AnswerReady (or the probe's
ProbeCompleted) or at its deadline."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import BaseModel, ValidationError

from pmflow_gateway.embedded import ask_in_process, probe_in_process
from pmflow_gateway.handlers.memory import is_remembered
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import (
    AnswerReady,
    ProbeCompleted,
    ProbeRequested,
    ReplyRendered,
    RouteDecided,
    Topics,
)
from pmflow_gateway.streams.codec import encode
from pmflow_gateway.streams.consumer_state import partitions_of
from pmflow_gateway.tracing import publishing

log = logging.getLogger(__name__)


class AnswerTimeout(TimeoutError):
    """The question's deadline passed before its answer was ready."""


class NotAnswered(RuntimeError):
    """The stage cores declined the question (an internal route is not ours to answer)."""


@dataclass(frozen=True)
class Asked:
    """A question's final answer, and what became of its memory write."""

    answer: AnswerReady
    remembered: bool | None = None
    """True: written to the tenant's memories; False: not (see `memory_error`), the answer
    stands; None: the workers write it, durably, on their own time."""
    memory_error: str | None = None


class Asker(Protocol):
    async def ask(self, route: RouteDecided, *, timeout_s: float) -> Asked:
        """The question's final answer; `AnswerTimeout` after `timeout_s`."""
        ...

    async def probe(self, request: ProbeRequested, *, timeout_s: float) -> ProbeCompleted:
        """The external probe's reply; `AnswerTimeout` after `timeout_s`."""
        ...

    async def aclose(self) -> None:
        ...


class EmbeddedAsker:
    """Runs plan, evidence, answer, render and memory in this process, as the workers would."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    async def ask(self, route: RouteDecided, *, timeout_s: float) -> Asked:
        try:
            async with asyncio.timeout(timeout_s):
                outcome = await ask_in_process(route, self._deps)
        except TimeoutError as exc:
            raise AnswerTimeout(f"no answer within {timeout_s * 1000:.0f} ms") from exc
        if outcome.answer is None:
            raise NotAnswered("the question was not routed to external sources")
        if not is_remembered(outcome.answer, agent_questions=self._deps.remember_agent_questions):
            return Asked(outcome.answer)  # not written, by the setting: nothing to report
        return Asked(outcome.answer, remembered=outcome.memory_error is None,
                     memory_error=outcome.memory_error)

    async def probe(self, request: ProbeRequested, *, timeout_s: float) -> ProbeCompleted:
        try:
            async with asyncio.timeout(timeout_s):
                return await probe_in_process(request, self._deps)
        except TimeoutError as exc:
            raise AnswerTimeout(f"no probe result within {timeout_s * 1000:.0f} ms") from exc

    async def aclose(self) -> None:
        await self._deps.aclose()


class KafkaAsker:
    """The request/reply client on Kafka: publishes a RouteDecided (or a ProbeRequested) and
    waits for the AnswerReady, the ReplyRendered (or the ProbeCompleted) with its question id.
    The MCP server's `--kafka` and `pmflow-gateway ask --kafka` both use it.

    One consumer reads the reply topics it was made for (`replies`: by default the answer and
    the probe's), `read_committed` (exactly-once workers' aborted writes are never taken for
    a reply), from the moment it started, and hands each reply to the call waiting for that
    question id; replies nobody waits for (other callers', redeliveries) are skipped. Each
    request carries the caller's trace context. Call `start` before `ask`."""

    def __init__(self, bootstrap: str, topics: Topics, *,
                 replies: dict[str, type[BaseModel]] | None = None) -> None:
        self._bootstrap = bootstrap
        self._topics = topics
        self._replies: dict[str, type[BaseModel]] = replies or {
            topics.answer_ready: AnswerReady, topics.probe_completed: ProbeCompleted}
        self._waiting: dict[tuple[str, str], asyncio.Future[Any]] = {}
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._producer = AIOKafkaProducer(bootstrap_servers=self._bootstrap, acks="all")
        self._consumer = AIOKafkaConsumer(bootstrap_servers=self._bootstrap,
                                          enable_auto_commit=False,
                                          isolation_level="read_committed")
        await self._producer.start()
        await self._consumer.start()
        assigned = [TopicPartition(topic, p) for topic in self._replies
                    for p in sorted(await self._partitions(topic))]
        self._consumer.assign(assigned)
        await self._consumer.seek_to_end(*assigned)
        for tp in assigned:  # pin the positions: no reply published from now on is missed
            await self._consumer.position(tp)
        self._reader = asyncio.create_task(self._read(), name="agent-tools-replies")

    async def _partitions(self, topic: str) -> set[int]:
        assert self._consumer is not None
        partitions = (self._consumer.partitions_for_topic(topic)
                      or await partitions_of(self._bootstrap, topic) or {0})
        return set(partitions)

    async def _read(self) -> None:
        assert self._consumer is not None
        async for record in self._consumer:
            key = record.key.decode("utf-8", "replace") if record.key else ""
            waiter = self._waiting.get((record.topic, key))
            if waiter is None or waiter.done() or record.value is None:
                continue
            try:
                waiter.set_result(self._replies[record.topic].model_validate_json(record.value))
            except ValidationError as exc:
                log.warning("unreadable reply on %s at offset %s: %s", record.topic,
                            record.offset, exc)

    async def ask(self, route: RouteDecided, *, timeout_s: float) -> Asked:
        answer = await self._request(self._topics.route_decided, route,
                                     self._topics.answer_ready, timeout_s)
        return Asked(answer)

    async def rendered(self, route: RouteDecided, *, timeout_s: float) -> ReplyRendered:
        """The question's rendered reply (an asker made with `replies` naming its topic)."""
        reply: ReplyRendered = await self._request(self._topics.route_decided, route,
                                                   self._topics.reply_rendered, timeout_s)
        return reply

    async def probe(self, request: ProbeRequested, *, timeout_s: float) -> ProbeCompleted:
        completed: ProbeCompleted = await self._request(
            self._topics.probe_requested, request, self._topics.probe_completed, timeout_s)
        return completed

    async def _request(self, topic: str, event: RouteDecided | ProbeRequested, reply_topic: str,
                       timeout_s: float) -> Any:
        if self._producer is None or self._reader is None or self._reader.done():
            raise RuntimeError("the Kafka reply reader is not running")
        if reply_topic not in self._replies:
            raise ValueError(f"this asker does not read {reply_topic}")
        key = (reply_topic, event.question_id)
        if key in self._waiting:
            raise ValueError(f"question {event.question_id} is already being asked")
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[key] = waiter
        try:
            async with asyncio.timeout(timeout_s):
                with publishing(topic, event.question_id) as trace_headers:
                    await self._producer.send_and_wait(
                        topic, encode(event), key=event.question_id.encode(),
                        headers=[("event_type", type(event).__name__.encode()),
                                 *trace_headers])
                return await waiter
        except TimeoutError as exc:
            raise AnswerTimeout(f"no reply within {timeout_s * 1000:.0f} ms; are the "
                                "workers running (pmflow-gateway run)?") from exc
        finally:
            self._waiting.pop(key, None)

    async def aclose(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._consumer is not None:
            await self._consumer.stop()
        if self._producer is not None:
            await self._producer.stop()
