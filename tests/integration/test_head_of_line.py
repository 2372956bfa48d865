"""One slow question must not hold back the replies of other questions on its partition, on the
real broker: not in exactly-once mode (outputs of finished records commit before the slow one
ends), and not when records carry no key (they share no ordering lane).

Counted: replies of the fast questions that came out while the slow one was still being
looked up. Every fast question is on the slow one's partition, produced after it."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from pmflow_gateway.schemas import AnswerStatus, ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.delivery import key_partitioner
from tests.fakes import WEATHER, SlowAdapter, SlowPlanner
from tests.support.chaos import Replies, report
from tests.support.kafka import produce
from tests.support.processors import Guarantee, running
from tests.support.workers import Worker

pytestmark = pytest.mark.kafka

FAST = 30
SLOW_S = 10.0
SLOW_QUESTION = "广州未来五天天气怎么样"  # its plan's topic says 五天; the fast ones' say 5天


def route(question_id: str, question: str = ROUTE_DECIDED["question"]) -> bytes:
    return orjson.dumps({**ROUTE_DECIDED, "event_id": str(uuid.uuid4()),
                         "question_id": question_id, "question": question})


def same_partition_keys(first: str, n: int, partitions: int = 3) -> list[str]:
    """`n` question ids whose records go to `first`'s partition (as every stage keys them)."""
    def part(key: str) -> int:
        return key_partitioner(key.encode(), list(range(partitions)), list(range(partitions)))
    keys = (f"{first}-fast-{i}" for i in range(10 * n))
    return [k for k in keys if part(k) == part(first)][:n]


class ReplyWatch:
    """Reads the reply topic (read_committed) from the start and notes, for each reply,
    whether the slow call had ended when it came."""

    def __init__(self, bootstrap: str, topic: str, slow_done: asyncio.Event) -> None:
        self.consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap,
                                         auto_offset_reset="earliest", enable_auto_commit=False,
                                         isolation_level="read_committed")
        self.slow_done = slow_done
        self.replies: list[tuple[ReplyRendered, bool]] = []

    async def until(self, questions: int, timeout_s: float = 90) -> None:
        await self.consumer.start()
        try:
            async with asyncio.timeout(timeout_s):
                while len({r.question_id for r, _ in self.replies}) < questions:
                    for records in (await self.consumer.getmany(timeout_ms=100)).values():
                        done = self.slow_done.is_set()
                        self.replies += [(ReplyRendered.model_validate_json(r.value), done)
                                         for r in records]
        finally:
            await self.consumer.stop()

    def delayed(self, slow_id: str) -> int:
        """Fast replies that came only after the slow question's call ended."""
        return sum(done for r, done in self.replies if r.question_id != slow_id)


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
async def test_a_slow_question_holds_back_no_reply_of_another_key(
        kafka_bootstrap: str, topics: Topics, guarantee: Guarantee) -> None:
    slow_id = f"slow-{uuid.uuid4().hex[:6]}"
    fast = same_partition_keys(slow_id, FAST)
    adapter = SlowAdapter(items=[WEATHER], slow_marker="五天", slow_s=SLOW_S)
    async with running(kafka_bootstrap, topics, adapters=[adapter], guarantee=guarantee):
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
        await producer.start()
        try:
            await producer.send_and_wait(topics.route_decided, route(slow_id, SLOW_QUESTION),
                                         key=slow_id.encode())
            for key in fast:
                await producer.send(topics.route_decided, route(key), key=key.encode())
            await producer.flush()
        finally:
            await producer.stop()
        watch = ReplyWatch(kafka_bootstrap, topics.reply_rendered, adapter.slow_done)
        await watch.until(FAST + 1)
    report(f"head of line {guarantee}", fast=FAST, delayed_behind_slow=watch.delayed(slow_id),
           replies=len(watch.replies))
    assert watch.delayed(slow_id) == 0
    assert len(watch.replies) == FAST + 1  # each once
    assert all(r.status is AnswerStatus.answered for r, _ in watch.replies)


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
async def test_records_without_a_key_do_not_wait_for_each_other(
        kafka_bootstrap: str, topics: Topics, guarantee: Guarantee) -> None:
    """The slow part is planning, the stage that reads the records without a key."""
    slow_id = f"slow-{uuid.uuid4().hex[:6]}"
    planner = SlowPlanner(slow_marker="五天", slow_s=SLOW_S)
    async with running(kafka_bootstrap, topics, planner=planner, guarantee=guarantee):
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
        await producer.start()
        try:  # all on one partition, as a producer that sets no key may well put them
            await producer.send_and_wait(topics.route_decided, route(slow_id, SLOW_QUESTION),
                                         partition=0)
            for i in range(FAST):
                await producer.send(topics.route_decided, route(f"{slow_id}-{i}"), partition=0)
            await producer.flush()
        finally:
            await producer.stop()
        watch = ReplyWatch(kafka_bootstrap, topics.reply_rendered, planner.slow_done)
        await watch.until(FAST + 1)
    report(f"null keys {guarantee}", fast=FAST, delayed_behind_slow=watch.delayed(slow_id),
           replies=len(watch.replies))
    assert watch.delayed(slow_id) == 0
    assert len(watch.replies) == FAST + 1


@pytest.mark.slow
async def test_records_committed_past_a_slow_one_are_not_run_again_after_a_kill(
        kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> None:
    """Exactly-once with the fast replies out while the slow question is still being looked
    up: a worker SIGKILLed then, and its successor, publish each fast reply once (the
    successor resumes at the slow record and skips those the commit's map lists)."""
    slow_id = f"slow-{uuid.uuid4().hex[:6]}"
    fast = same_partition_keys(slow_id, FAST)
    env = {"PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap, "PMFLOW_TOPIC_PREFIX": topics.prefix,
           "PMFLOW_PROCESSING_GUARANTEE": "exactly_once", "OTEL_EXPORTER_OTLP_ENDPOINT": ""}
    log = tmp_path / "workers.log"
    first = slow_worker({**env, "PMFLOW_TEST_SLOW_S": "600"}, log).start()
    async with Replies(kafka_bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        await produce(kafka_bootstrap, topics.route_decided,
                      [(slow_id.encode(), route(slow_id, SLOW_QUESTION))]
                      + [(k.encode(), route(k)) for k in fast])
        await replies.wait_for({k.encode() for k in fast}, timeout_s=120, worker=first)
        fast_before_kill = sum(k.encode() in replies.by_question for k in fast)
        first.kill()
        second = slow_worker({**env, "PMFLOW_TEST_SLOW_S": "0"}, log).start()
        await replies.wait_for({slow_id.encode()}, timeout_s=120, worker=second)
        await asyncio.sleep(3)  # a fast question run again would show up by now
        second.terminate()
    report("kill past a slow record", fast=FAST, fast_out_before_kill=fast_before_kill,
           replies=sum(len(rs) for rs in replies.by_question.values()),
           duplicates=replies.duplicates)
    assert fast_before_kill == FAST
    assert set(replies.by_question) == {k.encode() for k in [slow_id, *fast]}
    assert replies.duplicates == 0, log.read_text()[-3000:]


def slow_worker(env: dict[str, str], log: Path) -> Worker:
    worker = Worker(env, log=log)
    worker.args = [sys.executable, "-m", "tests.support.slow_worker"]
    return worker
