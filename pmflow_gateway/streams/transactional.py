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

An output the broker refuses for good (too large for the topic, not authorised, ...) would
fail its transaction on every cycle: the send that failed names its record, whose outputs are
then replaced by what ends it (a dead letter, a give-up answer), and its neighbours go on.

Records finished beyond the prefix keep their outputs here; `room` holds back new records
while `max_held` of them wait, so memory stays bounded when the head of a partition is slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError

from pmflow_gateway.streams.delivery import (
    MAX_REQUEST_BYTES,
    Refused,
    can_succeed_later,
    delivered,
    refusal,
)
from pmflow_gateway.streams.health import TRANSACTIONS
from pmflow_gateway.streams.parallel import OrderedExecutor, Process

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]


@dataclass(slots=True)
class Finished:
    """A finished record and the outputs its transaction sends."""

    record: ConsumerRecord
    outputs: list[Output]
    replaced: bool = False  # the outputs end the record after the broker refused its own


Refuse = Callable[[ConsumerRecord, str], Awaitable[None]]


_outbox: contextvars.ContextVar[list[Output] | None] = contextvars.ContextVar(
    "pmflow_outbox", default=None)


def held_outputs() -> list[Output] | None:
    """The outbox of the record being processed in exactly-once mode, else None (send now)."""
    return _outbox.get()


def _fetch_position(consumer: AIOKafkaConsumer, tp: TopicPartition) -> int:
    """The offset the consumer fetches `tp` from next; -1 when it has none (not assigned,
    awaiting a reset). aiokafka offers only the waiting form (`await consumer.position`), and
    the check must not wait: a rewind could slip in. This reads the same state."""
    subscription = consumer._subscription.subscription
    assignment = subscription.assignment if subscription is not None else None
    state = assignment.state_value(tp) if assignment is not None else None
    return state.position if state is not None and state.has_valid_position else -1


class TransactionalCommits:
    """Holds the outputs of one stage's records and commits them with their input offsets."""

    def __init__(self, *, bootstrap: str, group_id: str, stage: str, max_held: int,
                 timeout_s: float = 30.0) -> None:
        self._bootstrap = bootstrap
        self._group_id = group_id
        self._max_held = max_held
        self._timeout_s = timeout_s
        self._held: dict[TopicPartition, dict[int, Finished]] = {}
        self._refuse: Refuse | None = None
        self._held_count = 0
        self._room = asyncio.Event()
        self._room.set()
        self._producers: dict[TopicPartition, AIOKafkaProducer] = {}
        self._rewinds: dict[TopicPartition, int] = {}
        self._next: dict[TopicPartition, int] = {}  # the lowest offset a batch still takes
        self._unsure: dict[TopicPartition, int] = {}  # offset a lost transaction tried
        self._careful: set[TopicPartition] = set()  # one record per send until a commit
        self._lock = asyncio.Lock()
        self._counted = {o: TRANSACTIONS.labels(stage, o) for o in ("committed", "aborted",
                                                                      "rebuilt")}

    # -- holding outputs --------------------------------------------------------------

    def collecting(self, process: Process, refuse: Refuse | None = None) -> Process:
        """`process`, with the sends it makes held for the record's transaction. `refuse`
        ends a record whose outputs the broker refused, by sending what replaces them."""
        self._refuse = refuse

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
            self._held.setdefault(tp, {})[record.offset] = Finished(record, outbox)
            self._held_count += 1
            if self._held_count >= self._max_held:
                self._room.clear()

        return run

    async def room(self) -> None:
        """Wait while `max_held` finished records wait for the prefix to reach them."""
        await self._room.wait()

    def admission(self, consumer: AIOKafkaConsumer | None) -> Callable[[ConsumerRecord], bool]:
        """For one fetched batch: whether each record may still start. A record is taken only
        when it comes from the consumer's current fetch position (the position is past it)
        and not from before the resume offset. After a rewind, a batch fetched from the old
        position is therefore refused whole, even when FastStream hands it over after the
        seek: its records come again from the new position, and none is skipped."""
        rewinds = dict(self._rewinds)

        def wanted(record: ConsumerRecord) -> bool:
            tp = TopicPartition(record.topic, record.partition)
            if self._rewinds.get(tp, 0) != rewinds.get(tp, 0):
                return False
            if record.offset < self._next.get(tp, 0):
                return False
            if consumer is not None and not record.offset < _fetch_position(consumer, tp):
                return False
            self._next[tp] = record.offset + 1
            return True

        return wanted

    def _take(self, tp: TopicPartition, point: int) -> dict[int, Finished]:
        held = self._held.get(tp, {})
        taken = {o: held.pop(o) for o in sorted(o for o in held if o < point)}
        self._release(len(taken))
        return taken

    def _put_back(self, tp: TopicPartition, taken: dict[int, Finished]) -> None:
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
            await asyncio.wait_for(self._transact(producer, tp, point, taken,
                                                  careful=tp in self._careful), self._timeout_s)
        except Exception as exc:  # every failure is retried; refused records end first
            await self._failed(tp, point, taken, exc)
            return None
        except BaseException:  # cancelled half way: the transaction's fate is unknown
            self._put_back(tp, taken)
            self._unsure[tp] = point  # the next cycle reads the committed offset first
            self._producers.pop(tp, None)  # rebuilt: starting the id again ends what is open
            raise
        self._careful.discard(tp)
        self._counted["committed"].inc()
        return point

    async def _failed(self, tp: TopicPartition, point: int, taken: dict[int, Finished],
                      exc: Exception) -> None:
        """Abort and keep the records for the next cycle; end those the broker refused."""
        final = isinstance(exc, Refused) or (isinstance(exc, KafkaError) and not exc.retriable)
        if final:
            log.error("transaction of %s %s-%d failed for good: %s", self._group_id, tp.topic,
                      tp.partition, exc.reasons if isinstance(exc, Refused) else refusal(exc))
        else:
            log.warning("transaction of %s %s-%d failed (%r); retrying its records",
                        self._group_id, tp.topic, tp.partition, exc)
        self._counted["aborted"].inc()
        self._put_back(tp, taken)
        await self._recover(tp, point, rebuild=final)
        if isinstance(exc, Refused) and (len(exc.reasons) == 1 or tp in self._careful):
            await self._end_refused(tp, exc.reasons)
        elif isinstance(exc, Refused):  # a refused batch fails every record in it
            self._careful.add(tp)

    async def _transact(self, producer: AIOKafkaProducer, tp: TopicPartition, point: int,
                        taken: dict[int, Finished], *, careful: bool) -> None:
        """Send the outputs, then commit them with the offsets. aiokafka commits a
        transaction even when one of its sends failed, so every delivery is awaited first.
        `careful`: one record's outputs at a time, so a refusal names that record alone."""
        await producer.begin_transaction()
        sent: list[tuple[int, asyncio.Future[object]]] = []
        for offset, finished in taken.items():
            for out in finished.outputs:
                try:
                    sent.append((offset, await producer.send(
                        out.topic, out.value, key=out.key, headers=out.headers)))
                except KafkaError as exc:  # refused before sending (too large)
                    if can_succeed_later(exc):
                        raise
                    await delivered(sent)
                    raise Refused({offset: refusal(exc)}) from exc
            if careful:
                await delivered(sent)
                sent = []
        await delivered(sent)
        await producer.send_offsets_to_transaction({tp: point}, self._group_id)
        await producer.commit_transaction()

    async def _end_refused(self, tp: TopicPartition, reasons: dict[int, str]) -> None:
        """Replace each refused record's outputs with what ends it, for the next cycle. When
        even those are refused, the record ends without outputs, reported: its neighbours
        must not wait for something no retry fixes."""
        held = self._held.get(tp, {})
        for offset, reason in reasons.items():
            finished = held.get(offset)
            if finished is None:  # revoked meanwhile: the next owner runs it again
                continue
            outbox: list[Output] = []
            if not finished.replaced and self._refuse is not None:
                token = _outbox.set(outbox)
                try:
                    await self._refuse(finished.record, reason)
                except Exception as exc:  # whatever it held is kept; the rest is reported
                    log.error("ending %s-%d offset %d failed: %r", tp.topic, tp.partition,
                              offset, exc)
                finally:
                    _outbox.reset(token)
            else:
                log.error("%s %s-%d offset %d ends without outputs: they were refused (%s)",
                          self._group_id, tp.topic, tp.partition, offset, reason)
            held[offset] = Finished(finished.record, outbox, replaced=True)

    async def _recover(self, tp: TopicPartition, attempted: int, *, rebuild: bool) -> None:
        """Abort what can be aborted; a fenced producer, or one whose transaction is in an
        unknown state, is dropped and rebuilt by the next cycle (starting it again ends
        whatever it left open). So is one after a final error (`rebuild`): a batch the broker
        refused still took its sequence number, and every later send of that producer would
        be refused as out of order."""
        producer = self._producers.get(tp)
        if producer is None:
            return
        try:
            await asyncio.wait_for(producer.abort_transaction(), self._timeout_s)
            if rebuild:
                self._counted["rebuilt"].inc()
                await self._drop_producer(tp)
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
                max_request_size=MAX_REQUEST_BYTES,
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
            self._careful.discard(tp)

    async def close(self) -> None:
        for tp in list(self._producers):
            await self._drop_producer(tp)

