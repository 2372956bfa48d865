"""The transactional producers of one exactly-once stage: one per input partition.

aiokafka's `send_offsets_to_transaction` takes the group id as a string, not the consumer's
group metadata, so the broker cannot fence a zombie by group generation. Each stage therefore
uses one `transactional_id` per input partition. Whoever is assigned a partition starts (or
keeps) that id's producer, which bumps its epoch: a worker that lost the partition (paused,
partitioned) can no longer commit for it, and the transaction it had open is aborted. The new
owner reads the committed offset only after that, so it resumes exactly where the last
committed transaction ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from aiokafka import AIOKafkaProducer, TopicPartition

from pmflow_gateway.streams.delivery import MAX_REQUEST_BYTES

NewProducer = Callable[[str], AIOKafkaProducer]  # a transactional id -> its producer


TRANSACTIONS_FIX = ("give the broker transaction.state.log.replication.factor and "
                    "transaction.state.log.min.isr no larger than its broker count, or set "
                    "PMFLOW_PROCESSING_GUARANTEE=at_least_once")


class NoTransactions(RuntimeError):
    """The broker grants no transactional producer: exactly-once cannot run."""


async def check_transactions(bootstrap: str, topic_prefix: str, *, timeout_s: float) -> None:
    """Start and stop a transactional producer (one id per topic prefix, never writing);
    `NoTransactions`, its fix first, when the broker grants none within `timeout_s`. A broker
    whose transaction log asks for more replicas than the cluster has never grants one: its
    stages would hold every output and commit nothing, with a warning a cycle, instead of
    failing to start."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap,
                                transactional_id=f"{topic_prefix}gateway.start-check",
                                request_timeout_ms=int(timeout_s * 1000))
    try:
        await asyncio.wait_for(producer.start(), timeout_s)
    except Exception as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise NoTransactions(
            f"exactly_once needs transactions: {TRANSACTIONS_FIX} ({bootstrap} granted no "
            f"transactional producer within {timeout_s:g} s: {why[:120]})") from exc
    finally:
        with contextlib.suppress(Exception):
            await producer.stop()


class PartitionProducers:
    def __init__(self, *, bootstrap: str, group_id: str, timeout_s: float,
                 new_producer: NewProducer | None = None) -> None:
        self._bootstrap = bootstrap
        self._group_id = group_id
        self._timeout_s = timeout_s
        self._new_producer = new_producer or self._kafka_producer
        self._producers: dict[TopicPartition, AIOKafkaProducer] = {}

    def _kafka_producer(self, transactional_id: str) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            transactional_id=transactional_id,
            enable_idempotence=True,
            acks="all",
            max_request_size=MAX_REQUEST_BYTES,
            max_batch_size=512 * 1024,
            # A transaction begun right after the last one commits is told to wait while the
            # broker writes the last one's markers (a few ms): ask again soon, not in 100 ms.
            retry_backoff_ms=20,
        )

    def get(self, tp: TopicPartition) -> AIOKafkaProducer | None:
        return self._producers.get(tp)

    async def open(self, tp: TopicPartition) -> AIOKafkaProducer:
        """The partition's producer, started (and earlier owners fenced) if it was not."""
        producer = self._producers.get(tp)
        if producer is None:
            producer = self._new_producer(f"{self._group_id}.{tp.topic}.{tp.partition}")
            try:
                await asyncio.wait_for(producer.start(), self._timeout_s)
            except BaseException:
                with contextlib.suppress(Exception):
                    await producer.stop()
                raise
            self._producers[tp] = producer
        return producer

    def forget(self, tp: TopicPartition) -> None:
        """Rebuild the producer on next use, without a word to it (cancelled mid-commit):
        starting the id again ends whatever it left open."""
        self._producers.pop(tp, None)

    async def drop(self, tp: TopicPartition) -> None:
        producer = self._producers.pop(tp, None)
        if producer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(producer.stop(), self._timeout_s)

    async def keep_only(self, partitions: set[TopicPartition]) -> None:
        for tp in set(self._producers) - partitions:
            await self.drop(tp)

    async def close(self) -> None:
        await self.keep_only(set())
