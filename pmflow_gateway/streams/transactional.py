"""Exactly-once outputs: each commit cycle is one Kafka transaction per input partition.

In this mode a record's outputs (its next event, a dead letter, a give-up answer) are not
sent when the stage produces them: they are held, encoded, beside the record's offset. The
commit cycle takes, per partition, the records of the newly finished contiguous prefix and,
in one transaction, produces their outputs in offset order and adds the input offset with
`send_offsets_to_transaction`. A `read_committed` consumer then sees every output once, or
(when the transaction aborts) not at all and the records run again.

Fencing: aiokafka's `send_offsets_to_transaction` takes the group id as a string, not the
consumer's group metadata, so the broker cannot fence a zombie by group generation. Each
stage therefore uses one `transactional_id` per input partition. Whoever is assigned a
partition starts (or keeps) that id's producer, which bumps its epoch: a worker that lost the
partition (paused, partitioned) can no longer commit for it, and the transaction it had open
is aborted. The new owner reads the committed offset only after that, so it resumes exactly
where the last committed transaction ended.

Records finished beyond the prefix keep their outputs here; `room` holds back new records
while `max_held` of them wait, so memory stays bounded when the head of a partition is slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from pmflow_gateway.streams.health import TRANSACTIONS
from pmflow_gateway.streams.parallel import OrderedExecutor, Process

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]


_outbox: contextvars.ContextVar[list[Output] | None] = contextvars.ContextVar(
    "pmflow_outbox", default=None)


def held_outputs() -> list[Output] | None:
    """The outbox of the record being processed in exactly-once mode, else None (send now)."""
    return _outbox.get()


class TransactionalCommits:
    """Holds the outputs of one stage's records and commits them with their input offsets."""

    def __init__(self, *, bootstrap: str, group_id: str, stage: str, max_held: int,
                 timeout_s: float = 30.0) -> None:
        self._bootstrap = bootstrap
        self._group_id = group_id
        self._max_held = max_held
        self._timeout_s = timeout_s
        self._held: dict[TopicPartition, dict[int, list[Output]]] = {}
        self._held_count = 0
        self._room = asyncio.Event()
        self._room.set()
        self._producers: dict[TopicPartition, AIOKafkaProducer] = {}
        self._rewinds: dict[TopicPartition, int] = {}
        self._next: dict[TopicPartition, int] = {}  # the lowest offset a batch still takes
        self._unsure: dict[TopicPartition, int] = {}  # offset a lost transaction tried
        self._lock = asyncio.Lock()
        self._counted = {o: TRANSACTIONS.labels(stage, o) for o in ("committed", "aborted",
                                                                      "rebuilt")}

    # -- holding outputs --------------------------------------------------------------

    def collecting(self, process: Process) -> Process:
        """`process`, with the sends it makes held for the record's transaction."""

        async def run(record: ConsumerRecord) -> None:
            tp = TopicPartition(record.topic, record.partition)
            generation = self._rewinds.get(tp, 0)
            outbox: list[Output] = []
            token = _outbox.set(outbox)
            try:
                await process(record)
            finally:
                _outbox.reset(token)
            if self._rewinds.get(tp, 0) != generation:
                return  # the partition was rewound or lost meanwhile: this run does not count
            self._held.setdefault(tp, {})[record.offset] = outbox
            self._held_count += 1
            if self._held_count >= self._max_held:
                self._room.clear()

        return run

    async def room(self) -> None:
        """Wait while `max_held` finished records wait for the prefix to reach them."""
        await self._room.wait()

    def admission(self) -> Callable[[ConsumerRecord], bool]:
        """For one fetched batch: whether each record may still start. After a partition is
        rewound, records fetched before (the rest of this batch, anything below the resume
        offset) are not taken: they come again from the new position."""
        rewinds = dict(self._rewinds)

        def wanted(record: ConsumerRecord) -> bool:
            tp = TopicPartition(record.topic, record.partition)
            if self._rewinds.get(tp, 0) != rewinds.get(tp, 0):
                return False
            if record.offset < self._next.get(tp, 0):
                return False
            self._next[tp] = record.offset + 1
            return True

        return wanted

    def _take(self, tp: TopicPartition, point: int) -> dict[int, list[Output]]:
        held = self._held.get(tp, {})
        taken = {o: held.pop(o) for o in sorted(o for o in held if o < point)}
        self._release(len(taken))
        return taken

    def _put_back(self, tp: TopicPartition, taken: dict[int, list[Output]]) -> None:
        self._held.setdefault(tp, {}).update(taken)
        self._held_count += len(taken)
        if self._held_count >= self._max_held:
            self._room.clear()

    def _release(self, n: int) -> None:
        self._held_count -= n
        if self._held_count < self._max_held:
            self._room.set()

    # -- the commit cycle -------------------------------------------------------------

    async def commit(self, consumer: AIOKafkaConsumer, executor: OrderedExecutor) -> None:
        """Commit each partition's newly finished prefix in its own transaction. The points
        are read under the lock: a rewind in between would make them stale."""
        async with self._lock:
            points = executor.commit_points()
            last = executor.committed_offsets()
            results = await asyncio.gather(*(
                self._commit_partition(tp, point, last.get(tp), consumer, executor)
                for tp, point in points.items()))
            executor.committed({tp: point for tp, point in zip(points, results, strict=True)
                                if point is not None})

    async def _commit_partition(self, tp: TopicPartition, point: int, last: int | None,
                                consumer: AIOKafkaConsumer,
                                executor: OrderedExecutor) -> int | None:
        """The offset now committed for `tp`, or None. A transaction that failed keeps its
        outputs for the next cycle; after a producer was rebuilt, the committed offset says
        whether that transaction went through, stayed out, or another owner moved on."""
        try:
            producer = await self._producer(tp)
            if tp in self._unsure:
                attempted = self._unsure[tp]
                committed = await consumer.committed(tp)
                del self._unsure[tp]
                if committed == attempted:
                    self._take(tp, attempted)
                    return attempted
                if committed != last:
                    log.warning("%s %s-%d was committed by another owner; rewinding",
                                self._group_id, tp.topic, tp.partition)
                    await self.rewind([tp], consumer, executor)
                    return None
        except Exception as exc:  # broker away: the next cycle tries again
            log.warning("no transaction for %s %s-%d yet: %r", self._group_id, tp.topic,
                        tp.partition, exc)
            return None
        taken = self._take(tp, point)
        try:
            await asyncio.wait_for(self._transact(producer, tp, point, taken), self._timeout_s)
        except Exception as exc:  # every failure is retried the same way
            log.warning("transaction of %s %s-%d failed (%r); retrying its records",
                        self._group_id, tp.topic, tp.partition, exc)
            self._counted["aborted"].inc()
            self._put_back(tp, taken)
            await self._recover(tp, point)
            return None
        self._counted["committed"].inc()
        return point

    async def _transact(self, producer: AIOKafkaProducer, tp: TopicPartition, point: int,
                        taken: dict[int, list[Output]]) -> None:
        await producer.begin_transaction()
        for outputs in taken.values():
            for out in outputs:
                await producer.send(out.topic, out.value, key=out.key, headers=out.headers)
        await producer.send_offsets_to_transaction({tp: point}, self._group_id)
        await producer.commit_transaction()

    async def _recover(self, tp: TopicPartition, attempted: int) -> None:
        """Abort what can be aborted; a fenced producer, or one whose transaction is in an
        unknown state, is dropped and rebuilt by the next cycle (starting it again ends
        whatever it left open)."""
        producer = self._producers.get(tp)
        if producer is None:
            return
        try:
            await asyncio.wait_for(producer.abort_transaction(), self._timeout_s)
        except Exception as exc:  # fenced, fatal or not answering: rebuild
            log.warning("producer of %s %s-%d rebuilt: %r", self._group_id, tp.topic,
                        tp.partition, exc)
            self._counted["rebuilt"].inc()
            self._unsure[tp] = attempted
            await self._drop_producer(tp)

    async def _producer(self, tp: TopicPartition) -> AIOKafkaProducer:
        producer = self._producers.get(tp)
        if producer is None:
            producer = AIOKafkaProducer(
                bootstrap_servers=self._bootstrap,
                transactional_id=f"{self._group_id}.{tp.topic}.{tp.partition}",
                enable_idempotence=True,
                acks="all",
                max_request_size=2 * 1024 * 1024,
                max_batch_size=512 * 1024,
            )
            try:
                await asyncio.wait_for(producer.start(), self._timeout_s)
            except BaseException:
                with contextlib.suppress(Exception):
                    await producer.stop()
                raise
            self._producers[tp] = producer
        return producer

    async def _drop_producer(self, tp: TopicPartition) -> None:
        producer = self._producers.pop(tp, None)
        if producer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(producer.stop(), self._timeout_s)

    # -- ownership --------------------------------------------------------------------

    async def rewind(self, partitions: Iterable[TopicPartition], consumer: AIOKafkaConsumer,
                     executor: OrderedExecutor) -> None:
        """Forget the partitions' in-flight and held records and fetch again from the offset
        the last committed transaction left. The offsets are read first; forgetting, seeking
        and the new resume offset then happen without a pause in between, so no batch
        fetched from the old position can slip in."""
        partitions = list(partitions)
        resume: dict[TopicPartition, int] = {}
        for tp in partitions:
            if tp not in consumer.assignment():
                continue
            try:
                resume[tp] = await consumer.committed(tp) or 0
            except Exception as exc:  # lost meanwhile: the next owner rewinds
                log.warning("rewind of %s %s-%d failed: %r", self._group_id, tp.topic,
                            tp.partition, exc)
        executor.revoke(partitions)
        self.revoked(partitions)
        for tp, offset in resume.items():
            if tp in consumer.assignment():
                consumer.seek(tp, offset)  # below the log start: the reset policy applies
                self._next[tp] = offset

    async def assigned(self, partitions: set[TopicPartition], consumer: AIOKafkaConsumer,
                       executor: OrderedExecutor) -> None:
        """Fence earlier owners of the partitions, then resume after their last commit."""
        async with self._lock:
            for tp in set(self._producers) - partitions:
                await self._drop_producer(tp)
            ordered = list(partitions)
            fenced = await asyncio.gather(*(self._fence(tp) for tp in ordered))
            await self.rewind(ordered, consumer, executor)
            log.info("%s: fenced earlier owners of %d partitions (%d not yet); resuming at %s",
                     self._group_id, len(ordered), fenced.count(False),
                     {f"{tp.topic}-{tp.partition}": self._next.get(tp) for tp in ordered})
            for tp, ok in zip(ordered, fenced, strict=True):
                if not ok:  # the offset read above may predate the fence: read it again
                    self._unsure[tp] = -1

    async def _fence(self, tp: TopicPartition) -> bool:
        try:
            await self._producer(tp)
        except Exception as exc:  # the first commit cycle tries again
            log.warning("no producer yet for %s %s-%d: %r", self._group_id, tp.topic,
                        tp.partition, exc)
            return False
        return True

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        """Drop what the partitions held; their records are the next owner's to run."""
        for tp in partitions:
            self._rewinds[tp] = self._rewinds.get(tp, 0) + 1
            self._release(len(self._held.pop(tp, {})))
            self._next.pop(tp, None)
            self._unsure.pop(tp, None)

    async def close(self) -> None:
        for tp in list(self._producers):
            await self._drop_producer(tp)
