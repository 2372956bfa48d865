"""One stage hop against a raw aiokafka round trip, same broker, same payload, same run.

Sequential (one message in the system at a time), interleaved: raw, ours, raw, ours...
- raw:  producer -> topic -> consumer;
- ours: producer -> answer-ready -> [render stage: a `Processor` with only `render`]
        -> reply-rendered -> consumer.
Latency is taken from before the producer's send to the consumer's receipt.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from bench import kafka
from bench.fixtures import answer_ready, gateway
from bench.report import summary
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.app import Processor


async def _round_trip(producer: Any, consumer: Any, topic: str, key: bytes, value: bytes) -> float:
    started = time.perf_counter()
    await producer.send_and_wait(topic, value, key=key)
    await asyncio.wait_for(consumer.getone(), 10)
    return (time.perf_counter() - started) * 1000


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    n, warmup = (50, 10) if quick else (300, 30)
    return await measure(bootstrap, n=n, warmup=warmup)


async def measure(bootstrap: str, *, n: int, warmup: int) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:8]
    topics = Topics(prefix=f"bench{run_id}.")
    raw_topic = f"{topics.prefix}raw.v1"
    await kafka.create_topics(bootstrap, topics, partitions=1, extra=[raw_topic])
    key, value = await answer_ready(run_id, 0)
    processor = Processor(Settings(kafka_bootstrap=bootstrap, topic_prefix=topics.prefix),
                          stages=["render"], deps=gateway(), grace_s=5)
    producer = kafka.producer(bootstrap)
    await producer.start()
    raw_in = await kafka.tail(bootstrap, [raw_topic])
    ours_out = await kafka.tail(bootstrap, [topics.reply_rendered])
    await processor.start()
    raw_ms: list[float] = []
    ours_ms: list[float] = []
    try:
        for i in range(warmup + n):
            raw = await _round_trip(producer, raw_in, raw_topic, key, value)
            ours = await _round_trip(producer, ours_out, topics.answer_ready, key, value)
            if i >= warmup:
                raw_ms.append(raw)
                ours_ms.append(ours)
    finally:
        await processor.stop()
        await raw_in.stop()
        await ours_out.stop()
        await producer.stop()
        await kafka.delete_topics(bootstrap, [*topics.all(), raw_topic])
    raw_s, ours_s = summary(raw_ms), summary(ours_ms)
    ratio = {q: round(ours_s[q] / raw_s[q], 2) for q in ("p50", "p95")}
    return {
        "parameters": {"messages": n, "warmup": warmup, "payload_bytes": len(value),
                       "payload": "AnswerReady (3 sources)", "partitions": 1,
                       "producer": "aiokafka acks=all linger_ms=0 (harness, both paths)",
                       "stage": "render: Processor(stages=['render']) in the harness process"},
        "results": {"raw_ms": raw_s, "ours_ms": ours_s, "ratio": ratio,
                    "hop_overhead_ms_p50": round(ours_s["p50"] - raw_s["p50"], 3)},
        "target": {"ratio_max": 2.0, "met": ratio["p50"] <= 2.0},
    }
