"""The highest arrival rate one worker process sustains with end-to-end p99 <= 250 ms (ours,
then the relay chain, same run): rounds at rising rates on one running pipeline, doubling
until a round fails, then halving the gap between the last good and first bad rate."""

from __future__ import annotations

from typing import Any

from bench.load import Rig, ratio

P99_MAX_MS = 250.0


def sustained(step: dict[str, Any]) -> bool:
    return bool(step["kept_up"]) and "end_to_end_ms" in step and (
        step["end_to_end_ms"]["p99"] <= P99_MAX_MS)


async def find(bootstrap: str, *, relay: bool = False, workers: int = 1, partitions: int = 3,
               seconds: float, start: float = 10.0, limit: float = 6400.0, refine: int = 2
               ) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    good, bad = 0.0, None
    async with Rig(bootstrap, relay=relay, workers=workers, partitions=partitions,
                   hops=False) as rig:
        await rig.at_rate(start, 1.0, timeout_s=30)  # warm-up: connections, metadata, first fetches
        rate = start
        while rate <= limit:
            step = await rig.at_rate(rate, seconds, warmup_s=min(1.0, seconds / 4),
                                     timeout_s=10)
            steps.append(_brief(step))
            if not sustained(step):
                bad = rate
                await rig.settle()
                break
            good, rate = rate, rate * 2
        for _ in range(refine if bad else 0):
            assert bad is not None
            rate = round((good + bad) / 2)
            step = await rig.at_rate(rate, seconds, warmup_s=min(1.0, seconds / 4),
                                     timeout_s=10)
            steps.append(_brief(step))
            good, bad = (rate, bad) if sustained(step) else (good, rate)
            await rig.settle()
    return {"sustained_q_per_s": good, "first_failing_q_per_s": bad, "steps": steps,
            "workers": workers, "partitions": partitions}


def _brief(step: dict[str, Any]) -> dict[str, Any]:
    e2e = step.get("end_to_end_ms", {})
    return {"rate_per_s": step["rate_per_s"], "kept_up": step["kept_up"],
            "answered": step["answered"], "questions": step["questions"],
            "p50_ms": e2e.get("p50"), "p99_ms": e2e.get("p99")}


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    seconds, limit = (2.0, 40.0) if quick else (5.0, 6400.0)
    ours = await find(bootstrap, seconds=seconds, limit=limit, refine=0 if quick else 1)
    relay = await find(bootstrap, relay=True, seconds=seconds, limit=limit,
                       refine=0 if quick else 1)
    r = ratio(ours["sustained_q_per_s"], relay["sustained_q_per_s"])
    return {
        "parameters": {"p99_max_ms": P99_MAX_MS, "seconds_per_step": seconds, "partitions": 3,
                       "workers": 1, "adapter": "instant fake"},
        "results": {"ours": ours, "relay": relay, "ratio": r},
        "target": {"ratio_min": 0.3, "met": r is not None and r >= 0.3},
    }
