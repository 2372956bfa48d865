"""The harness's own Kafka clients: plain aiokafka, outside the process being measured."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from pmflow_gateway.schemas import Topics
from pmflow_gateway.streams.app import ensure_topics
from pmflow_gateway.streams.consumer_state import partitions_of


async def create_topics(bootstrap: str, topics: Topics, *, partitions: int,
                        extra: Sequence[str] = ()) -> None:
    await ensure_topics(bootstrap, topics, partitions=partitions)
    if extra:
        from aiokafka.admin import NewTopic

        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(t, partitions, 1) for t in extra])
        finally:
            await admin.close()


async def delete_topics(bootstrap: str, names: Iterable[str]) -> None:
    """Best effort: the broker is shared, leave it as we found it."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics(list(names))
    except Exception:  # cleanup only: a topic already gone is fine
        pass
    finally:
        await admin.close()


def producer(bootstrap: str, *, linger_ms: int = 0) -> AIOKafkaProducer:
    return AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=linger_ms,
                            max_request_size=2 * 1024 * 1024)


async def produce_all(bootstrap: str, topic: str, messages: Sequence[tuple[bytes, bytes]]) -> float:
    """Write every message (batched, delivery awaited); returns the seconds it took."""
    started = time.perf_counter()
    prod = producer(bootstrap, linger_ms=20)
    await prod.start()
    try:
        for start in range(0, len(messages), 1000):
            futures = [await prod.send(topic, value, key=key)
                       for key, value in messages[start:start + 1000]]
            await asyncio.gather(*futures)
    finally:
        await prod.stop()
    return time.perf_counter() - started


async def produce_at_rate(bootstrap: str, topic: str, messages: Sequence[tuple[bytes, bytes]],
                          rate: float, sent: dict[str, float]) -> None:
    """Write the messages `rate` a second on a fixed schedule (a late one does not push the
    rest back), noting in `sent` the wall-clock time each key went out."""
    prod = producer(bootstrap)
    await prod.start()
    try:
        start = time.monotonic()
        for i, (key, value) in enumerate(messages):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            sent[key.decode()] = time.time()
            await prod.send(topic, value, key=key)
        await prod.flush()
    finally:
        await prod.stop()


async def tail(bootstrap: str, topics: Sequence[str]) -> AIOKafkaConsumer:
    """A group-less consumer on every partition of `topics`, from the beginning.

    A fetch in flight to a broker holds back every partition not in it (the client sends one
    fetch per broker at a time) for up to `fetch_max_wait_ms`, so the harness keeps it short:
    its own receipt delay must not show up as the pipeline's latency."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                auto_offset_reset="earliest", fetch_max_wait_ms=5)
    await consumer.start()
    parts = [TopicPartition(t, p) for t in topics
             for p in sorted(consumer.partitions_for_topic(t) or await _partitions(bootstrap, t))]
    consumer.assign(parts)
    await consumer.seek_to_beginning(*parts)
    return consumer


async def _partitions(bootstrap: str, topic: str) -> set[int]:
    for _ in range(50):
        parts = await partitions_of(bootstrap, topic)  # a new topic may not be there yet
        if parts:
            return parts
        await asyncio.sleep(0.1)
    raise RuntimeError(f"topic {topic} has no partitions")


OnRecord = Callable[[ConsumerRecord, float], None]


async def read_until(consumer: AIOKafkaConsumer, done: Callable[[list[ConsumerRecord]], bool], *,
                     timeout_s: float, on_record: OnRecord | None = None) -> list[ConsumerRecord]:
    """Records until `done(records)` holds or the timeout passes (then it raises)."""
    records: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout_s
    while not done(records):
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(records)} records after {timeout_s}s")
        batch = await consumer.getmany(timeout_ms=200)
        now = time.time()
        for recs in batch.values():
            for record in recs:
                records.append(record)
                if on_record is not None:
                    on_record(record, now)
    return records


async def offsets(bootstrap: str, groups: dict[str, str]) -> dict[str, dict[str, int]]:
    """Per group: end and committed offsets, each summed over its topic's partitions."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await admin.start()
    await consumer.start()
    try:
        out = {}
        for group, topic in groups.items():
            parts = [TopicPartition(topic, p) for p in await _partitions(bootstrap, topic)]
            ends = await consumer.end_offsets(parts)
            committed = await admin.list_consumer_group_offsets(group)
            out[group] = {"end": sum(ends.values()),
                          "committed": sum(max(committed[tp].offset, 0)
                                           for tp in parts if tp in committed)}
        return out
    finally:
        await consumer.stop()
        await admin.close()


async def wait_committed(bootstrap: str, groups: dict[str, str], *, timeout_s: float
                         ) -> dict[str, dict[str, int]]:
    """Poll until every group has committed its topic's end offsets (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = await offsets(bootstrap, groups)
        if all(s["committed"] == s["end"] for s in state.values()) or time.monotonic() > deadline:
            return state
        await asyncio.sleep(0.3)
