"""The evidence stage with an adapter that answers after 500 ms, 3 partitions, a backlog of
questions: ours (one worker process, `OrderedExecutor`) against FastStream's own subscriber
with the same 500 ms handler (one consumer: one message at a time; and `max_workers=3`: one
consumer per partition, one message at a time per partition). At-least-once is checked for
each: every question has an output and the group has committed the end offsets."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from faststream.kafka import KafkaBroker

from bench import kafka
from bench.fixtures import EVIDENCE, has_real_mcp_server, plan_created
from bench.process import Worker
from bench.support import InstantAdapter
from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.handlers.evidence import collect_evidence
from pmflow_gateway.schemas import PlanCreated, Topics
from pmflow_gateway.streams.codec import encode

DELAY_MS = 500
PARTITIONS = 3


async def _setup(bootstrap: str, n: int) -> tuple[Topics, str, set[bytes]]:
    run_id = uuid.uuid4().hex[:8]
    topics = Topics(prefix=f"bench{run_id}.")
    await kafka.create_topics(bootstrap, topics, partitions=PARTITIONS)
    messages = [await plan_created(run_id, i) for i in range(n)]
    await kafka.produce_all(bootstrap, topics.plan_created, messages)
    return topics, f"{topics.prefix}gateway-evidence", {k for k, _ in messages}


async def _outputs(bootstrap: str, topics: Topics, keys: set[bytes], timeout_s: float
                   ) -> tuple[list[float], int]:
    """Arrival times of the outputs, once every key has one; and how many came twice."""
    consumer = await kafka.tail(bootstrap, [topics.evidence_collected])
    arrivals: list[float] = []
    seen: set[bytes] = set()
    duplicates = 0

    def on_record(record: Any, now: float) -> None:
        nonlocal duplicates
        duplicates += record.key in seen
        seen.add(record.key)
        arrivals.append(time.monotonic())

    try:
        await kafka.read_until(consumer, lambda _: keys <= seen, timeout_s=timeout_s,
                               on_record=on_record)
    finally:
        await consumer.stop()
    return arrivals, duplicates


async def _check(bootstrap: str, topics: Topics, group: str) -> dict[str, Any]:
    state = await kafka.wait_committed(bootstrap, {group: topics.plan_created}, timeout_s=15)
    return {"committed_offsets": state[group]["committed"], "end_offsets": state[group]["end"],
            "committed_equals_end": state[group]["committed"] == state[group]["end"]}


def _rates(n: int, started: float, arrivals: list[float]) -> dict[str, float]:
    last = max(arrivals)
    return {"questions_per_s": round(n / (last - started), 1),
            "seconds": round(last - started, 2)}


async def ours(bootstrap: str, n: int, *, real_mcp: bool = False) -> dict[str, Any]:
    topics, group, keys = await _setup(bootstrap, n)
    worker = Worker(bootstrap, topics.prefix, stages="evidence", adapter_delay_ms=DELAY_MS,
                    real_mcp=real_mcp)
    try:
        ready = await worker.start()
        arrivals, duplicates = await _outputs(bootstrap, topics, keys, timeout_s=60 + n / 20)
        check = await _check(bootstrap, topics, group)
    finally:
        final = await worker.stop()
        await kafka.delete_topics(bootstrap, topics.all())
    return {"questions": n, **_rates(n, ready["monotonic"], arrivals),
            "every_question_answered": True, "duplicates": duplicates, **check,
            "counts": final["counts"]["evidence"]}


async def faststream(bootstrap: str, n: int, *, max_workers: int) -> dict[str, Any]:
    topics, group, keys = await _setup(bootstrap, n)
    broker = KafkaBroker(bootstrap, logger=None)
    publisher = broker.publisher(topics.evidence_collected)
    adapter = InstantAdapter(lambda plan, n: list(EVIDENCE), delay_s=DELAY_MS / 1000)
    clock = SystemClock()

    @broker.subscriber(topics.plan_created, group_id=group, auto_offset_reset="earliest",
                       max_workers=max_workers)
    async def handle(body: PlanCreated) -> None:
        out = await collect_evidence(body, adapters=[adapter], clock=clock)
        await publisher.publish(encode(out), key=body.question_id.encode())

    try:
        await broker.start()
        started = time.monotonic()
        arrivals, duplicates = await _outputs(bootstrap, topics, keys, timeout_s=30 + n)
        check = await _check(bootstrap, topics, group)
    finally:
        await broker.stop()
        await kafka.delete_topics(bootstrap, topics.all())
    return {"questions": n, **_rates(n, started, arrivals), "every_question_answered": True,
            "duplicates": duplicates, **check}


async def run(bootstrap: str, *, quick: bool) -> dict[str, Any]:
    n_ours, n_fs = (300, 12) if quick else (2000, 60)
    mine = await ours(bootstrap, n_ours)
    await asyncio.sleep(1)
    default = await faststream(bootstrap, n_fs, max_workers=1)
    per_partition = await faststream(bootstrap, n_fs, max_workers=PARTITIONS)
    # The project's MCP server (`python -m pmflow_gateway.mcp_server --delay-ms 500`) over
    # stdio, where this checkout has it.
    real = await ours(bootstrap, n_ours, real_mcp=True) if has_real_mcp_server() else None
    return {
        "parameters": {"adapter_delay_ms": DELAY_MS, "partitions": PARTITIONS,
                       "questions_ours": n_ours, "questions_faststream": n_fs,
                       "ours": "bench.worker subprocess, stages=evidence, in_flight=256",
                       "faststream": "@broker.subscriber(topic, group_id=...), default ack "
                                     "policy, same handler (collect_evidence + publish)",
                       "rate": "questions / (last output - consumer ready)"},
        "results": {"ours": mine, "ours_real_mcp_server": real, "faststream_default": default,
                    "faststream_max_workers_3": per_partition,
                    "ratio_vs_default": round(
                        mine["questions_per_s"] / default["questions_per_s"], 1),
                    "ratio_vs_max_workers_3": round(
                        mine["questions_per_s"] / per_partition["questions_per_s"], 1)},
        "target": {"questions_per_s_min": 100, "met": mine["questions_per_s"] >= 100
                   and mine["committed_equals_end"]},
    }
