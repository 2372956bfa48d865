"""CPU per question for the whole pipeline (plan, evidence, answer, render, memory) in one worker
process, external I/O replaced by instant fakes; the raw relay chain (`bench.relay`) in the same
run as the floor; ours with tracing off, then with an SDK TracerProvider exporting to a counter.
CPU is the process's own rusage, read before and after the questions.

A worker in service has answered many questions before this one: the measured questions come
after an unmeasured warm-up batch, whose own cost is reported beside them
(`warmup_cpu_ms_per_question`: a fresh worker fills its caches and compiles its patterns
then)."""

from __future__ import annotations

import asyncio
from typing import Any

from bench.pipeline import ALL_STAGES, Pipeline
from bench.process import Worker
from pmflow_gateway import compiled

IDLE_S = 2.0
WARMUP_QUESTIONS = 500


async def measure(bootstrap: str, n: int, *, otel: bool, profile: str | None = None,
                  relay: bool = False, warmup: int = WARMUP_QUESTIONS) -> dict[str, Any]:
    pipeline = Pipeline(bootstrap)
    await pipeline.setup()
    worker = Worker(bootstrap, pipeline.topics.prefix, stages=",".join(ALL_STAGES), otel=otel,
                    profile=profile, relay=relay)
    try:
        ready = await worker.start()
        await pipeline.feed(warmup, timeout_s=max(120, warmup / 5))
        warm = await worker.sample()
        await asyncio.sleep(IDLE_S)  # the cost of a worker with nothing to do, to subtract
        before = await worker.sample()
        idle_s = before["monotonic"] - warm["monotonic"]
        idle_cpu_per_s = (before["cpu_s"] - warm["cpu_s"]) / idle_s
        fed = await pipeline.feed(n, timeout_s=max(120, n / 5))  # a loaded machine is slow
        after = await worker.sample()
    finally:
        final = await worker.stop()
        await pipeline.close()
    cpu_s = after["cpu_s"] - before["cpu_s"]
    # Stage logic (the cores) against the runtime around it: the relay has no cores at all.
    cores_ms = {k: round((v - before["core_s"].get(k, 0.0)) / n * 1000, 3)
                for k, v in after.get("core_s", {}).items()}
    wall_s = after["monotonic"] - before["monotonic"]
    return {
        "questions": n,
        "cpu_ms_per_question": round(cpu_s / n * 1000, 3),
        "warmup_questions": warmup,
        "warmup_cpu_ms_per_question": round((warm["cpu_s"] - ready["cpu_s"]) / warmup * 1000, 3),
        "cpu_ms_per_question_idle_subtracted": round(
            (cpu_s - idle_cpu_per_s * wall_s) / n * 1000, 3),
        "core_ms_per_question": cores_ms,
        "runtime_ms_per_question": round(cpu_s / n * 1000 - sum(cores_ms.values()), 3)
        if cores_ms else None,
        "user_ms_per_question": round((after["utime_s"] - before["utime_s"]) / n * 1000, 3),
        "system_ms_per_question": round((after["stime_s"] - before["stime_s"]) / n * 1000, 3),
        "idle_cpu_ms_per_s": round(idle_cpu_per_s * 1000, 2),
        "gc_ms_per_question": round(
            (sum(after["gc_s"]) - sum(before["gc_s"])) / n * 1000, 3),
        "gc_runs_by_generation": [a - b for a, b in zip(after["gc_runs"], before["gc_runs"],
                                                         strict=True)],
        "wall_s": round(wall_s, 2),
        "questions_per_s": round(n / fed["seconds_to_replies"], 1),
        "all_replied_and_committed": fed["replies"] == n and fed["committed_all"],
        "stage_counts": final["counts"],
        "spans_exported": final["spans_exported"],
    }


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    n, warmup = (300, 100) if quick else (2000, WARMUP_QUESTIONS)
    relay = await measure(bootstrap, n, otel=False, relay=True, warmup=warmup)
    off = await measure(bootstrap, n, otel=False, warmup=warmup)
    on = await measure(bootstrap, n, otel=True, warmup=warmup)
    vs_relay = round(off["cpu_ms_per_question"] / relay["cpu_ms_per_question"], 2)
    runtime_vs_relay = round(off["runtime_ms_per_question"] / relay["cpu_ms_per_question"], 2)
    return {
        "parameters": {"questions": n, "partitions": 3, "stages": list(ALL_STAGES),
                       "adapter": "instant fake (3 pages)", "store": "counting fake",
                       "idle_window_s": IDLE_S, "warmup_questions": warmup,
                       # the modules the worker ran compiled (scripts/compile); 0: uncompiled
                       "compiled_modules": len(compiled.compiled())},
        "results": {"relay": relay, "otel_off": off, "otel_on": on, "ratio_vs_relay": vs_relay,
                    "runtime_ratio_vs_relay": runtime_vs_relay,
                    "otel_cost_ratio": round(
                        on["cpu_ms_per_question"] / off["cpu_ms_per_question"], 2)},
        "target": {"ratio_vs_relay_max": 3.0, "met": vs_relay <= 3.0},
    }
