"""How a stage's finished records become committed: one small interface, two strategies.

- `AtLeastOnce` (here): a record's outputs are sent as it produces them (delivery awaited),
  and the offsets of each partition's finished prefix are committed now and then. A crash
  re-delivers what had not been committed; its outputs may come twice.
- `ExactlyOnce` (`streams/transactional.py`): a record's outputs are held, and each
  partition's finished records are committed in one Kafka transaction with their outputs
  and their input offsets. A `read_committed` reader sees every output once.

The runner never asks which one it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from pmflow_gateway.ports import Publisher
from pmflow_gateway.streams.parallel import OrderedExecutor, Process

log = logging.getLogger(__name__)

# What a record runs, given where its sends go; and what ends a record whose outputs the
# broker refused for good, given the same.
Handle = Callable[[ConsumerRecord, Publisher], Awaitable[None]]
Refuse = Callable[[ConsumerRecord, str, Publisher], Awaitable[None]]
Admission = Callable[[ConsumerRecord], bool]


class CommitStrategy(Protocol):
    def running(self, handle: Handle, publisher: Publisher, refuse: Refuse) -> Process:
        """How each record runs: `handle` with the publisher its sends go to."""
        ...

    def admission(self) -> Admission | None:
        """For a batch, asked right after the poll that fetched it: which records may still
        start (None: all of them)."""
        ...

    async def room(self) -> None:
        """Wait until another record may be taken."""
        ...

    async def due(self, executor: OrderedExecutor, stopping: asyncio.Event) -> None:
        """Wait until a commit is due (or `stopping` is set)."""
        ...

    async def commit(self, consumer: AIOKafkaConsumer, executor: OrderedExecutor) -> None:
        """Commit what finished; a failure is logged and the next commit tries again."""
        ...

    async def assigned(self, partitions: set[TopicPartition], consumer: AIOKafkaConsumer,
                       executor: OrderedExecutor) -> None:
        ...

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        ...

    async def close(self) -> None:
        ...


class AtLeastOnce:
    """Sends at once; commits each partition's finished prefix every `interval_s` (a commit
    only bounds what a crash re-delivers)."""

    def __init__(self, *, interval_s: float = 0.1) -> None:
        self._interval_s = interval_s

    def running(self, handle: Handle, publisher: Publisher, refuse: Refuse) -> Process:
        async def run(record: ConsumerRecord) -> None:
            await handle(record, publisher)

        return run

    def admission(self) -> Admission | None:
        return None

    async def room(self) -> None:
        return None

    async def due(self, executor: OrderedExecutor, stopping: asyncio.Event) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._interval_s):
                await stopping.wait()

    async def commit(self, consumer: AIOKafkaConsumer, executor: OrderedExecutor) -> None:
        points = executor.commit_points()
        if not points:
            return
        try:
            await consumer.commit(points)
            executor.committed(points)
        except Exception as exc:  # a rebalance in progress: the next round commits again
            log.warning("commit of %s failed: %r", sorted(points), exc)

    async def assigned(self, partitions: set[TopicPartition], consumer: AIOKafkaConsumer,
                       executor: OrderedExecutor) -> None:
        return None

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        return None

    async def close(self) -> None:
        return None
