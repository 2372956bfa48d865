"""`Outage` without services: while a dependency is away its callers wait, their partitions
pause, one of them at a time tries again, and all go on when it answers; and the store's
rule for text every database can keep."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest
from aiokafka import TopicPartition

from pmflow_gateway.adapters.store_schema import storable_json, storable_text
from pmflow_gateway.ports import Unavailable
from pmflow_gateway.streams.outage import Backoff, Outage


class Dependency:
    def __init__(self) -> None:
        self.back = asyncio.Event()
        self.calls = self.busy = self.most_busy_while_away = 0

    async def call(self) -> str:
        self.calls += 1
        self.busy += 1
        try:
            await asyncio.sleep(0.001)
            if not self.back.is_set():
                self.most_busy_while_away = max(self.most_busy_while_away, self.busy)
                raise Unavailable("database", "refused")
            return "written"
        finally:
            self.busy -= 1


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition never held")


async def test_while_away_one_caller_at_a_time_tries_and_all_go_on_when_it_answers() -> None:
    paused: set[TopicPartition] = set()
    resumed: list[TopicPartition] = []
    outage = Outage("memory", Backoff(first_s=0.001, max_s=0.004), pause=paused.add,
                    resume=resumed.extend, rng=random.Random(1))
    dependency = Dependency()
    partitions = [TopicPartition("t", p) for p in range(20)]
    first = asyncio.create_task(outage.through(partitions[0], dependency.call))
    await until(lambda: outage.away is not None)
    dependency.most_busy_while_away = 0  # from here on, everyone knows it is away
    rest = [asyncio.create_task(outage.through(tp, dependency.call)) for tp in partitions[1:]]
    await until(lambda: dependency.calls >= 30)
    assert dependency.most_busy_while_away == 1 and paused == set(partitions)

    dependency.back.set()
    assert await asyncio.gather(first, *rest) == ["written"] * 20
    assert outage.away is None and outage.paused == frozenset()
    assert sorted(resumed) == partitions


async def test_a_waiting_record_abandoned_last_lets_its_partition_go_on() -> None:
    """A rewind or a lost partition cancels the waiting records. Only a waiting record's try
    resumes paused partitions, so when the last one goes, they are resumed: their records
    come again and one of them tries, instead of the partitions staying paused for good."""
    paused: set[TopicPartition] = set()
    resumed: list[TopicPartition] = []
    outage = Outage("memory", Backoff(first_s=10.0, max_s=10.0), pause=paused.add,
                    resume=resumed.extend, rng=random.Random(1))
    dependency = Dependency()
    tp, other = TopicPartition("t", 0), TopicPartition("t", 1)
    waiting = [asyncio.create_task(outage.through(p, dependency.call)) for p in (tp, other)]
    await until(lambda: outage.paused == {tp, other})
    waiting[0].cancel()
    await asyncio.gather(waiting[0], return_exceptions=True)
    assert resumed == []  # the other record still waits, and will try
    waiting[1].cancel()
    await asyncio.gather(waiting[1], return_exceptions=True)
    assert sorted(resumed) == [tp, other] and outage.paused == frozenset()
    assert outage.away is not None  # the next record still waits its turn to try


async def test_a_try_the_dependency_answers_with_a_refusal_ends_the_outage() -> None:
    """The store answered, if only to refuse this record: the paused partitions go on."""
    resumed: list[TopicPartition] = []
    outage = Outage("memory", Backoff(first_s=0.001, max_s=0.001), pause=lambda tp: None,
                    resume=resumed.extend, rng=random.Random(1))
    dependency = Dependency()
    first = asyncio.create_task(outage.through(TopicPartition("t", 0), dependency.call))
    await until(lambda: outage.away is not None)

    async def refused() -> str:
        raise ValueError("this row, never")

    with pytest.raises(ValueError, match="this row"):
        await outage.through(TopicPartition("t", 1), refused)
    assert sorted(resumed) == [TopicPartition("t", 0), TopicPartition("t", 1)]
    dependency.back.set()
    assert await first == "written"


def test_a_pause_grows_to_its_cap_with_jitter() -> None:
    backoff, rng = Backoff(first_s=0.5, max_s=10.0), random.Random(7)
    pauses = [backoff.pause_s(n, rng) for n in range(8)]
    assert 0.25 <= pauses[0] <= 0.5 and 0.5 <= pauses[1] <= 1.0
    assert all(5.0 <= p <= 10.0 for p in pauses[5:])
    assert len({round(p, 6) for p in pauses[5:]}) == 3  # jittered, not in step


def test_storable_text_drops_nul_and_replaces_lone_surrogates_only() -> None:
    assert storable_text("a\x00b") == "ab"
    assert storable_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert storable_text("\ud83d\ude00") == "\U0001f600"  # a pair spells its character
    plain = "广州 weather ✓"
    assert storable_text(plain) is plain
    assert storable_json({"k\x00": ["v\x00", {"x": "\ud800"}], "n": 1}) == {
        "k": ["v", {"x": "\ufffd"}], "n": 1}
