"""A watchdog for the event loop: how long the loop went without running a ready task.

It is a bound on blocking, not a measure of speed: a task that sleeps a few milliseconds at a
time wakes late by as long as something held the loop (a regex over a hostile page, a parse
that never yields). On a shared machine it also wakes late when the OS runs other processes;
that lateness costs this process no CPU, so a hold counts only up to the CPU time the process
spent in it: holding the loop (or the GIL from a thread) always burns CPU here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

TICK_S = 0.005


@dataclass
class LoopLag:
    worst_s: float = 0.0  # the longest hold: wall-clock lateness, at most the CPU spent in it
    worst_wall_s: float = 0.0  # the longest lateness, whatever its cause
    ticks: int = 0


@asynccontextmanager
async def watch_loop() -> AsyncIterator[LoopLag]:
    """Within the block, `LoopLag.worst_s` is the longest the loop was held past one tick."""
    lag = LoopLag()

    async def tick() -> None:
        while True:
            expected, cpu = time.monotonic() + TICK_S, time.process_time()
            await asyncio.sleep(TICK_S)
            late = time.monotonic() - expected
            lag.worst_wall_s = max(lag.worst_wall_s, late)
            lag.worst_s = max(lag.worst_s, min(late, time.process_time() - cpu))
            lag.ticks += 1

    task = asyncio.create_task(tick())
    await asyncio.sleep(0)
    try:
        yield lag
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
