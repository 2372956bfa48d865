"""Many messages in flight per partition, at-least-once kept.

A consumer that commits after each message processes one message at a time per partition.
Here the consume loop hands each fetched record to `OrderedExecutor`, which runs it as a task:

- records with the same key (one question) run one after another, in offset order;
  records without a key are each their own lane (nothing to keep in order: a producer that
  sets no key spreads one question's records over partitions anyway);
- records with different keys run concurrently, up to `max_in_flight` at once (the batch
  handler waits for a free slot, so fetching stops while the executor is full);
- the offset committed for a partition is the end of its contiguous prefix of finished
  records, so a crash re-delivers every record that had not finished, never skips one
  (the model of Confluent's Parallel Consumer).

A partition that is revoked abandons its in-flight work without committing past it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from aiokafka import ConsumerRecord, TopicPartition

log = logging.getLogger(__name__)

Process = Callable[[ConsumerRecord], Awaitable[None]]


class PartitionProgress:
    """Offsets of one partition in arrival order, and how far they are finished without a gap."""

    __slots__ = ("_done", "_order", "committed", "finished_upto", "first")

    def __init__(self) -> None:
        self._order: deque[int] = deque()
        self._done: set[int] = set()
        self.finished_upto: int | None = None  # one past the finished prefix
        self.committed: int | None = None  # the last offset the broker accepted
        self.first: int | None = None  # the first offset taken: the ones before were done

    def started(self, offset: int) -> None:
        if self.first is None:
            self.first = offset
        self._order.append(offset)

    def finished(self, offset: int) -> None:
        self._done.add(offset)

    def commit_point(self) -> int | None:
        """The offset to commit now (one past the finished prefix), or None if unchanged."""
        self._advance()
        if self.finished_upto is None or self.finished_upto == self.committed:
            return None
        return self.finished_upto

    def position(self) -> int | None:
        """The first offset not finished: every record before it is. None before the first."""
        self._advance()
        return self._order[0] if self._order else self.finished_upto

    def _advance(self) -> None:
        while self._order and self._order[0] in self._done:
            offset = self._order.popleft()
            self._done.discard(offset)
            self.finished_upto = offset + 1

    @property
    def in_flight(self) -> int:
        return len(self._order)


class OrderedExecutor:
    """Runs records concurrently across keys, in order within a key; tracks commit points."""

    def __init__(self, process: Process, *, max_in_flight: int) -> None:
        self._process = process
        self._slots = asyncio.Semaphore(max_in_flight)
        self._progress: dict[TopicPartition, PartitionProgress] = {}
        self._tails: dict[tuple[TopicPartition, bytes | int], asyncio.Task[None]] = {}
        self._tasks: dict[TopicPartition, set[asyncio.Task[None]]] = {}
        self.finished = asyncio.Event()  # set when a record finishes; the committer clears it
        self.closing = False

    @property
    def in_flight(self) -> int:
        return sum(p.in_flight for p in self._progress.values())

    async def submit(self, record: ConsumerRecord,
                     wanted: Callable[[ConsumerRecord], bool] | None = None) -> bool:
        """Start processing `record` once a slot is free; False when closing, or when `wanted`
        (asked once the slot is free, as the partition may have been rewound meanwhile)
        says no: the record is not taken."""
        await self._slots.acquire()
        if self.closing or (wanted is not None and not wanted(record)):
            self._slots.release()
            return False
        tp = TopicPartition(record.topic, record.partition)
        progress = self._progress.get(tp)
        if progress is None:  # not `setdefault`: that would build one for every record
            progress = self._progress[tp] = PartitionProgress()
            self._tasks[tp] = set()
        progress.started(record.offset)
        chain_key = (tp, record.key if record.key is not None else record.offset)
        before = self._tails.get(chain_key)
        task = asyncio.create_task(self._run(record, tp, progress, before))
        self._tails[chain_key] = task
        self._tasks[tp].add(task)
        task.add_done_callback(lambda t: self._forget(tp, chain_key, t))
        return True

    async def _run(self, record: ConsumerRecord, tp: TopicPartition,
                   progress: PartitionProgress, before: asyncio.Task[None] | None) -> None:
        try:
            if before is not None:
                # Same key: wait for the earlier record, whatever became of it (`wait` raises
                # neither its failure nor its cancellation); a cancel of this record (its
                # partition revoked or rewound) still ends it here, before it runs.
                await asyncio.wait({before})
            await self._process(record)
            progress.finished(record.offset)
            self.finished.set()
        finally:
            self._slots.release()

    def _forget(self, tp: TopicPartition, chain_key: tuple[TopicPartition, bytes | int],
                task: asyncio.Task[None]) -> None:
        if self._tails.get(chain_key) is task:
            del self._tails[chain_key]
        if (tasks := self._tasks.get(tp)) is not None:  # None once its partition was revoked
            tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("record processing failed; offset stays uncommitted",
                      exc_info=task.exception())

    def commit_points(self) -> dict[TopicPartition, int]:
        """Offsets that may be committed now; the caller commits them and calls `committed`."""
        points = {}
        for tp, progress in self._progress.items():
            point = progress.commit_point()
            if point is not None:
                points[tp] = point
        return points

    def positions(self) -> dict[TopicPartition, int]:
        """Per partition, the first offset not finished (see `PartitionProgress.position`)."""
        found = {tp: p.position() for tp, p in self._progress.items()}
        return {tp: position for tp, position in found.items() if position is not None}

    def position(self, tp: TopicPartition) -> int | None:
        """The first offset of `tp` not finished; None before its first record."""
        progress = self._progress.get(tp)
        return progress.position() if progress is not None else None

    def committed_offset(self, tp: TopicPartition) -> int | None:
        progress = self._progress.get(tp)
        return progress.committed if progress is not None else None

    def committed(self, points: dict[TopicPartition, int]) -> None:
        for tp, offset in points.items():
            if tp in self._progress:
                self._progress[tp].committed = offset

    def committed_offsets(self) -> dict[TopicPartition, int]:
        return {tp: p.committed for tp, p in self._progress.items() if p.committed is not None}

    def not_committed_from(self) -> dict[TopicPartition, int]:
        """Per partition taken, the first offset whose commit is still to come."""
        found = {tp: p.committed if p.committed is not None else p.first
                 for tp, p in self._progress.items()}
        return {tp: offset for tp, offset in found.items() if offset is not None}

    def revoke(self, partitions: Iterable[TopicPartition]) -> int:
        """Abandon the in-flight work of lost partitions; returns how many tasks were cancelled."""
        cancelled = 0
        for tp in partitions:
            for task in list(self._tasks.pop(tp, ())):
                cancelled += task.cancel()
            self._progress.pop(tp, None)
            for chain_key in [k for k in self._tails if k[0] == tp]:
                del self._tails[chain_key]
        return cancelled

    async def drain(self, timeout_s: float) -> bool:
        """Stop taking records and wait for those in flight; True when all finished in time."""
        self.closing = True
        tasks = [t for ts in self._tasks.values() for t in ts]
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
        return not pending
