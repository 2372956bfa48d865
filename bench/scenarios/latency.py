"""End-to-end latency at a fixed arrival rate through the whole pipeline in one worker process
(instant adapter): RouteDecided send -> ReplyRendered receipt, and where the time goes.

Per hop, from the Kafka record timestamps (the producer's clock, ms): route -> plan-created ->
evidence-collected -> answer-ready -> reply-rendered; per stage core, from
AnswerReady.context.stage_timings_ms."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections import defaultdict
from typing import Any

import orjson

from bench import kafka
from bench.fixtures import question_id, route_decided
from bench.pipeline import ALL_STAGES
from bench.process import Worker
from bench.report import summary
from pmflow_gateway.schemas import Topics

HOPS = ("route_decided", "plan_created", "evidence_collected", "answer_ready", "reply_rendered")


async def _send_at_rate(bootstrap: str, topics: Topics, run_id: str, rate: float, n: int,
                        sent: dict[str, float]) -> None:
    producer = kafka.producer(bootstrap)
    await producer.start()
    try:
        start = time.monotonic()
        for i in range(n):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            key, value = route_decided(run_id, i)
            sent[key.decode()] = time.time()
            await producer.send(topics.route_decided, value, key=key)
        await producer.flush()
    finally:
        await producer.stop()


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    rate, seconds, warmup_s = (50.0, 4.0, 1.0) if quick else (50.0, 20.0, 2.0)
    n, warmup = int(rate * seconds), int(rate * warmup_s)
    run_id = uuid.uuid4().hex[:8]
    topics = Topics(prefix=f"bench{run_id}.")
    await kafka.create_topics(bootstrap, topics, partitions=3)
    worker = Worker(bootstrap, topics.prefix, stages=",".join(ALL_STAGES))
    sent: dict[str, float] = {}
    received: dict[str, float] = {}
    stamps: dict[str, dict[str, int]] = defaultdict(dict)
    cores: dict[str, dict[str, float]] = {}
    names = {getattr(topics, h): h for h in HOPS}

    def on_record(record: Any, now: float) -> None:
        qid = record.key.decode()
        stamps[qid][names[record.topic]] = record.timestamp
        if record.topic == topics.reply_rendered:
            received[qid] = now
        elif record.topic == topics.answer_ready:
            cores[qid] = orjson.loads(record.value)["context"]["stage_timings_ms"]

    consumer = await kafka.tail(bootstrap, [getattr(topics, h) for h in HOPS])
    try:
        await worker.start()
        sender = asyncio.create_task(_send_at_rate(bootstrap, topics, run_id, rate, n, sent))
        await kafka.read_until(consumer, lambda _: len(received) >= n, timeout_s=seconds + 60,
                               on_record=on_record)
        await sender
    finally:
        await worker.stop()
        await consumer.stop()
        await kafka.delete_topics(bootstrap, topics.all())
    measured = [question_id(run_id, i) for i in range(warmup, n)]
    e2e = [(received[q] - sent[q]) * 1000 for q in measured]
    hops = {f"{a}->{b}": summary([stamps[q][b] - stamps[q][a] for q in measured], 1)
            for a, b in itertools.pairwise(HOPS)}
    stage_core = {s: summary([cores[q][s] for q in measured if s in cores[q]])
                  for s in ("plan", "evidence", "answer")}
    return {
        "parameters": {"rate_per_s": rate, "seconds": seconds, "questions": n,
                       "warmup_questions_excluded": warmup, "partitions": 3,
                       "stages": list(ALL_STAGES), "adapter": "instant fake"},
        "results": {"end_to_end_ms": summary(e2e, 2), "hop_ms_from_record_timestamps": hops,
                    "stage_core_ms": stage_core},
    }
