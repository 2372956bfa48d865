"""OrderedExecutor: concurrent across keys, ordered within one, commits the finished prefix."""

from __future__ import annotations

import asyncio

from aiokafka import ConsumerRecord, TopicPartition

from pmflow_gateway.streams.parallel import OrderedExecutor, PartitionProgress
from tests.support.records import record

TP = TopicPartition("t", 0)


def test_progress_commits_only_the_contiguous_prefix() -> None:
    progress = PartitionProgress()
    for offset in (10, 11, 12, 13):
        progress.started(offset)
    progress.finished(12)
    progress.finished(13)
    assert progress.commit_point() is None  # 10 and 11 still running
    progress.finished(10)
    assert progress.commit_point() == 11
    progress.committed = 11
    assert progress.commit_point() is None
    progress.finished(11)
    assert progress.commit_point() == 14


async def test_different_keys_run_concurrently_same_key_in_order() -> None:
    order: list[tuple[bytes | None, int]] = []
    release = asyncio.Event()

    async def process(rec: ConsumerRecord) -> None:
        if rec.key == b"slow":
            await release.wait()
        order.append((rec.key, rec.offset))

    executor = OrderedExecutor(process, max_in_flight=10)
    await executor.submit(record(0, b"slow"))
    await executor.submit(record(1, b"slow"))
    await executor.submit(record(2, b"fast"))
    await asyncio.sleep(0.01)
    assert order == [(b"fast", 2)]  # not blocked behind the slow key
    assert executor.commit_points() == {}  # offset 0 unfinished: nothing may be committed
    release.set()
    assert await executor.drain(1.0)
    assert order == [(b"fast", 2), (b"slow", 0), (b"slow", 1)]
    assert executor.commit_points() == {TP: 3}


async def test_records_without_a_key_do_not_wait_for_each_other() -> None:
    release = asyncio.Event()
    done: list[int] = []

    async def process(rec: ConsumerRecord) -> None:
        if rec.offset == 0:
            await release.wait()
        done.append(rec.offset)

    executor = OrderedExecutor(process, max_in_flight=10)
    for offset in range(3):
        await executor.submit(record(offset, None))
    await asyncio.sleep(0.01)
    assert done == [1, 2]
    release.set()
    assert await executor.drain(1.0)
    assert executor.commit_points() == {TP: 3}


async def test_a_failed_record_blocks_the_commit_point() -> None:
    async def process(rec: ConsumerRecord) -> None:
        if rec.offset == 1:
            raise RuntimeError("boom")

    executor = OrderedExecutor(process, max_in_flight=10)
    for offset in range(4):
        await executor.submit(record(offset, bytes([offset])))
    await executor.drain(1.0)
    assert executor.commit_points() == {TP: 1}  # 1 failed: redelivered after a restart


async def test_in_flight_is_bounded() -> None:
    running = 0
    peak = 0
    gate = asyncio.Event()

    async def process(rec: ConsumerRecord) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        running -= 1

    executor = OrderedExecutor(process, max_in_flight=3)
    for offset in range(3):
        await executor.submit(record(offset, bytes([offset])))
    blocked = asyncio.create_task(executor.submit(record(3, b"x")))
    await asyncio.sleep(0.01)
    assert not blocked.done()  # the fourth waits for a slot: fetching stops
    gate.set()
    await blocked
    await executor.drain(1.0)
    assert peak == 3


async def test_revoked_partition_abandons_work_without_commit() -> None:
    gate = asyncio.Event()

    async def process(rec: ConsumerRecord) -> None:
        await gate.wait()

    executor = OrderedExecutor(process, max_in_flight=10)
    await executor.submit(record(0, b"a", partition=0))
    await executor.submit(record(0, b"b", partition=1))
    assert executor.revoke([TopicPartition("t", 1)]) == 1
    gate.set()
    await executor.drain(1.0)
    assert executor.commit_points() == {TP: 1}


async def test_a_revoked_record_waiting_behind_its_key_never_runs() -> None:
    """Offset 1 waits for offset 0 (same key) when the partition is revoked or rewound: both
    are abandoned. Were 1 to run anyway, it would finish into the partition's next life (an
    exactly-once stage would hold its outputs twice and never free the room they took)."""
    gate, ran = asyncio.Event(), []

    async def process(rec: ConsumerRecord) -> None:
        ran.append(rec.offset)
        await gate.wait()

    executor = OrderedExecutor(process, max_in_flight=10)
    await executor.submit(record(0, b"q"))
    await executor.submit(record(1, b"q"))
    await asyncio.sleep(0.01)
    assert executor.revoke([TP]) == 2
    gate.set()
    await asyncio.sleep(0.01)
    assert ran == [0] and executor.in_flight == 0


async def test_closing_executor_takes_nothing_new() -> None:
    seen: list[int] = []

    async def process(rec: ConsumerRecord) -> None:
        seen.append(rec.offset)

    executor = OrderedExecutor(process, max_in_flight=2)
    await executor.drain(0.1)
    assert await executor.submit(record(0, b"a")) is False
    assert seen == []
