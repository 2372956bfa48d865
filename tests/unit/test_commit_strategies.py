"""The two commit strategies under one runner, without services: a recording publisher, a
consumer that records commits, and a producer that records transactions.

At-least-once sends each output as the record produces it and commits the finished prefix;
exactly-once sends nothing through the publisher and commits each partition's finished
records in one transaction with their outputs and input offsets."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import orjson
import pytest
from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaConnectionError, ProducerFenced

from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.schemas import RouteDecided, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams import done_map
from pmflow_gateway.streams.commits import AtLeastOnce, CommitStrategy
from pmflow_gateway.streams.consumer_state import NO_COMMIT
from pmflow_gateway.streams.retries import Retries
from pmflow_gateway.streams.runner import RunnerConfig, StageRunner
from pmflow_gateway.streams.stages import MEMORY, PLAN
from pmflow_gateway.streams.transactional import (
    MARKERS_S,
    MAX_MARKERS_S,
    REFUSAL_S,
    ExactlyOnce,
)
from tests.fakes import (
    CommittingConsumer,
    OpenTransactionsAt,
    RecordingPublisher,
    RecordingTransactionalProducer,
    Transaction,
    fake_deps,
)

TOPICS = Topics(prefix="t.")
TP = TopicPartition(PLAN.source(TOPICS), 0)
CONFIG = RunnerConfig(retry=Retries(retries=0, backoff_s=0))


class GatedPlanner:
    """Plans each question at once, except those whose gate is still closed."""

    def __init__(self, gated: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.gates = {offset: asyncio.Event() for offset in gated}

    async def plan(self, route: RouteDecided):  # type: ignore[no-untyped-def]
        offset = int(route.question_id.rsplit("-", 1)[1])
        if offset in self.gates:
            await self.gates[offset].wait()
        return await RulesPlanner().plan(route)


def record(offset: int) -> ConsumerRecord:
    value = orjson.dumps({**ROUTE_DECIDED, "question_id": f"q-{offset}"})
    return ConsumerRecord(topic=TP.topic, partition=TP.partition, offset=offset, timestamp=0,
                          timestamp_type=0, key=f"q-{offset}".encode(), value=value,
                          checksum=None, serialized_key_size=0, serialized_value_size=0,
                          headers=())


def runner(commits: CommitStrategy, planner: object) -> tuple[StageRunner, RecordingPublisher,
                                                               CommittingConsumer]:
    publisher = RecordingPublisher()
    deps = fake_deps(planner=planner)  # type: ignore[arg-type]
    stage = StageRunner(PLAN, deps=deps, publisher=publisher, topics=TOPICS, config=CONFIG,
                        commits=commits)
    consumer = CommittingConsumer(assigned={TP})
    stage.consumer = consumer  # type: ignore[assignment]
    return stage, publisher, consumer


class NoCommits:
    """A group that has committed nothing yet."""

    async def committed(self, tp: TopicPartition) -> tuple[int, str]:
        return NO_COMMIT

    async def close(self) -> None:
        return None


def exactly_once(interval_s: float = 0.1) -> tuple[ExactlyOnce, list[Transaction]]:
    committed: list[Transaction] = []

    def new_producer(transactional_id: str) -> Any:
        return RecordingTransactionalProducer(transactional_id, committed)

    strategy = ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=100,
                           new_producer=new_producer, offsets=NoCommits(),
                           transactions=OpenTransactionsAt(), interval_s=interval_s)
    return strategy, committed


def question_ids(outputs: list[tuple[str, bytes | None, bytes]]) -> list[str]:
    return [orjson.loads(value)["question_id"] for _, _, value in outputs]


async def test_at_least_once_sends_at_once_and_commits_the_finished_prefix() -> None:
    planner = GatedPlanner({1})
    stage, publisher, consumer = runner(AtLeastOnce(), planner)
    await stage.on_batch([record(i) for i in range(4)])
    await _until(lambda: len(publisher.sent) == 3)  # 0, 2 and 3 are out before 1 finishes
    await stage.commit()
    assert consumer.commits == [{TP: 1}]
    planner.gates[1].set()
    assert await stage.executor.drain(5)
    await stage.commit()
    assert consumer.commits == [{TP: 1}, {TP: 4}]
    planned = [getattr(p, "question_id", None) for p in publisher.to(TOPICS.plan_created)]
    assert sorted(planned) == ["q-0", "q-1", "q-2", "q-3"]  # type: ignore[type-var]


async def test_exactly_once_commits_outputs_and_offsets_in_one_transaction() -> None:
    strategy, committed = exactly_once()
    stage, publisher, consumer = runner(strategy, GatedPlanner())
    await stage.on_batch([record(i) for i in range(3)])
    assert await stage.executor.drain(5)
    assert committed == []  # nothing leaves before the commit
    await stage.commit()
    [transaction] = committed
    assert question_ids(transaction.outputs) == ["q-0", "q-1", "q-2"]  # in offset order
    assert {topic for topic, _, _ in transaction.outputs} == {TOPICS.plan_created}
    assert transaction.offsets == {TP: (3, "")} and transaction.group_id == "g"
    assert publisher.sent == [] and consumer.commits == []  # no send, no plain commit
    await stage.commit()
    assert len(committed) == 1  # nothing new: no empty transaction


def internal_record(offset: int) -> ConsumerRecord:
    """A route PMFlow answers itself: the plan stage ends it without an output."""
    value = orjson.dumps({**ROUTE_DECIDED, "question_id": f"q-{offset}",
                          "route_mode": "internal"})
    return dataclasses.replace(record(offset), value=value)


async def test_exactly_once_commits_records_without_outputs_without_a_transaction() -> None:
    strategy, committed = exactly_once()
    stage, publisher, consumer = runner(strategy, GatedPlanner())

    async def run(*records: ConsumerRecord) -> None:
        await stage.on_batch(list(records))
        await _until(lambda: stage.executor.positions() == {TP: records[-1].offset + 1})
        await stage.commit()

    await run(*(internal_record(i) for i in range(3)))
    assert committed == [] and consumer.commits == [{TP: (3, "")}]
    # One record with an output among them: all go in one transaction with its offsets.
    await run(internal_record(3), record(4), internal_record(5))
    [transaction] = committed
    assert question_ids(transaction.outputs) == ["q-4"] and transaction.offsets == {TP: (6, "")}
    # Until a check finds that transaction's offsets in the group, output-less records still
    # commit in transactions: a plain commit would hide one whose markers were never written.
    await run(internal_record(6))
    assert [t.offsets for t in committed] == [{TP: (6, "")}, {TP: (7, "")}]
    assert len(consumer.commits) == 1 and publisher.sent == []


async def test_exactly_once_sends_what_finished_behind_a_slow_record_at_once() -> None:
    planner = GatedPlanner({1})
    strategy, committed = exactly_once()
    stage, _, _ = runner(strategy, planner)
    await stage.on_batch([record(i) for i in range(4)])
    await _until(lambda: stage.executor.positions() == {TP: 1}
                 and strategy._finished_within(TP, 1))
    await _until(lambda: len(strategy._held.get(TP, {})) == 3)
    await stage.commit()
    [first] = committed
    assert question_ids(first.outputs) == ["q-0", "q-2", "q-3"]
    # The offset stays at the slow record; the map says 2 and 3 are done.
    assert first.offsets == {TP: (1, done_map.encode(1, {2, 3}))}
    planner.gates[1].set()
    assert await stage.executor.drain(5)
    await stage.commit()
    assert question_ids(committed[1].outputs) == ["q-1"]
    assert committed[1].offsets == {TP: (4, "")}


async def test_a_poison_record_ends_in_its_transaction_as_a_dead_letter() -> None:
    strategy, committed = exactly_once()
    stage, publisher, _ = runner(strategy, GatedPlanner())
    poison = dataclasses.replace(record(0), value=b"{not json")
    await stage.on_batch([poison, record(1)])
    assert await stage.executor.drain(5)
    await stage.commit()
    [transaction] = committed
    assert [topic for topic, _, _ in transaction.outputs] == [TOPICS.dead_letter,
                                                              TOPICS.plan_created]
    assert transaction.offsets == {TP: (2, "")} and publisher.sent == []


async def test_exactly_once_commits_a_partition_as_soon_as_a_record_finished() -> None:
    """No commit call, no interval: once the partition is assigned, a finished record's
    transaction starts by itself (the runner's periodic commit is set an hour apart)."""
    strategy, committed = exactly_once(interval_s=3600)
    stage, _, consumer = runner(strategy, GatedPlanner())
    await strategy.assigned({TP}, consumer, stage.executor)  # type: ignore[arg-type]
    assert consumer.seeks == [(TP, 0)]  # nothing committed yet: from the start
    stage.start_committing()
    await stage.on_batch([record(0)])
    await _until(lambda: len(committed) == 1)
    assert question_ids(committed[0].outputs) == ["q-0"]
    assert committed[0].offsets == {TP: (1, "")}
    await stage.on_batch([record(1), record(2)])
    await _until(lambda: sum(len(t.outputs) for t in committed) == 3)
    assert committed[-1].offsets == {TP: (3, "")}
    await stage.drain(1)


async def _until(condition: object) -> None:
    """Wait for `condition`, letting real time pass (a transaction right after another waits
    a few ms for the broker's markers)."""
    for _ in range(5000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition never held")


class GroupHolds:
    """What a group holds of the commits: each commit once its markers are written. `stale`
    reads still see the commit before the last one (markers late); after `lose_last()`, the
    last one is never seen (the broker skipped its markers) until a new one comes."""

    def __init__(self) -> None:
        self.commits: list[tuple[int, str]] = [NO_COMMIT]
        self.stale = 0
        self.lost = False
        self.reads = 0

    def lose_last(self) -> None:
        self.commits.pop()
        self.lost = True

    def add(self, commit: tuple[int, str]) -> None:
        self.commits.append(commit)
        self.lost = False

    async def committed(self, tp: TopicPartition) -> tuple[int, str]:
        self.reads += 1
        if self.stale:
            self.stale -= 1
            return self.commits[-2]
        return self.commits[-1]

    async def close(self) -> None:
        return None


class HeldProducer(RecordingTransactionalProducer):
    """Records transactions and tells the group what each commit committed; a commit fails
    (the broker went away mid-commit) while `failing` holds an entry, taking one."""

    def __init__(self, transactional_id: str, committed: list[Transaction],
                 aborted: list[Transaction], group: GroupHolds, failing: list[bool]) -> None:
        super().__init__(transactional_id, committed, aborted)
        self.group = group
        self.failing = failing

    async def commit_transaction(self) -> None:
        assert self._open is not None
        if self.failing:
            self.failing.pop()
            raise KafkaConnectionError("connection closed")
        for commit in self._open.offsets.values():
            self.group.add(commit)
        await super().commit_transaction()


@dataclasses.dataclass
class HeldRun:
    strategy: ExactlyOnce
    stage: StageRunner
    consumer: CommittingConsumer
    group: GroupHolds = dataclasses.field(default_factory=GroupHolds)
    committed: list[Transaction] = dataclasses.field(default_factory=list)
    aborted: list[Transaction] = dataclasses.field(default_factory=list)
    failing: list[bool] = dataclasses.field(default_factory=list)


async def held_run(*, check_after_s: float,
                   open_at: set[TopicPartition] | None = None) -> HeldRun:
    """Two records committed through a partition whose group is `GroupHolds`."""
    run: HeldRun

    def new_producer(transactional_id: str) -> Any:
        return HeldProducer(transactional_id, run.committed, run.aborted, run.group,
                            run.failing)

    group = GroupHolds()
    strategy = ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=100,
                           new_producer=new_producer, offsets=group,
                           transactions=OpenTransactionsAt(open_at), interval_s=3600,
                           check_after_s=check_after_s)
    stage, _, consumer = runner(strategy, GatedPlanner())
    run = HeldRun(strategy, stage, consumer, group)
    await strategy.assigned({TP}, consumer, stage.executor)  # type: ignore[arg-type]
    stage.start_committing()
    await stage.on_batch([record(0), record(1)])
    await _until(lambda: len(run.committed) == 1 and run.committed[0].offsets == {TP: (2, "")})
    [settled] = run.aborted  # at the assignment (see the test of a new owner)
    assert settled.outputs == [] and settled.offsets == {TP: NO_COMMIT}  # nothing written yet
    run.aborted.clear()
    return run


async def checked_run(*, stale: int = 0, lost: bool = False,
                      open_at: set[TopicPartition] | None = None
                      ) -> tuple[ExactlyOnce, list[Transaction], list[Transaction],
                                 CommittingConsumer, StageRunner]:
    """Two records through a committing partition, then quiet until the check after the
    commit is done; the group sees that commit late (`stale` reads) or never (`lost`)."""
    run = await held_run(check_after_s=0.05, open_at=open_at)
    group = run.group
    group.stale, reads = stale, group.reads
    if lost:
        group.lose_last()
    await _until(lambda: group.reads > reads)
    return run.strategy, run.committed, run.aborted, run.consumer, run.stage


@pytest.mark.parametrize("reader", ["tells", "cannot tell"])
async def test_a_new_owner_aborts_what_an_earlier_owner_left_open_before_its_first_commit(
        reader: str) -> None:
    """A broker restart may have left an earlier owner's last transaction open where its
    markers were skipped; the partition would end it with the next marker this
    transactional id writes there, a commit. So at the assignment, the new owner aborts one
    transaction with the group's offsets over every partition the stage writes to that has
    a transaction open (an empty record each; where none is open, no record is needed, and
    a `read_uncommitted` reader sees none). When the broker cannot say where one is open:
    over all of them."""
    log: list[Transaction] = []
    hanging = TopicPartition(TOPICS.answer_ready, 0)
    strategy = ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=100,
                           writes_to=PLAN.writes_to(TOPICS), offsets=NoCommits(),
                           transactions=OpenTransactionsAt({hanging},
                                                           failing=reader == "cannot tell"),
                           new_producer=lambda tid: RecordingTransactionalProducer(tid, log, log),
                           interval_s=3600)
    stage, _, consumer = runner(strategy, GatedPlanner())
    await strategy.assigned({TP}, consumer, stage.executor)  # type: ignore[arg-type]
    [settled] = log  # before any record ran
    assert settled.offsets == {TP: NO_COMMIT} and settled.group_id == "g"
    settling = ([hanging.topic] if reader == "tells" else
                sorted([TOPICS.plan_created, TOPICS.answer_ready, TOPICS.dead_letter]))
    assert settled.outputs == [(t, None, b"") for t in settling]
    stage.start_committing()
    await stage.on_batch([record(0)])
    await _until(lambda: len(log) == 2)
    assert question_ids(log[1].outputs) == ["q-0"] and log[1].offsets == {TP: (1, "")}
    await stage.drain(1)


def test_a_stage_writes_to_its_sink_the_answers_and_the_dead_letters() -> None:
    assert PLAN.writes_to(TOPICS) == (TOPICS.plan_created, TOPICS.answer_ready,
                                      TOPICS.dead_letter)
    assert MEMORY.writes_to(TOPICS) == (TOPICS.dead_letter,)  # no output, never gives up


async def test_a_quiet_partition_whose_commit_took_effect_is_left_alone() -> None:
    _strategy, committed, aborted, consumer, stage = await checked_run()
    await asyncio.sleep(0.05)
    assert aborted == [] and consumer.seeks == [(TP, 0)] and len(committed) == 1
    await stage.drain(1)


async def test_a_commit_the_group_never_got_is_aborted_and_its_records_run_again() -> None:
    """The broker said "committed" but wrote no markers (it restarted mid-commit): the group
    keeps the offset before the transaction. One aborted transaction over the partitions it
    wrote and the group's offsets ends the orphaned outputs; the records run again from the
    offset the group holds, and commit once."""
    _strategy, committed, aborted, consumer, stage = await checked_run(lost=True)
    await _until(lambda: len(consumer.seeks) == 2)
    [abort] = aborted
    assert abort.outputs == [(TOPICS.plan_created, None, b"")]  # the one partition written
    assert set(abort.offsets) == {TP} and abort.group_id == "g"  # ends a pending commit
    assert consumer.seeks == [(TP, 0), (TP, 0)]  # rewound to what the group holds
    # The consumer fetches them again from there: they commit in a new transaction.
    await stage.on_batch([record(0), record(1)])
    await _until(lambda: len(committed) == 2)
    assert question_ids(committed[1].outputs) == ["q-0", "q-1"]
    assert committed[1].offsets == {TP: (2, "")}
    await stage.drain(1)


async def test_a_commit_whose_outputs_ended_but_not_its_offsets_commits_them_again() -> None:
    """The broker said "committed" and wrote the markers on the output partitions, but not
    the group's (it restarted in between): the outputs are visible, the group keeps the
    offset before them. Running the records again would send them twice: the same offsets
    are committed again instead, and nothing is aborted or run again."""
    strategy, committed, aborted, consumer, stage = await checked_run(lost=True, open_at=set())
    await _until(lambda: len(committed) == 2)
    assert committed[1].outputs == [] and committed[1].offsets == {TP: (2, "")}
    # Its marker may be skipped again: the group is read once more, after the quiet time.
    group, reads = strategy._offsets, strategy._offsets.reads  # type: ignore[attr-defined]
    await _until(lambda: group.reads > reads)
    assert aborted == [] and consumer.seeks == [(TP, 0)]
    await stage.on_batch([record(2)])
    await _until(lambda: len(committed) == 3)
    assert question_ids(committed[2].outputs) == ["q-2"] and committed[2].offsets == {TP: (3, "")}
    await stage.drain(1)


async def test_a_worker_that_lost_its_partition_never_moves_the_group_back() -> None:
    """A worker paused past its session checks a partition another owner has moved on (the
    group holds 5, not its last commit 2, nor the one before): its outputs were committed,
    but its offsets are not committed again over the new owner's. It aborts what it may
    have left open and goes on from where the group is."""
    run = await held_run(check_after_s=0.05, open_at=set())
    reads = run.group.reads
    run.group.add((5, ""))  # the new owner's commit
    await _until(lambda: run.group.reads > reads and len(run.consumer.seeks) == 2)
    assert len(run.committed) == 1 and len(run.aborted) == 1
    assert run.consumer.seeks[-1] == (TP, 5)
    await run.stage.drain(1)


async def test_markers_that_were_only_slow_run_nothing_again() -> None:
    """The group answers the check with the old offset, but by the time the partition is
    settled it holds the new one: nothing is aborted or run again."""
    strategy, committed, aborted, consumer, stage = await checked_run(stale=1)
    await _until(lambda: TP not in strategy._unsure)
    await asyncio.sleep(0.05)
    assert aborted == [] and consumer.seeks == [(TP, 0)] and len(committed) == 1
    await stage.drain(1)


async def test_a_partition_kept_through_a_rebalance_commits_nothing_twice() -> None:
    """The rebalance comes right after a commit: the worker keeps the partition and its
    producer (which fences nothing), and the group still shows the offset before that commit
    (markers not yet written). The partition is settled at the assignment: read again once a
    transaction of its producer could begin, it resumes after the commit, and nothing before
    it runs or commits twice."""
    run = await held_run(check_after_s=3600)
    run.group.stale = 1  # the read at the assignment sees the offset before the last commit
    listener = run.stage.rebalance_listener()
    await listener.on_partitions_revoked({TP})
    await listener.on_partitions_assigned({TP})
    assert run.consumer.seeks[-2:] == [(TP, 0), (TP, 2)]  # the stale read, then the settled
    await run.stage.on_batch([record(2)])
    await _until(lambda: len(run.committed) == 2)
    assert question_ids(run.committed[1].outputs) == ["q-2"]
    assert run.committed[1].offsets == {TP: (3, "")}
    await run.stage.drain(1)


async def test_a_failed_transaction_after_a_lost_commit_aborts_what_both_left_open() -> None:
    """The broker skipped a commit's markers (the group keeps the offset before it), then the
    next transaction failed. Before anything is sent again, one aborted transaction over the
    partitions both may have written ends their open outputs; the records then run again
    from the group's offset and commit once: nothing sent twice becomes visible twice."""
    run = await held_run(check_after_s=3600)
    committed, aborted, consumer, stage = run.committed, run.aborted, run.consumer, run.stage
    run.group.lose_last()
    run.failing.append(True)
    await stage.on_batch([record(2)])
    await _until(lambda: len(consumer.seeks) == 2)
    failed, repair = aborted
    assert question_ids(failed.outputs) == ["q-2"]
    assert repair.outputs == [(TOPICS.plan_created, None, b"")]
    assert consumer.seeks[-1] == (TP, 0)  # what the group holds
    await stage.on_batch([record(0), record(1), record(2)])
    await _until(lambda: len(committed) == 2)
    assert question_ids(committed[1].outputs) == ["q-0", "q-1", "q-2"]
    assert committed[1].offsets == {TP: (3, "")}
    await stage.drain(1)


async def test_a_transaction_failing_after_its_partition_was_revoked_holds_nothing_back() -> None:
    """The committer is inside a transaction when the partition is revoked, and the new
    owner's fence makes it fail. Its records are the new owner's now: they are not put back,
    so the bound on held records (here 2) counts nothing that can never leave, and the stage
    keeps taking records of its other partitions."""
    gate = asyncio.Event()
    committed: list[Transaction] = []
    aborted: list[Transaction] = []

    class FencedMidCommit(RecordingTransactionalProducer):
        async def commit_transaction(self) -> None:
            await gate.wait()
            raise ProducerFenced()

    strategy = ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=2,
                           new_producer=lambda tid: FencedMidCommit(tid, committed, aborted),
                           offsets=NoCommits(), transactions=OpenTransactionsAt(), interval_s=3600)
    stage, _, consumer = runner(strategy, GatedPlanner())
    await strategy.assigned({TP}, consumer, stage.executor)  # type: ignore[arg-type]
    stage.start_committing()
    await stage.on_batch([record(0), record(1)])
    producer = await strategy._producers.open(TP)
    await _until(lambda: producer._open is not None and len(producer._open.outputs) == 2)
    # What the revocation listener does once its own commit is done (the committer took the
    # partition's lock right after it):
    stage.executor.revoke({TP})
    strategy.revoked({TP})
    gate.set()
    await _until(lambda: len(aborted) == 1)
    await asyncio.wait_for(strategy.room(), 1)  # nothing of the revoked partition is held
    assert committed == []
    await stage.drain(1)


class UnreadableAtFirst(GroupHolds):
    """A group whose reads during the assignment fail (its coordinator away past the
    timeout): where the partition resumes, and settling it."""

    async def committed(self, tp: TopicPartition) -> tuple[int, str]:
        self.reads += 1
        if self.reads <= 2:
            raise KafkaConnectionError("coordinator away")
        return self.commits[-1]


async def test_a_partition_whose_offset_could_not_be_read_is_settled_before_its_first_commit(
        ) -> None:
    """The assignment could not read where the group left the partition: the consumer goes
    on from a position of its own. What runs from there commits nothing until the partition
    is settled: the offset read again (here 1), the partition rewound to it."""
    committed: list[Transaction] = []
    aborted: list[Transaction] = []
    group = UnreadableAtFirst()
    group.add((1, ""))
    strategy = ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=100,
                           new_producer=lambda tid: RecordingTransactionalProducer(
                               tid, committed, aborted),
                           offsets=group, transactions=OpenTransactionsAt(), interval_s=3600)
    stage, _, consumer = runner(strategy, GatedPlanner())
    await strategy.assigned({TP}, consumer, stage.executor)  # type: ignore[arg-type]
    assert consumer.seeks == []  # nowhere known to go
    stage.start_committing()
    await stage.on_batch([record(0), record(1)])  # from the consumer's own position
    await _until(lambda: consumer.seeks == [(TP, 1)])
    assert committed == []  # record 0, committed before, went out no second time
    await stage.on_batch([record(1)])
    await _until(lambda: len(committed) == 1)
    assert question_ids(committed[0].outputs) == ["q-1"]
    assert committed[0].offsets == {TP: (2, "")}
    await stage.drain(1)


def test_the_wait_after_a_commit_is_learnt_per_partition() -> None:
    """Sends that took a refusal's time double the partition's wait before its next
    transaction (up to a bound); quick ones ease it back to the local broker's few ms."""
    strategy, _ = exactly_once()
    tp, other = TopicPartition("t", 0), TopicPartition("t", 1)
    strategy._learn_markers(tp, REFUSAL_S)
    assert strategy._markers_s[tp] == 2 * MARKERS_S
    for _ in range(10):
        strategy._learn_markers(tp, REFUSAL_S * 3)
    assert strategy._markers_s[tp] == MAX_MARKERS_S
    assert other not in strategy._markers_s  # another partition keeps its own
    for _ in range(200):
        strategy._learn_markers(tp, 0.002)
    assert strategy._markers_s[tp] == MARKERS_S
