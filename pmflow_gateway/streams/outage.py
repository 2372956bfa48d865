"""What a stage does while an outside system it needs is away (`ports.Unavailable`).

A record whose call finds the dependency away is not given up: it waits, and so does every
record that starts meanwhile. Their partitions are paused, so the stage takes no new records
from them; one waiting record at a time tries again, after a pause that doubles up to a cap
with jitter (many workers do not come back in step); the first call the dependency answers
(with a result or a refusal of that record) reopens the way for all the others and resumes
the partitions. A waiting record has not finished, so no offset past it is committed: a
crash or a rebalance meanwhile re-delivers it. When the last waiting record is abandoned
(its partition rewound or lost), the paused partitions resume, so their records come again
and one of them tries: a partition is never left paused with nobody to try.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from aiokafka import TopicPartition

from pmflow_gateway.ports import Unavailable
from pmflow_gateway.streams.health import PAUSED_PARTITIONS

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Backoff:
    """Pauses between tries while a dependency is away: the n-th is drawn between half and
    all of `first_s * 2**n`, never more than `max_s`."""

    first_s: float = 0.5
    max_s: float = 10.0

    def pause_s(self, tries: int, rng: random.Random) -> float:
        ceiling = min(self.max_s, self.first_s * 2 ** min(tries, 30))
        return rng.uniform(ceiling / 2, ceiling)


class Outage:
    """One stage's view of its dependencies: away or answering, and which partitions wait."""

    def __init__(self, stage: str, backoff: Backoff, *,
                 pause: Callable[[TopicPartition], None],
                 resume: Callable[[Iterable[TopicPartition]], None],
                 rng: random.Random | None = None) -> None:
        self._stage = stage
        self._backoff = backoff
        self._pause, self._resume = pause, resume
        self._rng = rng or random.Random()
        self._probe = asyncio.Lock()
        self._away: Unavailable | None = None
        self._since = 0.0
        self._tries = 0
        self._paused: set[TopicPartition] = set()
        self._waiting = 0  # records held while the dependency is away
        self._gauge = PAUSED_PARTITIONS.labels(stage)

    @property
    def away(self) -> Unavailable | None:
        """The failure that started the outage, or None while the dependency answers."""
        return self._away

    @property
    def paused(self) -> frozenset[TopicPartition]:
        return frozenset(self._paused)

    async def through(self, tp: TopicPartition, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`'s result, however long the dependency stays away; a failure other than
        `Unavailable` is raised as usual."""
        while True:
            if self._away is None:
                try:
                    return await call()
                except Unavailable as away:
                    self._went_away(away)
            self._hold(tp)
            self._waiting += 1
            try:
                async with self._probe:
                    if self._away is None:
                        continue  # another record's try succeeded meanwhile
                    await asyncio.sleep(self._backoff.pause_s(self._tries, self._rng))
                    self._tries += 1
                    try:
                        result = await call()
                    except Unavailable as still:
                        log.info("%s: %s still away after %d tries: %s", self._stage,
                                 still.dependency, self._tries, still.reason)
                        continue
                    except Exception:
                        self._came_back()  # it answered, if only to refuse this record
                        raise
                    self._came_back()
                    return result
            except asyncio.CancelledError:
                # Abandoned (its partition was rewound or lost). Paused partitions are only
                # resumed by a waiting record's try: when none waits any more, let their
                # records come again, so one of them tries.
                if self._waiting == 1 and self._paused:
                    self._resume_all()
                raise
            finally:
                self._waiting -= 1

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions this worker lost: nothing to resume there."""
        self._paused.difference_update(partitions)
        self._gauge.set(len(self._paused))

    def _went_away(self, away: Unavailable) -> None:
        if self._away is not None:
            return
        self._away, self._tries = away, 0
        self._since = asyncio.get_running_loop().time()
        log.warning("%s: %s; pausing its partitions and trying again with backoff",
                    self._stage, away)

    def _hold(self, tp: TopicPartition) -> None:
        if tp not in self._paused:
            self._paused.add(tp)
            self._pause(tp)
            self._gauge.set(len(self._paused))

    def _came_back(self) -> None:
        assert self._away is not None
        took = asyncio.get_running_loop().time() - self._since
        log.warning("%s: %s answers again after %.1f s and %d tries; resuming %d partition(s)",
                    self._stage, self._away.dependency, took, self._tries, len(self._paused))
        self._away = None
        self._resume_all()

    def _resume_all(self) -> None:
        paused, self._paused = self._paused, set()
        self._resume(paused)
        self._gauge.set(0)
