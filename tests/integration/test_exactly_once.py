"""Exactly-once output topics: a `read_committed` reader sees one reply per question across
SIGKILLs, a paused zombie and a broker restart; poison is dead-lettered once.

Each run prints its numbers; the kill run does both guarantees so they compare in one run.
"""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from collections import Counter
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from pmflow_gateway.schemas import Topics
from pmflow_gateway.streams.consumer_state import StableOffsets
from pmflow_gateway.streams.parallel import OrderedExecutor
from pmflow_gateway.streams.transactional import ExactlyOnce
from tests.support.broker import PrivateBroker
from tests.support.chaos import (
    Replies,
    check_run,
    committed_and_ends,
    lost_where,
    qa_rows,
    report,
    routes,
    worker_env,
)
from tests.support.kafka import collect, create_topic, produce
from tests.support.workers import Worker

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]
QUESTIONS = int(os.environ.get("PMFLOW_CHAOS_QUESTIONS", "2000"))


async def test_partitions_with_a_transaction_open_are_told_apart(kafka_bootstrap: str) -> None:
    """What settling reads on the real broker: a partition holding records of a transaction
    not yet ended is behind its high watermark for a `read_committed` reader; once the
    transaction ends, or where none was begun, it is not."""
    topic = f"open{uuid.uuid4().hex[:8]}"
    await create_topic(kafka_bootstrap, topic, partitions=2)
    await produce(kafka_bootstrap, topic, [(b"k", b"{}")])  # outside any transaction
    tps = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap,
                                transactional_id=f"t{uuid.uuid4().hex[:8]}")
    reader = StableOffsets(bootstrap=kafka_bootstrap)
    await producer.start()
    try:
        assert await reader.among(tps) == set()
        await producer.begin_transaction()
        sent = await (await producer.send(topic, b"{}", partition=1))
        assert await reader.among(tps) == {TopicPartition(topic, 1)}
        assert (await reader.stable({TopicPartition(topic, 1)}))[TopicPartition(topic, 1)] \
            <= sent.offset  # held before the open transaction's record
        await producer.abort_transaction()
        for _ in range(50):  # the markers follow the end of the transaction
            if not await reader.among(tps):
                break
            await asyncio.sleep(0.1)
        assert await reader.among(tps) == set()
        assert (await reader.stable({TopicPartition(topic, 1)}))[TopicPartition(topic, 1)] \
            > sent.offset
    finally:
        await producer.stop()
        await reader.close()


async def test_a_batch_fetched_before_a_rewind_is_refused_whole(kafka_bootstrap: str) -> None:
    """The race behind a skipped range: the partition is rewound while a batch fetched from
    the old position is being taken. Taking its records from the resume offset on would
    leave a gap below them, and the commit would pass over it."""
    topic, group = f"rewind{uuid.uuid4().hex[:8]}", f"g{uuid.uuid4().hex[:8]}"
    await create_topic(kafka_bootstrap, topic, partitions=1)
    await produce(kafka_bootstrap, topic, [(f"k{i}".encode(), b"{}") for i in range(40)])
    tp = TopicPartition(topic, 0)
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group,
                                enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    txn = ExactlyOnce(bootstrap=kafka_bootstrap, group_id=group, stage="plan", max_held=100)
    try:
        consumer.assign([tp])
        await consumer.commit({tp: 5})
        # The fetcher may have looked up the committed offset before the commit above and
        # started from the earliest one; start this reader where the group stands.
        consumer.seek(tp, 5)
        first = await fetch(consumer, tp, 20)
        wanted = txn.admission()  # as of the poll, as the consume loop asks
        assert [r.offset for r in first if wanted(r)] == list(range(5, 25))
        stale = await fetch(consumer, tp, 10)  # offsets 25..34
        wanted = txn.admission()
        await txn.rewind([tp], consumer, OrderedExecutor(_idle, max_in_flight=1))  # to 5
        assert [r.offset for r in stale if wanted(r)] == []  # taken after the rewind
        fresh = await fetch(consumer, tp, 35)
        wanted = txn.admission()
        assert [r.offset for r in fresh if wanted(r)] == list(range(5, 40))
    finally:
        await consumer.stop()
        await txn.close()


async def _idle(record: object) -> None:
    return None


async def fetch(consumer: AIOKafkaConsumer, tp: TopicPartition, n: int) -> list[ConsumerRecord]:
    records: list[ConsumerRecord] = []
    while len(records) < n:
        batch = await consumer.getmany(tp, timeout_ms=5000, max_records=n - len(records))
        assert batch, f"only {len(records)} of {n} records came"
        records += batch[tp]
    return records


def env_for(bootstrap: str, topics: Topics, postgres_url: str, guarantee: str,
            **extra: str) -> dict[str, str]:
    return {**worker_env(bootstrap, topics, postgres_url, guarantee), **extra}


def keys(tenant: str, n: int) -> set[bytes]:
    return {f"{tenant}-{i}".encode() for i in range(n)}


async def killed_three_times(bootstrap: str, postgres_url: str, guarantee: str,
                             tmp_path: Path, n: int) -> dict[str, int]:
    topics = Topics(prefix=f"test{uuid.uuid4().hex[:8]}.")
    tenant = f"eos{uuid.uuid4().hex[:6]}"
    env = env_for(bootstrap, topics, postgres_url, guarantee)
    log = tmp_path / f"{guarantee}.log"
    worker = Worker(env, log=log).start()
    kills = 0
    async with Replies(bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        # The questions arrive in four parts, one more after each kill, so a fast worker
        # cannot finish the run before the third kill: every kill lands while there is work.
        messages = routes(tenant, n)
        parts = [messages[i * n // 4:(i + 1) * n // 4] for i in range(4)]
        await produce(bootstrap, topics.route_decided, parts[0])
        rng = random.Random(7)
        while kills < 3:
            # Kill mid-run, soon after the worker (restarts are slow here) answers again,
            # while every stage has work in flight.
            await replies.wait_for_count(len(replies.by_question) + 1, timeout_s=120,
                                         worker=worker)
            await asyncio.sleep(rng.uniform(0.05, 0.5))
            worker.kill()
            kills += 1
            worker = Worker(env, log=log).start()
            await produce(bootstrap, topics.route_decided, parts[kills])
        await replies.wait_for(keys(tenant, n), timeout_s=300, worker=worker)
        rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
        await asyncio.sleep(2)  # a late duplicate, if any, has time to show
        worker.terminate()
        assert replies.one_content_per_event_id()
        numbers = {"questions": n, "kills": kills, "replies": len(replies.by_question),
                   "duplicates": replies.duplicates, "rows": rows, "distinct_rows": distinct,
                   "lost": n - len(replies.by_question)}
    report(f"kill {guarantee}", **numbers)
    assert numbers["lost"] == 0, log.read_text()[-3000:]
    assert rows == distinct == n, log.read_text()[-6000:]
    return numbers


async def test_killed_workers_exactly_once_against_at_least_once(
        kafka_bootstrap: str, postgres_url: str, tmp_path: Path) -> None:
    eos = await killed_three_times(kafka_bootstrap, postgres_url, "exactly_once", tmp_path,
                                   QUESTIONS)
    alo = await killed_three_times(kafka_bootstrap, postgres_url, "at_least_once", tmp_path,
                                   QUESTIONS)
    print("\n| mode | questions | kills | replies (read_committed) | duplicates | QA rows | lost |")
    for name, row in (("exactly_once", eos), ("at_least_once", alo)):
        print(f"| {name} | {row['questions']} | {row['kills']} | {row['replies']} | "
              f"{row['duplicates']} | {row['rows']} | {row['lost']} |")
    assert eos["duplicates"] == 0


async def test_paused_worker_outputs_never_become_visible(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"zmb{uuid.uuid4().hex[:6]}", 600
    env = env_for(kafka_bootstrap, topics, postgres_url, "exactly_once")
    first = Worker(env, log=tmp_path / "first.log").start()
    second = Worker(env, log=tmp_path / "second.log").start()
    async with Replies(kafka_bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
        await replies.wait_for_count(n // 5, timeout_s=120, worker=first)
        first.pause()  # holding outputs and an open transaction
        try:
            # Past the session timeout the group moves its partitions to the second worker,
            # whose producers fence the paused worker's transactional ids.
            await replies.wait_for_count(n, timeout_s=240, worker=second)
        finally:
            first.resume()
        await asyncio.sleep(8)  # the resumed zombie tries to commit what it held
        rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
        first.terminate()
        second.terminate()
    check_run("paused zombie", replies, n=n, rows=rows, distinct=distinct,
              log=tmp_path / "second.log", exactly_once=True)


async def test_broker_restart_exactly_once_loses_and_doubles_nothing(
        postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    broker = PrivateBroker(tmp_path / "kafka")
    broker.start()
    tenant, n = f"ebrk{uuid.uuid4().hex[:6]}", 400
    worker = Worker(env_for(broker.bootstrap, topics, postgres_url, "exactly_once"),
                    log=tmp_path / "worker.log").start()
    try:
        async with Replies(broker.bootstrap, topics.reply_rendered,
                           isolation_level="read_committed") as replies:
            await produce(broker.bootstrap, topics.route_decided, routes(tenant, n))
            await replies.wait_for_count(n // 5, timeout_s=120, worker=worker)
            broker.stop()
            await asyncio.sleep(5)
            broker.start()
            await replies.wait_for(keys(tenant, n), timeout_s=240, worker=worker)
            rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
            await asyncio.sleep(2)
            print(await lost_where(broker.bootstrap, topics.reply_rendered,
                                   replies.missing(keys(tenant, n)),
                                   [f"{topics.prefix}gateway-{s}" for s in ("answer", "render")]),
                  f"reader's poll errors: {replies.poll_errors[:5]}")
            check_run("broker-restart exactly_once", replies, n=n, rows=rows,
                      distinct=distinct, log=tmp_path / "worker.log", exactly_once=True,
                      restarts=1)
    finally:
        if worker.alive:
            worker.kill()
        broker.stop()


POISON = [b"{not json", orjson.dumps({"question_id": "x"}), b"",
          orjson.dumps({"event_id": "e", "question_id": "p", "schema_version": 99})]


async def test_poison_is_dead_lettered_once_across_a_kill(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"epsn{uuid.uuid4().hex[:6]}", 300
    good = routes(tenant, n)
    poison = [(f"poison-{i}".encode(), POISON[i % len(POISON)]) for i in range(40)]
    mixed = [m for pair in zip(good[:40], poison, strict=True) for m in pair] + good[40:]
    env = env_for(kafka_bootstrap, topics, postgres_url, "exactly_once")
    worker = Worker(env, log=tmp_path / "worker.log").start()
    async with Replies(kafka_bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        await produce(kafka_bootstrap, topics.route_decided, mixed)
        await replies.wait_for_count(n // 3, timeout_s=120, worker=worker)
        worker.kill()
        worker = Worker(env, log=tmp_path / "worker.log").start()
        await replies.wait_for(keys(tenant, n), timeout_s=240, worker=worker)
        worker.terminate()
    letters = await collect(kafka_bootstrap, [topics.dead_letter],
                            until=lambda rs: len(rs) >= len(poison), settle_s=2.0,
                            isolation_level="read_committed")
    per_origin = Counter((doc["origin_partition"], doc["origin_offset"])
                         for doc in (orjson.loads(r.value) for r in letters))
    report("poison exactly_once", poison=len(poison), dead_letters=len(letters),
           duplicated=sum(c - 1 for c in per_origin.values()), replies=len(replies.by_question))
    assert len(per_origin) == len(poison)
    assert set(per_origin.values()) == {1}
    assert replies.duplicates == 0


async def test_sigterm_commits_the_last_transaction(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"eterm{uuid.uuid4().hex[:6]}", 300
    env = env_for(kafka_bootstrap, topics, postgres_url, "exactly_once")
    log = tmp_path / "worker.log"
    worker = Worker(env, log=log, grace_s=15).start()
    async with Replies(kafka_bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
        await replies.wait_for_count(1, timeout_s=120, worker=worker)
        assert worker.terminate(timeout_s=60) == 0, log.read_text()[-3000:]  # mid-run
        worker = Worker(env, log=log, grace_s=15).start()
        await replies.wait_for(keys(tenant, n), timeout_s=180, worker=worker)
        # The first worker may have answered everything while it drained: let the second one
        # get past the interpreter's start, where no program can catch a SIGTERM.
        await asyncio.sleep(1.0)
        assert worker.terminate(timeout_s=60) == 0, log.read_text()[-3000:]
    committed, ends = await committed_and_ends(kafka_bootstrap, f"{topics.prefix}gateway-plan")
    assert committed == ends
    assert len(replies.by_question) == n and replies.duplicates == 0
