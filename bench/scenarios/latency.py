"""End-to-end latency at 50 questions/s through the whole pipeline in one worker process
(instant adapter), ours and the raw relay chain in the same run: send -> ReplyRendered receipt,
per hop from the Kafka record timestamps, per stage core from AnswerReady."""

from __future__ import annotations

from typing import Any

from bench.load import Rig, ratio

RATE = 50.0


async def measure(bootstrap: str, *, relay: bool, seconds: float, warmup_s: float
                  ) -> dict[str, Any]:
    async with Rig(bootstrap, relay=relay) as rig:
        result = await rig.at_rate(RATE, seconds, warmup_s=warmup_s, timeout_s=60)
        if probe := await rig.probe():
            result["inside_worker_ms"] = probe
        return result


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    seconds, warmup_s = (4.0, 1.0) if quick else (20.0, 2.0)
    relay = await measure(bootstrap, relay=True, seconds=seconds, warmup_s=warmup_s)
    ours = await measure(bootstrap, relay=False, seconds=seconds, warmup_s=warmup_s)
    p50 = ratio(ours["end_to_end_ms"]["p50"], relay["end_to_end_ms"]["p50"])
    return {
        "parameters": {"rate_per_s": RATE, "seconds": seconds, "warmup_s": warmup_s,
                       "partitions": 3, "adapter": "instant fake"},
        "results": {"ours": ours, "relay": relay,
                    "ratio": {q: ratio(ours["end_to_end_ms"][q], relay["end_to_end_ms"][q])
                              for q in ("p50", "p95", "p99")}},
        "target": {"p50_ratio_max": 1.5, "met": p50 is not None and p50 <= 1.5},
    }
