"""The transport's own floor: six raw aiokafka relays standing for the six stages.

    python -m bench.relay --bootstrap B --prefix P [--stages plan,evidence,...]

Each relay reads its stage's source topic in its stage's consumer group, validates every record
with the same pydantic model as that stage, and writes the event that stage would write (the
same bytes a real run produces, with this question's id) to the next topic, keyed by question
id; the memory relay writes nothing (the stage writes to a database). No stage logic, no spans,
no executor: what is left is decoding, producing and committing, the least any chain of six
Kafka stages in Python does. It speaks the same stdin/stdout protocol as `bench.worker`
(ready, sample, stop), so the scenarios drive it exactly like ours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import BaseModel

from bench.fixtures import gateway, question_id, route_decided
from bench.worker import run_on_configured_loop, sample_rusage
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.schemas import RouteDecided, Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.codec import encode
from pmflow_gateway.streams.stages import STAGES

TEMPLATE_RUN = "relaytpl"


@dataclass
class Relay:
    name: str
    source: str
    model: type[BaseModel]
    target: str | None
    template: bytes | None
    consumer: AIOKafkaConsumer
    counts: dict[str, int] = field(default_factory=lambda: {"processed": 0, "skipped": 0})


async def templates() -> dict[str, bytes]:
    """What each stage writes for one question, encoded as the stages encode it."""
    _, value = route_decided(TEMPLATE_RUN, 0)
    out = await ask_in_process(RouteDecided.model_validate_json(value), gateway())
    assert out.plan and out.evidence and out.verified and out.answer and out.reply
    return {"plan": encode(out.plan), "evidence": encode(out.evidence),
            "verify": encode(out.verified), "answer": encode(out.answer),
            "render": encode(out.reply)}


def targets(topics: Topics) -> dict[str, str | None]:
    return {"plan": topics.plan_created, "evidence": topics.evidence_collected,
            "verify": topics.evidence_verified, "answer": topics.answer_ready,
            "render": topics.reply_rendered, "memory": None}


async def relay_loop(relay: Relay, producer: AIOKafkaProducer, stop: asyncio.Event) -> None:
    placeholder = question_id(TEMPLATE_RUN, 0).encode()
    while not stop.is_set():
        batches = await relay.consumer.getmany(timeout_ms=100, max_records=500)
        sends = []
        for records in batches.values():
            for record in records:
                event = relay.model.model_validate_json(record.value or b"")
                qid = getattr(event, "question_id", "").encode()
                if relay.target is not None and relay.template is not None:
                    value = relay.template.replace(placeholder, qid)
                    sends.append(await producer.send(relay.target, value, key=record.key))
                relay.counts["processed"] += 1
        if sends:
            await asyncio.gather(*sends)
        if batches:
            await relay.consumer.commit({TopicPartition(tp.topic, tp.partition): rs[-1].offset + 1
                                         for tp, rs in batches.items()})


async def start_relays(bootstrap: str, topics: Topics, names: list[str]) -> list[Relay]:
    tpl = await templates()
    outs = targets(topics)
    relays = []
    for name in names:
        stage = STAGES[name]
        consumer = AIOKafkaConsumer(
            stage.source(topics), bootstrap_servers=bootstrap,
            group_id=f"{topics.prefix}gateway-{name}", enable_auto_commit=False,
            auto_offset_reset="earliest",
            # The same client setting as our stages: the floor of the transport as configured.
            fetch_max_wait_ms=Settings().kafka_fetch_max_wait_ms)
        await consumer.start()
        relays.append(Relay(name, stage.source(topics), stage.model, outs[name], tpl.get(name),
                            consumer))
    return relays


def emit(kind: str, data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"kind": kind, **data}) + "\n")
    sys.stdout.flush()


def sample(relays: list[Relay]) -> dict[str, Any]:
    return {**sample_rusage(), "counts": {r.name: dict(r.counts) for r in relays},
            "in_flight": {}, "spans_exported": None}


async def main(args: argparse.Namespace) -> None:
    topics = Topics(prefix=args.prefix)
    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, acks="all",
                                enable_idempotence=True, linger_ms=0,
                                max_batch_size=512 * 1024, max_request_size=2 * 1024 * 1024)
    await producer.start()
    relays = await start_relays(args.bootstrap, topics, args.stages.split(","))
    deadline = time.monotonic() + 60
    while not all(r.consumer.assignment() for r in relays):
        if time.monotonic() > deadline:
            raise SystemExit("relays got no partitions within 60 s")
        await asyncio.sleep(0.05)
    stop = asyncio.Event()
    loops = [asyncio.create_task(relay_loop(r, producer, stop)) for r in relays]
    emit("ready", sample(relays))
    loop = asyncio.get_running_loop()
    while True:
        command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if command == "sample":
            emit("sample", sample(relays))
        elif command in ("stop", ""):
            break
    final = sample(relays)
    stop.set()
    await asyncio.gather(*loops)
    for r in relays:
        await r.consumer.stop()
    await producer.stop()
    emit("stopped", final)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.relay")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--stages", default="plan,evidence,verify,answer,render,memory")
    run_on_configured_loop(main(parser.parse_args()))
