"""Exactly-once outputs, the `ExactlyOnce` commit strategy: each commit cycle is one Kafka
transaction per input partition.

In this mode a record's outputs (its next event, a dead letter, a give-up answer) are not
sent when the stage produces them: they are held, encoded, beside the record's offset. The
commit cycle takes, per partition, every record finished since the last cycle and, in one
transaction, produces their outputs in offset order and commits the input offset with
`send_offsets_to_transaction`: the first offset not finished, with the finished offsets
after it as the offset's metadata (`done_map`). A record that finished behind a slow one
thus goes out at once instead of waiting for it, and whoever resumes the partition skips
the records that map lists. A `read_committed` consumer sees every output once, or (when
the transaction aborts) not at all and the records run again. Records without outputs (the
memory stage's, most of the time) have nothing to make atomic: the consumer commits their
offsets, with the same map, and no transaction is begun (`_commit_offsets`).

Fencing: one transactional producer per input partition (`partition_producers`); whoever is
assigned a partition starts its producer, fencing earlier owners, before it reads where the
last committed transaction ended.

An output the broker refuses for good (too large for the topic, not authorised, ...) would
fail its transaction on every cycle: the send that failed names its record, whose outputs are
then replaced by what ends it (a dead letter, a give-up answer), and its neighbours go on.

Records finished too far beyond the first unfinished one for the map keep their outputs
here; `room` holds back new records while `max_held` of them wait, so memory stays bounded.

A broker restarting mid-commit can report a transaction ended yet never write its markers.
So when a partition is assigned, after a failed transaction or one of unknown fate, and when a
quiet partition's group does not hold its last commit (`_check`), `_settle` aborts whatever
this transactional id (this owner or an earlier one) left open before anything is sent again,
then goes on from the offset the group holds. Where only the group's marker was skipped (a
commit reported done, no transaction left open on its outputs), it commits the same offsets
again instead: the outputs are visible, and their records must not run twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError
from aiokafka.structs import RecordMetadata

from pmflow_gateway.ports import Publisher
from pmflow_gateway.streams import done_map
from pmflow_gateway.streams.commits import Admission, Handle, Refuse
from pmflow_gateway.streams.consumer_state import (
    CommittedOffsets,
    GroupOffsets,
    OpenTransactions,
    StableOffsets,
)
from pmflow_gateway.streams.delivery import (
    Refused,
    can_succeed_later,
    delivered,
    refusal,
)
from pmflow_gateway.streams.health import TRANSACTIONS
from pmflow_gateway.streams.outbox import Outbox, Output
from pmflow_gateway.streams.parallel import OrderedExecutor, Process
from pmflow_gateway.streams.partition_producers import NewProducer, PartitionProducers

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Finished:
    """A finished record and the outputs its transaction sends."""

    record: ConsumerRecord
    outputs: list[Output]
    replaced: bool = False  # the outputs end the record after the broker refused its own


Commit = tuple[int, str]  # an offset and its metadata, as the group holds them
Written = tuple[str, int]  # an output topic and partition a transaction wrote to
# What a partition is marked unsure with when no commit of this owner is in doubt, but where
# the group left it is (not read, or read before a fence or a last transaction's markers):
# it matches no commit, so the first cycle settles the partition.
UNSETTLED: Commit = (-2, "")
# How long after a commit the broker is still writing its markers, on a local broker: a
# transaction begun sooner on the same producer is refused (CONCURRENT_TRANSACTIONS), and
# aiokafka asks again 20 ms later. A slower broker takes longer: each partition learns its
# own wait, doubling it after a transaction whose sends took a refusal's time, easing it
# back after one that did not (a 5 ms wait cost 390 ms end to end at 50 q/s on a machine
# where 60 ms cost 146).
MARKERS_S = 0.005
MAX_MARKERS_S = 0.1
REFUSAL_S = 0.02
# What `_abort_orphans` writes in its aborted transaction: an empty record, marked for a
# `read_uncommitted` reader (a `read_committed` one never sees an aborted record).
SETTLING = [("event_type", b"settle-aborted")]
# The longest a partition is settled for inside the rebalance (the consumer's session
# timeout is 10 s); past it, its first commit settles it.
SETTLE_IN_REBALANCE_S = 5.0


class ExactlyOnce:
    """Holds the outputs of one stage's records and commits them with their input offsets."""

    def __init__(self, *, bootstrap: str, group_id: str, stage: str, max_held: int,
                 writes_to: Iterable[str] = (), timeout_s: float = 30.0,
                 interval_s: float = 0.1, check_after_s: float = 2.0,
                 new_producer: NewProducer | None = None,
                 offsets: CommittedOffsets | None = None,
                 transactions: OpenTransactions | None = None) -> None:
        self._interval_s = interval_s
        self._check_after_s = check_after_s
        self._group_id = group_id
        self._max_held = max_held
        self._writes_to = tuple(writes_to)  # every topic the stage's outputs may go to
        self._timeout_s = timeout_s
        self._held: dict[TopicPartition, dict[int, Finished]] = {}
        self._refuse: Refuse | None = None
        self._held_count = 0
        self._room = asyncio.Event()
        self._room.set()
        self._producers = PartitionProducers(bootstrap=bootstrap, group_id=group_id,
                                             timeout_s=timeout_s, new_producer=new_producer)
        self._offsets = offsets or GroupOffsets(bootstrap=bootstrap, group_id=group_id,
                                                timeout_s=timeout_s)
        self._open = transactions or StableOffsets(bootstrap=bootstrap, timeout_s=timeout_s)
        self._rewinds: dict[TopicPartition, int] = {}
        self._next: dict[TopicPartition, int] = {}  # the lowest offset a batch still takes
        self._unsure: dict[TopicPartition, Commit] = {}  # what a lost transaction tried
        self._last: dict[TopicPartition, Commit] = {}  # what this owner knows is committed
        self._before: dict[TopicPartition, Commit | None] = {}  # `_last` before the last one
        self._sent: dict[TopicPartition, set[int]] = {}  # done after the committed offset
        self._careful: set[TopicPartition] = set()  # one record per send until a commit
        # One transaction at a time per partition; partitions commit independently.
        self._locks: dict[TopicPartition, asyncio.Lock] = {}
        # Per partition, a task that commits as soon as a record finished (`_kicks`), with
        # the consumer and the executor the last assignment named.
        self._kicks: dict[TopicPartition, asyncio.Event] = {}
        self._committers: dict[TopicPartition, asyncio.Task[None]] = {}
        self._bound: tuple[AIOKafkaConsumer, OrderedExecutor] | None = None
        self._ended: dict[TopicPartition, float] = {}  # when its last transaction committed
        self._markers_s: dict[TopicPartition, float] = {}  # its wait after a commit (learnt)
        # Since the last check that the group holds what this owner committed (`_check`):
        # the output partitions written, each with the highest offset written there, and
        # when a quiet partition is checked next.
        self._unchecked: dict[TopicPartition, dict[Written, int]] = {}
        self._check_at: dict[TopicPartition, float] = {}
        self._counted = {o: TRANSACTIONS.labels(stage, o) for o in ("committed", "aborted",
                                                                      "rebuilt", "redone")}

    # -- holding outputs --------------------------------------------------------------

    def running(self, handle: Handle, publisher: Publisher, refuse: Refuse) -> Process:
        """`handle`, with the sends it makes held for the record's transaction (the given
        publisher is not used: outputs leave in the transaction). `refuse` ends a record
        whose outputs the broker refused, by holding what replaces them."""
        self._refuse = refuse

        async def run(record: ConsumerRecord) -> None:
            tp = TopicPartition(record.topic, record.partition)
            if record.offset in self._sent.get(tp, ()):
                self._kick(tp)  # its outputs were committed before the partition was resumed
                return
            generation = self._rewinds.get(tp, 0)
            outbox = Outbox()
            await handle(record, outbox)
            if self._rewinds.get(tp, 0) != generation:
                return  # the partition was rewound or lost meanwhile: this run does not count
            self._held.setdefault(tp, {})[record.offset] = Finished(record, outbox.outputs)
            self._held_count += 1
            if self._held_count >= self._max_held:
                self._room.clear()
            # The executor marks the record finished as soon as this returns, before the
            # committer can run: its transaction sees the new position.
            self._kick(tp)

        return run

    async def room(self) -> None:
        """Wait while `max_held` finished records wait for the prefix to reach them."""
        await self._room.wait()

    def admission(self) -> Admission:
        """For one fetched batch, asked right after the poll that fetched it (nothing can
        rewind a partition in between): whether each record may still start. A record is
        refused when its partition was rewound or lost since that poll (the rest of a batch
        fetched from the old position: its records come again from the new one, and none is
        skipped), or when it lies before the offset the partition resumes from."""
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

    def _take(self, tp: TopicPartition, below: int,
              also: set[int] | frozenset[int] = frozenset()) -> dict[int, Finished]:
        held = self._held.get(tp, {})
        taken = {o: held.pop(o) for o in sorted(o for o in held if o < below or o in also)}
        self._release(len(taken))
        return taken

    def _put_back(self, tp: TopicPartition, taken: dict[int, Finished], generation: int) -> bool:
        """Hold `taken` again for the next cycle; not when the partition was revoked or
        rewound since they were taken (`generation`): they run again from the group's offset,
        wherever, and held here they would count against `max_held` for good."""
        if self._rewinds.get(tp, 0) != generation:
            return False
        self._held.setdefault(tp, {}).update(taken)
        self._held_count += len(taken)
        if self._held_count >= self._max_held:
            self._room.clear()
        return True

    def _release(self, n: int) -> None:
        self._held_count -= n
        if self._held_count < self._max_held:
            self._room.set()

    # -- the commit cycle -------------------------------------------------------------

    async def due(self, executor: OrderedExecutor, stopping: asyncio.Event) -> None:
        """The runner's periodic commit is only a safety net here: each partition commits on
        its own as soon as a record finished (`_committer`)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._interval_s):
                await stopping.wait()

    async def commit(self, consumer: AIOKafkaConsumer, executor: OrderedExecutor) -> None:
        """Commit every partition with news now, each in its own transaction (before a
        revocation, at the end of a drain, and as a periodic safety net)."""
        await asyncio.gather(*(self._commit_now(tp, consumer, executor)
                               for tp in list(executor.positions())))

    def _lock(self, tp: TopicPartition) -> asyncio.Lock:
        return self._locks.setdefault(tp, asyncio.Lock())

    async def _commit_now(self, tp: TopicPartition, consumer: AIOKafkaConsumer,
                          executor: OrderedExecutor) -> bool:
        """One transaction for `tp` if it has news (records finished since its last one, or
        a first unfinished offset that moved); False when it failed. The position is read
        under the partition's lock: a rewind in between would make it stale."""
        async with self._lock(tp):
            await self._after_markers(tp)
            point = executor.position(tp)
            if point is None or (point == executor.committed_offset(tp)
                                 and not self._finished_within(tp, point)
                                 and tp not in self._unsure):
                return True
            result = await self._commit_partition(tp, point, consumer, executor)
            if result is None:
                return False
            executor.committed({tp: result})
            return True

    async def _after_markers(self, tp: TopicPartition) -> None:
        """A transaction begun on a producer right after its last commit is refused while the
        broker still writes that commit's markers (a few ms), and aiokafka then waits 20 ms
        before asking again: wait out the markers instead (records finishing meanwhile join
        this transaction)."""
        wait = self._ended.get(tp, 0.0) + self._markers_s.get(tp, MARKERS_S) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    def _kick(self, tp: TopicPartition) -> None:
        if self._bound is None:
            return  # not assigned through `assigned` (tests): the runner's commits do it
        kick = self._kicks.get(tp)
        if kick is None:
            kick = self._kicks[tp] = asyncio.Event()
            self._committers[tp] = asyncio.create_task(
                self._committer(tp, kick), name=f"commit-{self._group_id}-{tp.partition}")
        kick.set()

    async def _committer(self, tp: TopicPartition, kick: asyncio.Event) -> None:
        """Commit `tp` whenever a record of it finished: records finishing during one
        transaction go together in the next (group commit), and a quiet partition adds one
        transaction's time to latency, never an interval. A failed transaction is tried
        again after a pause. Once the partition has been quiet for `check_after_s` after a
        commit, it checks that the commit took effect (`_check`)."""
        delay = 0.05
        while True:
            try:
                async with asyncio.timeout_at(self._check_at.get(tp)):
                    await kick.wait()
            except TimeoutError:  # quiet since its last commit
                self._check_at.pop(tp, None)
                await self._check(tp)
                continue
            kick.clear()
            if self._bound is None:
                continue
            if await self._commit_now(tp, *self._bound):
                delay = 0.05
                continue
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
            kick.set()

    def _finished_within(self, tp: TopicPartition, point: int) -> bool:
        return any(o <= point + done_map.SPAN for o in self._held.get(tp, ()))

    async def _commit_partition(self, tp: TopicPartition, point: int,
                                consumer: AIOKafkaConsumer,
                                executor: OrderedExecutor) -> int | None:
        """The offset now committed for `tp`, or None. A transaction that failed keeps its
        outputs for the next cycle."""
        try:
            producer = await self._producers.open(tp)
            if tp in self._unsure:
                settled, result = await self._settle(tp, producer, consumer, executor)
                if settled:
                    return result
        except Exception as exc:  # broker away: the next cycle tries again
            log.warning("no transaction for %s %s-%d yet: %r", self._group_id, tp.topic,
                        tp.partition, exc)
            return None
        # Only what the commit can name: the records before `point`, and those the map can
        # list; the one at `point` may have finished during the awaits above, and waits.
        beyond = {o for o in self._held.get(tp, ()) if point < o <= point + done_map.SPAN}
        generation = self._rewinds.get(tp, 0)
        taken = self._take(tp, point, also=beyond)
        done = {o for o in (*self._sent.get(tp, ()), *beyond)
                if point < o <= point + done_map.SPAN}
        attempt = (point, done_map.encode(point, done))
        if not self._unchecked.get(tp) and not any(f.outputs for f in taken.values()):
            return await self._commit_offsets(tp, attempt, taken, done, consumer, generation)
        try:
            wrote = await asyncio.wait_for(self._transact(producer, tp, attempt, taken,
                                                          careful=tp in self._careful),
                                           self._timeout_s)
        except Exception as exc:  # every failure is retried; refused records end first
            await self._failed(tp, attempt, taken, generation, exc)
            return None
        except BaseException:  # cancelled half way: the transaction's fate is unknown
            self._put_back(tp, taken, generation)
            self._unsure[tp] = attempt  # the next cycle reads the committed offset first
            self._producers.forget(tp)
            raise
        self._ended[tp] = time.monotonic()
        unchecked = self._unchecked.setdefault(tp, {})
        for m in wrote:
            key = (m.topic, m.partition)
            unchecked[key] = max(m.offset, unchecked.get(key, -1))
        self._check_at[tp] = asyncio.get_running_loop().time() + self._check_after_s
        self._careful.discard(tp)
        self._committed_as(tp, attempt, done)
        self._counted["committed"].inc()
        return point

    async def _commit_offsets(self, tp: TopicPartition, attempt: Commit,
                              taken: dict[int, Finished], done: set[int],
                              consumer: AIOKafkaConsumer, generation: int) -> int | None:
        """Records with no outputs (a stage that writes only to its database, most of the
        time) leave nothing to make atomic with their offsets: the consumer commits them,
        without a transaction's five requests. The group refuses the commit of an owner it
        has since replaced, as it fences that owner's transactions. Only once every earlier
        transaction of the partition is known to have ended, markers written (`_check`): a
        later commit would otherwise hide one left open."""
        try:
            await asyncio.wait_for(consumer.commit({tp: attempt}), self._timeout_s)
        except BaseException as exc:  # its fate is unknown: settled before the next commit
            self._put_back(tp, taken, generation)
            self._unsure[tp] = attempt
            if not isinstance(exc, Exception):
                raise
            log.warning("offset commit of %s %s-%d failed (%r); retrying", self._group_id,
                        tp.topic, tp.partition, exc)
            return None
        self._committed_as(tp, attempt, done)
        return attempt[0]

    async def _check(self, tp: TopicPartition) -> None:
        """Once a partition is quiet, whether the group holds the offset its last transaction
        committed. A broker that restarts while a transaction is being committed or aborted
        may complete it without writing its markers (its transaction coordinator comes back
        before it knows the partitions' leaders, and skips them): the client was told it
        ended, yet its outputs hang open, invisible to every `read_committed` reader, and the
        group keeps the offset before them. Nothing ends them until this producer writes
        there again, which a quiet partition never does, and a later commit would commit
        them. When the group does not hold the last commit, the partition is settled like a
        transaction of unknown fate (`_settle`) before its next one."""
        async with self._lock(tp):
            last = self._last.get(tp)
            if last is None or tp in self._unsure or self._producers.get(tp) is None:
                return
            try:
                if await self._offsets.committed(tp) == last:
                    self._unchecked.pop(tp, None)
                    return
            except Exception as exc:
                log.warning("check of %s %s-%d failed: %r", self._group_id, tp.topic,
                            tp.partition, exc)
            # Seen after most broker restarts, where markers come late: `_settle` tells.
            log.info("%s %s-%d: the group does not hold the offset its last transaction "
                     "committed (%s) yet; settling the partition", self._group_id, tp.topic,
                     tp.partition, last)
            self._unsure[tp] = last
        self._kick(tp)

    async def _settle(self, tp: TopicPartition, producer: AIOKafkaProducer,
                      consumer: AIOKafkaConsumer,
                      executor: OrderedExecutor) -> tuple[bool, int | None]:
        """After a transaction of unknown fate (or one that failed, or a commit the group
        did not show), what the group holds says whether it went through, stayed out, or
        another owner moved on. Unless it holds the attempt, this producer first ends what a
        transaction whose markers were skipped left open (`_abort_orphans`), so nothing sent
        again is committed twice. Returns whether this cycle ends here, and the offset now
        committed."""
        attempt = self._unsure[tp]
        found = await self._offsets.committed(tp)
        recommitted = False
        if found != attempt:
            # Only the group's marker of the last commit can be missing where the group still
            # holds the commit before it: not where another owner moved it (a worker paused
            # past its session may check a partition it has lost, and committing its last
            # offsets again would move the group back under the new owner).
            only_marker = attempt == self._last.get(tp) and found == self._before.get(tp)
            try:
                if only_marker and await self._outputs_ended(tp):
                    found = await asyncio.wait_for(self._commit_offsets_again(
                        producer, tp, attempt), self._timeout_s)
                    recommitted = True
                else:
                    found = await asyncio.wait_for(self._abort_orphans(producer, tp, found),
                                                   self._timeout_s)
            except BaseException:  # starting its id again aborts what it left open
                await self._producers.drop(tp)
                raise
        del self._unsure[tp]
        if recommitted:  # the group's marker may be skipped again: checked as any commit
            self._check_at[tp] = asyncio.get_running_loop().time() + self._check_after_s
        else:
            self._unchecked.pop(tp, None)
        if found == attempt:
            done = done_map.decode(*attempt)
            self._take(tp, attempt[0], also=done)
            self._committed_as(tp, attempt, done)
            return True, attempt[0]
        if found != self._last.get(tp):
            log.warning("%s %s-%d holds %s, not the commit this owner made last (%s): running "
                        "its records again from there", self._group_id, tp.topic, tp.partition,
                        found, self._last.get(tp))
            self._counted["redone"].inc()
            await self.rewind([tp], consumer, executor, known={tp: found})
            return True, None
        return False, None

    async def _outputs_ended(self, tp: TopicPartition) -> bool:
        """Whether the broker wrote the markers of the commits of `tp` since the last check
        on every partition they wrote to: there the last stable offset is past the highest
        offset they wrote (a transaction of ours still open there would hold it at or below
        its first record, whatever other producers do). Then only the group's marker can be
        missing. Not known: False."""
        written = self._unchecked.get(tp, {})
        try:
            stable = await self._open.stable({TopicPartition(t, p) for t, p in written})
        except Exception as exc:
            log.warning("stable offsets of %s unknown (%r)", self._group_id, exc)
            return False
        return all(stable[TopicPartition(t, p)] > offset for (t, p), offset in written.items())

    async def _commit_offsets_again(self, producer: AIOKafkaProducer, tp: TopicPartition,
                                    attempt: Commit) -> Commit:
        """The outputs of a commit the broker reported are committed, its markers written,
        but the group was never told (its marker skipped): commit the same offsets again,
        so its records do not run a second time. The coordinator lets this transaction
        begin only after the last one ended."""
        log.info("%s %s-%d: the outputs of the commit to %s are committed, the group's offsets "
                 "not: committing them again", self._group_id, tp.topic, tp.partition, attempt)
        await producer.begin_transaction()
        await producer.send_offsets_to_transaction({tp: attempt}, self._group_id)
        await producer.commit_transaction()
        self._ended[tp] = time.monotonic()
        return attempt

    async def _may_have_written(self, producer: AIOKafkaProducer,
                                tp: TopicPartition) -> set[Written]:
        """The partitions a transaction of `tp` may have left open, this owner's or an
        earlier one's: those its commits wrote since the last check, and every partition of
        each topic the stage writes to and its held records go to."""
        written = set(self._unchecked.get(tp, ()))
        topics = {*self._writes_to, *(out.topic for finished in self._held.get(tp, {}).values()
                                      for out in finished.outputs)}
        for topic in sorted(topics):
            try:
                partitions = await producer.partitions_for(topic)
            except KafkaError:  # no metadata (not authorised, ...): nothing was written there
                continue
            written.update((topic, p) for p in partitions)
        # Only where some transaction is open can one of these be: the others need no
        # record of ours (a `read_uncommitted` reader sees each, empty). Not known: all.
        try:
            found = await self._open.among({TopicPartition(t, p) for t, p in written})
        except Exception as exc:
            log.warning("open transactions of %s unknown (%r): settling every partition "
                        "written to", self._group_id, exc)
            return written
        return {(t.topic, t.partition) for t in found}

    async def _abort_orphans(self, producer: AIOKafkaProducer, tp: TopicPartition,
                             offsets: Commit) -> Commit:
        """One aborted transaction over the partitions `tp`'s transactions may have left open
        (an empty record each) and the group's offsets: its abort markers end whatever this
        transactional id left open there, outputs and offsets alike. Returns what the group
        holds once it began: the coordinator lets it begin only after the last transaction
        ended, markers written or skipped."""
        written = await self._may_have_written(producer, tp)
        if written:  # (at every assignment, the group's offsets alone: not worth a line)
            log.info("%s %s-%d: settling; aborting a transaction over %s", self._group_id,
                     tp.topic, tp.partition, sorted(f"{t}-{p}" for t, p in written))
        await producer.begin_transaction()
        await delivered([(-1, await producer.send(topic, b"", partition=partition,
                                                  headers=SETTLING))
                         for topic, partition in sorted(written)])
        await producer.send_offsets_to_transaction({tp: offsets}, self._group_id)
        found = await self._offsets.committed(tp)
        await producer.abort_transaction()
        self._ended[tp] = time.monotonic()
        return found

    def _committed_as(self, tp: TopicPartition, commit: Commit, done: set[int]) -> None:
        self._before[tp] = self._last.get(tp)
        self._last[tp] = commit
        self._sent[tp] = done

    async def _failed(self, tp: TopicPartition, attempt: Commit, taken: dict[int, Finished],
                      generation: int, exc: Exception) -> None:
        """Abort and keep the records for the next cycle, which settles the partition first;
        end those the broker refused. A partition revoked meanwhile (its new owner's fence
        failed the transaction) keeps nothing: its records run again at the new owner."""
        self._counted["aborted"].inc()
        if not self._put_back(tp, taken, generation):
            log.info("transaction of %s %s-%d failed after the partition was revoked (%r): "
                     "its records run again at its new owner", self._group_id, tp.topic,
                     tp.partition, exc)
            await self._recover(tp, attempt, rebuild=True)
            return
        final = isinstance(exc, Refused) or (isinstance(exc, KafkaError) and not exc.retriable)
        if final:
            log.error("transaction of %s %s-%d failed for good: %s", self._group_id, tp.topic,
                      tp.partition, exc.reasons if isinstance(exc, Refused) else refusal(exc))
        else:
            log.warning("transaction of %s %s-%d failed (%r); retrying its records",
                        self._group_id, tp.topic, tp.partition, exc)
        await self._recover(tp, attempt, rebuild=final)
        # Its abort markers may have been skipped too: settled before anything is sent again.
        self._unsure.setdefault(tp, attempt)
        if isinstance(exc, Refused) and (len(exc.reasons) == 1 or tp in self._careful):
            await self._end_refused(tp, exc.reasons)
        elif isinstance(exc, Refused):  # a refused batch fails every record in it
            self._careful.add(tp)

    async def _transact(self, producer: AIOKafkaProducer, tp: TopicPartition, attempt: Commit,
                        taken: dict[int, Finished], *,
                        careful: bool) -> list[RecordMetadata]:
        """Send the outputs and add the offsets, then commit; returns where each went.
        aiokafka commits a transaction even when one of its sends failed, so every delivery
        is awaited before the commit; the offsets go to the coordinator while the outputs are
        on their way. `careful`: one record's outputs at a time, so a refusal names that
        record alone."""
        await producer.begin_transaction()
        started = time.monotonic()
        sent: list[tuple[int, asyncio.Future[object]]] = []
        results: list[object] = []
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
                results += await delivered(sent)
                sent = []
        offsets = asyncio.ensure_future(
            producer.send_offsets_to_transaction({tp: attempt}, self._group_id))
        offsets.add_done_callback(lambda f: f.cancelled() or f.exception())  # seen either way
        try:
            results += await delivered(sent)
        except BaseException:
            offsets.cancel()  # the abort that follows ends it (aiokafka shields the request)
            raise
        await offsets
        self._learn_markers(tp, time.monotonic() - started)
        await producer.commit_transaction()
        return [m for m in results if isinstance(m, RecordMetadata)]

    def _learn_markers(self, tp: TopicPartition, adding_s: float) -> None:
        """How long the partition waits after a commit before its next transaction: twice as
        long after sends that took a refusal's time (`REFUSAL_S`), a little less after quick
        ones, between `MARKERS_S` and `MAX_MARKERS_S`."""
        wait = self._markers_s.get(tp, MARKERS_S)
        wait = min(wait * 2, MAX_MARKERS_S) if adding_s >= REFUSAL_S else max(
            wait * 0.9, MARKERS_S)
        self._markers_s[tp] = wait

    async def _end_refused(self, tp: TopicPartition, reasons: dict[int, str]) -> None:
        """Replace each refused record's outputs with what ends it, for the next cycle. When
        even those are refused, the record ends without outputs, reported: its neighbours
        must not wait for something no retry fixes."""
        held = self._held.get(tp, {})
        for offset, reason in reasons.items():
            finished = held.get(offset)
            if finished is None:  # revoked meanwhile: the next owner runs it again
                continue
            outbox = Outbox()
            if not finished.replaced and self._refuse is not None:
                try:
                    await self._refuse(finished.record, reason, outbox)
                except Exception as exc:  # whatever it held is kept; the rest is reported
                    log.error("ending %s-%d offset %d failed: %r", tp.topic, tp.partition,
                              offset, exc)
            else:
                log.error("%s %s-%d offset %d ends without outputs: they were refused (%s)",
                          self._group_id, tp.topic, tp.partition, offset, reason)
            held[offset] = Finished(finished.record, outbox.outputs, replaced=True)

    async def _recover(self, tp: TopicPartition, attempted: Commit, *, rebuild: bool) -> None:
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
                await self._producers.drop(tp)
        except Exception as exc:  # fenced, fatal or not answering: rebuild
            log.warning("producer of %s %s-%d rebuilt: %r", self._group_id, tp.topic,
                        tp.partition, exc)
            self._counted["rebuilt"].inc()
            self._unsure[tp] = attempted
            await self._producers.drop(tp)

    # -- ownership --------------------------------------------------------------------

    async def rewind(self, partitions: Iterable[TopicPartition], consumer: AIOKafkaConsumer,
                     executor: OrderedExecutor,
                     known: dict[TopicPartition, Commit] | None = None) -> None:
        """Forget the partitions' in-flight and held records and fetch again from the offset
        the last committed transaction left, skipping the records its map says are done.
        The offsets are read first; forgetting, seeking and the new resume offset then
        happen without a pause in between, so no batch fetched from the old position can
        slip in. `known`: offsets already read where they are final (`_settle`)."""
        partitions = list(partitions)
        resume: dict[TopicPartition, Commit] = {}
        unread: list[TopicPartition] = []
        for tp in partitions:
            if tp not in consumer.assignment():
                continue
            try:
                found = (known or {}).get(tp)
                resume[tp] = found if found is not None else await self._offsets.committed(tp)
            except Exception as exc:  # group coordinator away past the timeout
                log.warning("rewind of %s %s-%d failed: %r", self._group_id, tp.topic,
                            tp.partition, exc)
                unread.append(tp)
        executor.revoke(partitions)
        self.revoked(partitions)
        for tp in unread:
            # Nowhere known to resume from: settled (read again, then rewound) before its
            # first commit, so what runs meanwhile from the consumer's own position commits
            # nothing and nothing it skipped is committed past.
            self._unsure[tp] = UNSETTLED
        for tp, found in resume.items():
            if tp in consumer.assignment():
                offset = max(found[0], 0)  # below the log start: the reset policy applies
                consumer.seek(tp, offset)
                self._next[tp] = offset
                self._committed_as(tp, found, done_map.decode(*found))

    async def assigned(self, partitions: set[TopicPartition], consumer: AIOKafkaConsumer,
                       executor: OrderedExecutor) -> None:
        """Fence earlier owners of the partitions, then resume after their last commit."""
        self._bound = (consumer, executor)
        async with contextlib.AsyncExitStack() as locked:
            for tp in sorted(partitions):  # no transaction of theirs runs meanwhile
                await locked.enter_async_context(self._lock(tp))
            await self._producers.keep_only(partitions)
            ordered = list(partitions)
            fenced = await asyncio.gather(*(self._fence(tp) for tp in ordered))
            await self.rewind(ordered, consumer, executor)
            log.info("%s: fenced earlier owners of %d partitions (%d not yet); resuming at %s",
                     self._group_id, len(ordered), fenced.count(False),
                     {f"{tp.topic}-{tp.partition}": self._next.get(tp) for tp in ordered})
            # Each partition is settled (`_settle`) now, while none of this stage's
            # transactions is open, or else before its first commit:
            # - a broker restart may have left a transaction of an earlier owner open where
            #   it skipped the markers; this producer's first commit there would commit it
            #   (a partition ends a producer's open transaction with its next marker,
            #   whatever the epoch), so it is aborted first;
            # - the offset read above may predate the fence (not yet made), or a transaction
            #   of a producer kept through the rebalance (which fences nothing) that
            #   committed a moment ago, markers not yet written: it is read again once a
            #   transaction of this producer could begin.
            for tp in ordered:
                self._unsure[tp] = UNSETTLED
            await asyncio.gather(*(self._settle_now(tp, consumer, executor)
                                   for tp, ok in zip(ordered, fenced, strict=True) if ok))

    async def _settle_now(self, tp: TopicPartition, consumer: AIOKafkaConsumer,
                          executor: OrderedExecutor) -> None:
        producer = self._producers.get(tp)
        if producer is None:
            return
        try:
            # No heartbeat goes out during a rebalance callback: well inside the session.
            await asyncio.wait_for(self._settle(tp, producer, consumer, executor),
                                   SETTLE_IN_REBALANCE_S)
        except Exception as exc:  # still unsure: the first commit settles it
            log.warning("settling %s %s-%d at its assignment failed: %r", self._group_id,
                        tp.topic, tp.partition, exc)

    async def _fence(self, tp: TopicPartition) -> bool:
        try:
            await self._producers.open(tp)
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
            self._last.pop(tp, None)
            self._before.pop(tp, None)
            self._sent.pop(tp, None)
            self._careful.discard(tp)
            self._unchecked.pop(tp, None)
            self._check_at.pop(tp, None)

    async def close(self) -> None:
        """Stop the committers, never inside a transaction, then the producers."""
        for tp, task in list(self._committers.items()):
            async with self._lock(tp):
                task.cancel()
        await asyncio.gather(*self._committers.values(), return_exceptions=True)
        self._committers.clear()
        self._kicks.clear()
        self._bound = None
        await self._producers.close()
        await self._offsets.close()
        await self._open.close()

