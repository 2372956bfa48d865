"""Small helpers to talk to the real broker from tests with plain aiokafka clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord
from aiokafka.admin import AIOKafkaAdminClient, NewTopic


async def create_topic(bootstrap: str, topic: str, *, partitions: int = 3,
                       configs: dict[str, str] | None = None) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str, messages: Sequence[tuple[bytes | None, bytes]],
                  headers: Sequence[tuple[str, bytes]] = ()) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for key, value in messages:
            await producer.send(topic, value, key=key, headers=list(headers))
        await producer.flush()
    finally:
        await producer.stop()


async def collect(bootstrap: str, topics: Sequence[str], *,
                  until: Callable[[list[ConsumerRecord]], bool], timeout_s: float = 60.0,
                  settle_s: float = 0.0,
                  isolation_level: str = "read_uncommitted") -> list[ConsumerRecord]:
    """Read the topics from the beginning until `until(records)` holds (then `settle_s` more,
    to catch duplicates), or the timeout passes."""
    consumer = AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False, isolation_level=isolation_level)
    await consumer.start()
    records: list[ConsumerRecord] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    settle_until: float | None = None
    try:
        while loop.time() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for recs in batch.values():
                records.extend(recs)
            if settle_until is None and until(records):
                settle_until = loop.time() + settle_s
            if settle_until is not None and loop.time() >= settle_until:
                break
    finally:
        await consumer.stop()
    return records
