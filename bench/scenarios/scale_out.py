"""Questions/s at saturation (p99 <= 250 ms) with one, then two worker processes in one consumer
group per stage on 6 partitions. On a 2-core machine the ceiling is the machine, not the design:
the ratio says how much of the second process's share of the cores we turn into throughput."""

from __future__ import annotations

from typing import Any

from bench.load import ratio
from bench.scenarios.saturation import find

PARTITIONS = 6


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    seconds, limit = (2.0, 40.0) if quick else (5.0, 6400.0)
    one = await find(bootstrap, workers=1, partitions=PARTITIONS, seconds=seconds, limit=limit,
                     refine=0 if quick else 1)
    two = await find(bootstrap, workers=2, partitions=PARTITIONS, seconds=seconds, limit=limit,
                     refine=0 if quick else 1)
    return {
        "parameters": {"partitions": PARTITIONS, "seconds_per_step": seconds,
                       "p99_max_ms": 250.0, "adapter": "instant fake"},
        "results": {"one_process": one, "two_processes": two,
                    "ratio": ratio(two["sustained_q_per_s"], one["sustained_q_per_s"])},
    }
