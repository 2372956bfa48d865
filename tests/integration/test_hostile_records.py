"""Hostile Kafka records on the real broker: a record's bad headers or an output too large to
publish end that record alone; its neighbours are answered and commits reach the end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from pmflow_gateway.ports import AdapterResult, Unpublishable
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, DeadLettered, Topics
from pmflow_gateway.schemas.contracts import AdapterAttempt, ExternalQueryPlan
from pmflow_gateway.schemas.examples import ROUTE_DECIDED as PMFLOW_EXAMPLE
from pmflow_gateway.streams.app import Processor
from pmflow_gateway.streams.publisher import EventPublisher
from tests.fakes import WEATHER
from tests.support.kafka import collect, create_topic
from tests.support.processors import Guarantee, running

pytestmark = pytest.mark.kafka


@pytest.fixture
async def processor(kafka_bootstrap: str, topics: Topics) -> AsyncIterator[Processor]:
    async with running(kafka_bootstrap, topics) as proc:
        yield proc


async def _send(bootstrap: str, topic: str,
                records: list[tuple[bytes, bytes, list[tuple[str, bytes | None]]]]) -> None:
    """Every record in one produce batch (one key, one partition), headers as given."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=200)
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key, headers=headers)
                   for key, value, headers in records]
        for future in futures:
            await future
    finally:
        await producer.stop()


async def _wait_committed(processor: Processor, stage: str, topic: str, end: int) -> int:
    runner = next(r for r in processor.runners if r.stage.name == stage)
    assert runner.consumer is not None
    for _ in range(100):
        await runner.commit()
        done = runner.executor.committed_offsets()
        total = sum(offset for tp, offset in done.items() if tp.topic == topic)
        if total >= end:
            return total
        await asyncio.sleep(0.1)
    return sum(offset for tp, offset in runner.executor.committed_offsets().items()
               if tp.topic == topic)


async def test_bad_headers_end_their_own_record_never_the_batch(
        processor: Processor, kafka_bootstrap: str) -> None:
    topics = processor.topics
    bad_headers: dict[int, list[tuple[str, bytes | None]]] = {
        2: [("x-note", b"\xff\xfe")], 3: [("x-empty", None)], 4: [("traceparent", None)]}
    records = []
    for i in range(6):
        value = orjson.dumps({**PMFLOW_EXAMPLE, "question_id": f"hdr-{i}",
                              "event_id": f"e-{i}"})
        records.append((b"same-key", value, bad_headers.get(i, [])))
    await _send(kafka_bootstrap, topics.route_decided, records)
    found = await collect(kafka_bootstrap, [topics.answer_ready, topics.dead_letter],
                          until=lambda rs: len({r.key for r in rs}) >= 6, timeout_s=30,
                          settle_s=0.5)
    answered = {AnswerReady.model_validate_json(r.value).question_id for r in found
                if r.topic == topics.answer_ready}
    letters = [DeadLettered.model_validate_json(r.value) for r in found
               if r.topic == topics.dead_letter]
    assert all(letter.reason for letter in letters)
    assert answered | {letter.question_id for letter in letters} == {f"hdr-{i}" for i in range(6)}
    assert {f"hdr-{i}" for i in (0, 1, 5)} <= answered
    assert await _wait_committed(processor, "plan", topics.route_decided, 6) == 6


@dataclass
class OneHugeThenNormal:
    """The first plan gets evidence of `blob` bytes, later ones normal evidence."""

    blob: int
    name: str = "mcp"
    calls: int = 0

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls += 1
        item = WEATHER
        if self.calls == 1:
            item = WEATHER.model_copy(update={"raw_metadata": {"blob": "x" * self.blob}})
        return AdapterResult(items=[item], attempts=[
            AdapterAttempt(adapter=self.name, outcome="ok", evidence_count=1)])

    async def aclose(self) -> None:
        return None


async def _limit_topic(bootstrap: str, topic: str, max_bytes: int) -> None:
    """Create `topic` with a record limit below the producers' own, so only the broker
    refuses (after the send, inside a transaction in exactly-once mode)."""
    await create_topic(bootstrap, topic, configs={"max.message.bytes": str(max_bytes)})


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
@pytest.mark.parametrize("refused_by", ["producer", "broker"])
async def test_an_unpublishable_output_ends_its_record_and_the_next_is_answered(
        kafka_bootstrap: str, topics: Topics, guarantee: Guarantee, refused_by: str) -> None:
    """Too large for any request (3 MB), or only for its topic (400 KB against 200 KB): a
    held output in exactly-once mode would fail its transaction on every cycle."""
    blob = 3_000_000
    if refused_by == "broker":
        blob = 400_000
        await _limit_topic(kafka_bootstrap, topics.evidence_collected, 200_000)
    async with running(kafka_bootstrap, topics, adapters=[OneHugeThenNormal(blob)],
                       guarantee=guarantee) as processor:
        records = [(b"one-key", orjson.dumps({**PMFLOW_EXAMPLE, "question_id": f"big-{i}",
                                              "event_id": f"b-{i}"}), []) for i in range(3)]
        await _send(kafka_bootstrap, topics.route_decided, records)  # type: ignore[arg-type]
        found = await collect(kafka_bootstrap, [topics.answer_ready, topics.dead_letter],
                              until=lambda rs: len(rs) >= 4, timeout_s=40, settle_s=1.0,
                              isolation_level="read_committed")
        answers = [AnswerReady.model_validate_json(r.value) for r in found
                   if r.topic == topics.answer_ready]
        letters = [DeadLettered.model_validate_json(r.value) for r in found
                   if r.topic == topics.dead_letter]
        assert sorted((a.question_id, a.status) for a in answers) == [
            ("big-0", AnswerStatus.failed), ("big-1", AnswerStatus.answered),
            ("big-2", AnswerStatus.answered)]
        assert [(d.question_id, d.stage, d.origin_topic) for d in letters] == [
            ("big-0", "evidence", topics.plan_created)]
        assert "TooLarge" in letters[0].reason
        # Exactly once, the topic's offsets also count the plan stage's transaction markers,
        # which fall where its transactions happened to end: the commit must reach one past
        # the last plan, wherever that is.
        plans = await collect(kafka_bootstrap, [topics.plan_created],
                              until=lambda rs: len(rs) >= 3, timeout_s=20,
                              isolation_level="read_committed")
        end = sum(max(r.offset for r in plans if r.partition == p) + 1
                  for p in {r.partition for r in plans})
        assert len(plans) == 3
        assert await _wait_committed(processor, "evidence", topics.plan_created, end) == end


async def test_a_record_the_broker_refuses_leaves_its_partition_writable(
        kafka_bootstrap: str, topics: Topics) -> None:
    """The idempotent producer numbered the refused batch, so the broker would refuse every
    later batch of that partition as out of sequence: the publisher starts a new producer."""
    topic = topics.evidence_collected
    await _limit_topic(kafka_bootstrap, topic, 200_000)
    big = WEATHER.model_copy(update={"raw_metadata": {"blob": "x" * 400_000}})
    publisher = EventPublisher(kafka_bootstrap)
    await publisher.start()
    try:
        for round_ in range(2):  # the shared producer first, then the lone one's own gap
            with pytest.raises(Unpublishable, match="TooLarge"):
                await asyncio.wait_for(publisher.send(topic, "one-key", big), 30)
            for i in range(2):
                await asyncio.wait_for(publisher.send(
                    topic, "one-key", WEATHER.model_copy(update={"title": f"{round_}-{i}"})), 30)
    finally:
        await publisher.stop()
    found = await collect(kafka_bootstrap, [topic], until=lambda rs: len(rs) >= 4, timeout_s=20)
    assert sorted(orjson.loads(r.value)["title"] for r in found) == ["0-0", "0-1", "1-0", "1-1"]
