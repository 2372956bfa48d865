"""The bookkeeping of exactly-once mode without a broker: which outputs a record holds,
how many may wait, and which fetched records a rewound partition still takes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiokafka import ConsumerRecord, TopicPartition

from pmflow_gateway.ports import Publisher, Unpublishable
from pmflow_gateway.schemas import DeadLettered
from pmflow_gateway.streams import done_map
from pmflow_gateway.streams.delivery import MAX_REQUEST_BYTES
from pmflow_gateway.streams.parallel import OrderedExecutor, Process
from pmflow_gateway.streams.transactional import ExactlyOnce
from tests.fakes import OpenTransactionsAt, RecordingPublisher
from tests.support.records import record

TP = TopicPartition("t", 0)


def commits(max_held: int = 100) -> ExactlyOnce:
    return ExactlyOnce(bootstrap="127.0.0.1:1", group_id="g", stage="plan", max_held=max_held,
                       transactions=OpenTransactionsAt())


async def _no_refusal(record: ConsumerRecord, reason: str, publisher: Publisher) -> None:
    raise AssertionError("nothing is refused here")


def running(txn: ExactlyOnce, process: Callable[[ConsumerRecord], Awaitable[None]]) -> Process:
    """`process` as a record's handle that sends nothing."""
    async def handle(record: ConsumerRecord, publisher: Publisher) -> None:
        await process(record)

    return txn.running(handle, RecordingPublisher(), _no_refusal)


def letter(question_id: str) -> DeadLettered:
    return DeadLettered.model_validate({
        "event_id": f"e-{question_id}", "question_id": question_id, "tenant_id": "t",
        "occurred_at": "2026-12-02T08:00:00+00:00", "stage": "plan", "reason": "r",
        "origin_topic": "t", "origin_partition": 0, "origin_offset": 0,
        "original_headers": {}, "original_value": ""})


async def test_sends_inside_a_record_are_held_not_sent() -> None:
    txn = commits()
    publisher = RecordingPublisher()

    async def handle(r: ConsumerRecord, sink: Publisher) -> None:
        await sink.send("out", r.key.decode(), letter(r.key.decode()))

    await txn.running(handle, publisher, _no_refusal)(record(5, b"q-5"))
    assert publisher.sent == []  # the runner's publisher is not used: the transaction sends
    taken = txn._take(TP, 6)
    assert [(o.topic, o.key) for o in taken[5].outputs] == [("out", b"q-5")]
    assert dict(taken[5].outputs[0].headers)["event_type"] == b"DeadLettered"


async def test_fetching_waits_while_max_held_records_wait_for_the_prefix() -> None:
    txn = commits(max_held=2)
    run = running(txn, lambda r: asyncio.sleep(0))
    await run(record(1, b"a"))
    await run(record(2, b"b"))
    waiting = asyncio.create_task(txn.room())
    await asyncio.sleep(0)
    assert not waiting.done()
    txn._take(TP, 2)  # the prefix reached offset 1
    await asyncio.wait_for(waiting, 1)


async def test_a_rewound_partition_refuses_what_was_fetched_before() -> None:
    txn = commits()
    wanted = txn.admission()
    assert wanted(record(10, b"a")) and wanted(record(11, b"b"))
    assert not wanted(record(11, b"b"))  # the same offset again (a stale fetch)
    txn.revoked([TP])
    assert not wanted(record(12, b"c"))  # the rest of the batch of the old position
    again = txn.admission()
    assert again(record(3, b"x"))  # after the rewind, from wherever the consumer resumes


async def test_a_run_that_outlives_its_partitions_rewind_holds_nothing() -> None:
    txn = commits()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(r: ConsumerRecord) -> None:
        started.set()
        await release.wait()

    executor = OrderedExecutor(running(txn, slow), max_in_flight=4)
    await executor.submit(record(7, b"k"))
    await started.wait()
    txn.revoked([TP])
    release.set()
    await executor.drain(1)
    assert txn._take(TP, 100) == {}


async def test_an_output_too_large_for_any_request_is_refused_when_held() -> None:
    txn = commits()
    huge = letter("q").model_copy(update={"original_value": "x" * (MAX_REQUEST_BYTES + 1)})

    async def handle(r: ConsumerRecord, sink: Publisher) -> None:
        await sink.send("out", "q", huge)

    with pytest.raises(Unpublishable, match="MessageSizeTooLarge"):
        await txn.running(handle, RecordingPublisher(), _no_refusal)(record(1, b"q"))
    assert txn._take(TP, 2) == {}


def test_the_done_map_lists_the_finished_offsets_after_the_committed_one() -> None:
    assert done_map.encode(100, []) == ""
    for done in [{101}, {105, 107, 230}, set(range(101, 101 + done_map.SPAN))]:
        metadata = done_map.encode(100, done)
        assert done_map.decode(100, metadata) == done
        assert len(metadata) < 4096 // 2  # far below the broker's default limit
    with pytest.raises(ValueError):
        done_map.encode(100, {100})  # the committed offset itself is not done
    with pytest.raises(ValueError):
        done_map.encode(100, {101 + done_map.SPAN})
    assert done_map.decode(100, "some other tool's note") == set()
    assert done_map.decode(100, "done1:!!not base64") == set()


async def test_a_record_the_last_commit_lists_as_done_is_not_run_again() -> None:
    txn = commits()
    txn._committed_as(TP, (10, done_map.encode(10, {12, 13})), {12, 13})
    ran: list[int] = []

    async def process(r: ConsumerRecord) -> None:
        ran.append(r.offset)

    executor = OrderedExecutor(running(txn, process), max_in_flight=8)
    for offset in range(10, 15):
        await executor.submit(record(offset, bytes([offset])))
    assert await executor.drain(1)
    assert ran == [10, 11, 14]
    assert executor.positions() == {TP: 15}
    assert sorted(txn._take(TP, 100)) == [10, 11, 14]  # the skipped ones hold no outputs


async def test_records_finished_behind_a_slow_one_are_taken_for_the_next_transaction() -> None:
    txn = commits()
    release = asyncio.Event()

    async def process(r: ConsumerRecord) -> None:
        if r.offset == 0:
            await release.wait()

    executor = OrderedExecutor(running(txn, process), max_in_flight=8)
    for offset in range(4):
        await executor.submit(record(offset, bytes([offset])))
    await asyncio.sleep(0.01)
    assert executor.positions() == {TP: 0}  # the slow one is the first not finished
    assert txn._finished_within(TP, 0)
    assert sorted(txn._take(TP, done_map.SPAN + 1)) == [1, 2, 3]
    release.set()
    assert await executor.drain(1)
    assert executor.positions() == {TP: 4}
