"""Exactly-once against at-least-once, same in-flight bound, one worker per mode, in one run.

Per mode: questions/s through the whole pipeline at saturation (a burst sent at once, timed
until its last reply), the worker's CPU ms per question over that burst, and end-to-end
latency p50/p95/p99 at 50 questions/s; after one unmeasured exactly-once pass that warms the
broker's transaction paths (`broker_warmup` in the result). Replies are read `read_committed`,
as a consumer of exactly-once output must, in both modes (no difference for non-transactional
writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench import kafka
from bench.fixtures import route_decided
from bench.pipeline import ALL_STAGES
from bench.process import Worker
from bench.report import summary
from pmflow_gateway.schemas import Topics

MODES = ("at_least_once", "exactly_once")
PARTITIONS = 3


@contextlib.contextmanager
def guarantee(mode: str) -> Iterator[None]:
    """The worker reads its settings from the environment it inherits."""
    before = os.environ.get("PMFLOW_PROCESSING_GUARANTEE")
    os.environ["PMFLOW_PROCESSING_GUARANTEE"] = mode
    try:
        yield
    finally:
        if before is None:
            del os.environ["PMFLOW_PROCESSING_GUARANTEE"]
        else:
            os.environ["PMFLOW_PROCESSING_GUARANTEE"] = before


async def committed_replies(bootstrap: str, topic: str) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                auto_offset_reset="earliest", fetch_max_wait_ms=100,
                                isolation_level="read_committed")
    await consumer.start()
    parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(parts)
    await consumer.seek_to_beginning(*parts)
    return consumer


async def _burst(bootstrap: str, topics: Topics, run_id: str, worker: Worker,
                 replies: AIOKafkaConsumer, n: int) -> dict[str, Any]:
    before = await worker.sample()
    started = time.monotonic()
    await kafka.produce_all(bootstrap, topics.route_decided,
                            [route_decided(run_id, i) for i in range(n)])
    await kafka.read_until(replies, lambda rs: len(rs) >= n, timeout_s=300)
    seconds = time.monotonic() - started
    after = await worker.sample()
    return {"questions": n, "seconds": round(seconds, 2),
            "questions_per_s": round(n / seconds, 1),
            "cpu_ms_per_question": round((after["cpu_s"] - before["cpu_s"]) * 1000 / n, 2),
            # Six stages a question: how many records each transaction carried.
            "transactions_per_question": round(
                (after["transactions"] - before["transactions"]) / n, 2)}


async def _at_rate(bootstrap: str, topics: Topics, run_id: str, replies: AIOKafkaConsumer,
                   first: int, n: int, rate: float, warmup: int) -> dict[str, Any]:
    sent: dict[str, float] = {}
    received: dict[str, float] = {}

    def on_record(record: Any, now: float) -> None:
        received.setdefault(record.key.decode(), now)

    sender = asyncio.create_task(kafka.produce_at_rate(
        bootstrap, topics.route_decided, [route_decided(run_id, first + i) for i in range(n)],
        rate, sent))
    await kafka.read_until(replies, lambda _: len(received) >= n, timeout_s=n / rate + 120,
                           on_record=on_record)
    await sender
    keys = sorted(sent, key=sent.__getitem__)[warmup:]
    return {"rate_per_s": rate, "questions": n, "warmup_excluded": warmup,
            "end_to_end_ms": summary([(received[k] - sent[k]) * 1000 for k in keys], 1)}


async def _one_mode(bootstrap: str, mode: str, *, burst: int, rate: float,
                    seconds: float) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:8]
    topics = Topics(prefix=f"bench{run_id}.")
    await kafka.create_topics(bootstrap, topics, partitions=PARTITIONS)
    with guarantee(mode):
        worker = Worker(bootstrap, topics.prefix, stages=",".join(ALL_STAGES))
        await worker.start()
    replies = await committed_replies(bootstrap, topics.reply_rendered)
    try:
        saturation = await _burst(bootstrap, topics, run_id, worker, replies, burst)
        latency = await _at_rate(bootstrap, topics, run_id, replies, burst, int(rate * seconds),
                                 rate, warmup=int(rate))
    finally:
        await worker.stop()
        await replies.stop()
        await kafka.delete_topics(bootstrap, topics.all())
    return {"saturation": saturation, "at_50_per_s": latency}


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    burst, seconds = (300, 4.0) if quick else (2000, 20.0)
    # A broker's first minute of transactions after it starts is slow (its JVM has not yet
    # compiled the transaction paths): on a broker started empty, the first full exactly-once
    # pass read p50 66-105 ms and p99 240-365 ms, the next one 31-33 and 123-126 ms. A broker
    # in service is warm: one unmeasured pass first, reported as `broker_warmup`.
    warmup = await _one_mode(bootstrap, "exactly_once", burst=burst, rate=50.0, seconds=seconds)
    results = {mode: await _one_mode(bootstrap, mode, burst=burst, rate=50.0, seconds=seconds)
               for mode in MODES}
    alo, eos = (results[m]["saturation"]["questions_per_s"] for m in MODES)
    return {
        "parameters": {"burst_questions": burst, "rate_per_s": 50.0, "rate_seconds": seconds,
                       "partitions": PARTITIONS, "in_flight": "default (same in both modes)",
                       "stages": list(ALL_STAGES), "adapter": "instant fake"},
        "results": results,
        "broker_warmup": {"exactly_once": warmup},
        "exactly_once_throughput_cost_pct": round((1 - eos / alo) * 100, 1),
    }
