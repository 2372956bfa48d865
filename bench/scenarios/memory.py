"""Resident memory of one worker process running the whole pipeline across many questions:
sampled once the first 2,000 have gone through (warm-up), then after every further round."""

from __future__ import annotations

from typing import Any

from bench.pipeline import ALL_STAGES, Pipeline
from bench.process import Worker


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    total, warmup, rounds = (1000, 200, 4) if quick else (20_000, 2_000, 9)
    return await measure(bootstrap, total=total, warmup=warmup, rounds=rounds)


async def measure(bootstrap: str, *, total: int, warmup: int, rounds: int) -> dict[str, Any]:
    per_round = (total - warmup) // rounds
    pipeline = Pipeline(bootstrap)
    await pipeline.setup()
    worker = Worker(bootstrap, pipeline.topics.prefix, stages=",".join(ALL_STAGES))
    curve: list[dict[str, Any]] = []
    all_committed = True
    try:
        ready = await worker.start()
        fed = await pipeline.feed(warmup, timeout_s=120)
        all_committed &= fed["committed_all"]
        warm = await worker.sample()
        curve.append({"questions": pipeline.sent, "rss_kb": warm["rss_kb"]})
        for _ in range(rounds):
            fed = await pipeline.feed(per_round, timeout_s=300)
            all_committed &= fed["committed_all"]
            now = await worker.sample()
            curve.append({"questions": pipeline.sent, "rss_kb": now["rss_kb"]})
    finally:
        final = await worker.stop()
        await pipeline.close()
    end = curve[-1]["rss_kb"]
    growth = (end - warm["rss_kb"]) / warm["rss_kb"] * 100
    # A leak climbs steadily; allocator noise goes up and down. The slope tells them apart.
    xs, ys = [c["questions"] for c in curve], [c["rss_kb"] for c in curve]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs)
    return {
        "parameters": {"questions": pipeline.sent, "warmup": warmup,
                       "rounds_after_warmup": rounds, "stages": list(ALL_STAGES),
                       "adapter": "instant fake", "store": "counting fake (keeps nothing)",
                       "rss": "/proc/<worker>/status VmRSS"},
        "results": {"rss_ready_kb": ready["rss_kb"], "rss_after_warmup_kb": warm["rss_kb"],
                    "rss_end_kb": end, "growth_pct": round(growth, 2),
                    "slope_kb_per_1000_questions": round(slope * 1000, 1),
                    "spread_after_warmup_kb": max(ys) - min(ys),
                    "max_rss_kb": final["max_rss_kb"], "curve": curve,
                    "all_replied_and_committed": all_committed
                    and pipeline.replies == pipeline.sent},
        "target": {"growth_pct_max": 10.0, "met": growth <= 10.0},
    }
