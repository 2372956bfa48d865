"""Two ways to get one question answered by the stage cores: in this process, or by the
workers through Kafka. Both end at the question's AnswerReady or at its deadline."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import ValidationError

from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.memory import is_remembered
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import AnswerReady, RouteDecided, Topics
from pmflow_gateway.streams.codec import encode

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

    async def aclose(self) -> None:
        await self._deps.aclose()


class KafkaAsker:
    """Publishes a RouteDecided and waits for the AnswerReady with its question id.

    One consumer per server reads the answer topic from the moment it started and hands
    each answer to the call waiting for that question id; answers nobody waits for (other
    callers', redeliveries) are skipped. Call `start` before `ask`."""

    def __init__(self, bootstrap: str, topics: Topics) -> None:
        self._bootstrap = bootstrap
        self._topics = topics
        self._waiting: dict[str, asyncio.Future[AnswerReady]] = {}
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._producer = AIOKafkaProducer(bootstrap_servers=self._bootstrap, acks="all")
        self._consumer = AIOKafkaConsumer(bootstrap_servers=self._bootstrap,
                                          enable_auto_commit=False)
        await self._producer.start()
        await self._consumer.start()
        topic = self._topics.answer_ready
        partitions = self._consumer.partitions_for_topic(topic)
        if not partitions:
            await self._consumer._client.force_metadata_update()  # the topic may be new
            partitions = self._consumer.partitions_for_topic(topic) or {0}
        assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
        self._consumer.assign(assigned)
        await self._consumer.seek_to_end(*assigned)
        for tp in assigned:  # pin the positions: no answer published from now on is missed
            await self._consumer.position(tp)
        self._reader = asyncio.create_task(self._read(), name="agent-tools-answers")

    async def _read(self) -> None:
        assert self._consumer is not None
        async for record in self._consumer:
            waiter = self._waiting.get(record.key.decode("utf-8", "replace")
                                       if record.key else "")
            if waiter is None or waiter.done() or record.value is None:
                continue
            try:
                waiter.set_result(AnswerReady.model_validate_json(record.value))
            except ValidationError as exc:
                log.warning("unreadable AnswerReady at offset %s: %s", record.offset, exc)

    async def ask(self, route: RouteDecided, *, timeout_s: float) -> Asked:
        if self._producer is None or self._reader is None or self._reader.done():
            raise RuntimeError("the Kafka answer reader is not running")
        if route.question_id in self._waiting:
            raise ValueError(f"question {route.question_id} is already being asked")
        waiter: asyncio.Future[AnswerReady] = asyncio.get_running_loop().create_future()
        self._waiting[route.question_id] = waiter
        try:
            async with asyncio.timeout(timeout_s):
                await self._producer.send_and_wait(
                    self._topics.route_decided, encode(route), key=route.question_id.encode(),
                    headers=[("event_type", b"RouteDecided")])
                return Asked(await waiter)
        except TimeoutError as exc:
            raise AnswerTimeout(f"no answer within {timeout_s * 1000:.0f} ms; are the "
                                "workers running (pmflow-gateway run)?") from exc
        finally:
            self._waiting.pop(route.question_id, None)

    async def aclose(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._consumer is not None:
            await self._consumer.stop()
        if self._producer is not None:
            await self._producer.stop()
