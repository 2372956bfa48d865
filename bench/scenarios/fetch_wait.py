"""Evidence for where a stage hop waits: one aiokafka consumer on 3 partitions, records written
one at a time to random partitions (as random keys land) at a low rate (little CPU for
anyone), delivery delay = the record's timestamp (producer `send`) -> `getmany` returning it,
for several `fetch_max_wait_ms`.

The client keeps one fetch in flight per broker and only asks for partitions whose earlier
records were handed over; a partition handed over while that fetch waits at the broker is not
fetched again until the fetch returns (new data on another partition, or `fetch_max_wait_ms`).
If that is where the time goes, the delay follows `fetch_max_wait_ms` and the spacing of the
records, not the work."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench import kafka
from bench.report import summary

WAITS = (500, 100, 20, 5)


async def measure(bootstrap: str, *, wait_ms: int, rate: float, n: int) -> dict[str, Any]:
    topic = f"bench{uuid.uuid4().hex[:8]}.fetch-wait"
    await _create(bootstrap, topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                auto_offset_reset="earliest", fetch_max_wait_ms=wait_ms)
    producer = kafka.producer(bootstrap)
    await consumer.start()
    await producer.start()
    delays: list[float] = []
    try:
        parts = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(parts)
        await consumer.seek_to_end(*parts)
        await consumer.getmany(timeout_ms=100)  # the first fetch is in flight from here on

        async def read() -> None:
            while len(delays) < n:
                for records in (await consumer.getmany(timeout_ms=1000)).values():
                    now = time.time() * 1000
                    delays.extend(now - r.timestamp for r in records)

        reader = asyncio.create_task(read())
        pick = random.Random(7)
        for _ in range(n):
            await producer.send_and_wait(topic, b"x" * 1024, partition=pick.randrange(3))
            await asyncio.sleep(1 / rate)
        await asyncio.wait_for(reader, 30)
    finally:
        await producer.stop()
        await consumer.stop()
        await kafka.delete_topics(bootstrap, [topic])
    return summary(delays, 1)


async def _create(bootstrap: str, topic: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 3, 1)])
    finally:
        await admin.close()


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    rate, n = (10.0, 30) if quick else (10.0, 150)
    results = {f"fetch_max_wait_ms={w}": await measure(bootstrap, wait_ms=w, rate=rate, n=n)
               for w in WAITS}
    return {"parameters": {"rate_per_s": rate, "records": n, "partitions": 3,
                           "delivery_delay": "record timestamp -> getmany returns it (ms)"},
            "results": results}
