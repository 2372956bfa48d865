"""The latency scenario (ours, 50 questions/s) quiet, then while a CPU hog busy-loops on one
core, in the same run: how much a noisy neighbour stretches our latency."""

from __future__ import annotations

from typing import Any

from bench.hog import cpu_hog
from bench.load import Rig, ratio
from bench.scenarios.latency import RATE


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    seconds, warmup_s = (4.0, 1.0) if quick else (20.0, 2.0)
    async with Rig(bootstrap) as rig:
        quiet = await rig.at_rate(RATE, seconds, warmup_s=warmup_s, timeout_s=60)
        cpu_before = await rig.cpu_s()
        with cpu_hog() as pid:
            hog = await rig.at_rate(RATE, seconds, warmup_s=warmup_s, timeout_s=60)
        cpu_hog_ms = (await rig.cpu_s() - cpu_before) * 1000 / hog["questions"]
    p50 = ratio(hog["end_to_end_ms"]["p50"], quiet["end_to_end_ms"]["p50"])
    return {
        "parameters": {"rate_per_s": RATE, "seconds": seconds, "warmup_s": warmup_s,
                       "hog": "python busy loop pinned to core 0", "hog_pid": pid},
        "results": {"quiet": quiet, "hog": hog, "worker_cpu_ms_per_question_with_hog":
                    round(cpu_hog_ms, 3),
                    "ratio": {q: ratio(hog["end_to_end_ms"][q], quiet["end_to_end_ms"][q])
                              for q in ("p50", "p95", "p99")}},
        "target": {"p50_ratio_max": 3.0, "met": p50 is not None and p50 <= 3.0},
    }
