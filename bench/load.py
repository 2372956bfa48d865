"""Questions at a fixed arrival rate through a running pipeline (ours or the relay chain), and
where each one's time went: send -> ReplyRendered receipt, per hop from the Kafka record
timestamps (the producing client's clock at `send`, ms), per stage core from AnswerReady."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, ConsumerRecord

from bench import kafka
from bench.fixtures import question_id, route_decided
from bench.pipeline import ALL_STAGES
from bench.process import Worker
from bench.report import summary
from pmflow_gateway.schemas import Topics

HOPS = ("route_decided", "plan_created", "evidence_collected", "evidence_verified", "answer_ready",
        "reply_rendered")


@dataclass
class Rig:
    """Fresh topics, `workers` processes of ours (or of the relay chain) in one group per stage,
    and the harness's tail consumer; `hops` also tails every intermediate topic."""

    bootstrap: str
    relay: bool = False
    workers: int = 1
    partitions: int = 3
    hops: bool = True
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    sent_total: int = 0
    topics: Topics = field(init=False)
    _procs: list[Worker] = field(default_factory=list)
    _tail: AIOKafkaConsumer | None = None

    def __post_init__(self) -> None:
        self.topics = Topics(prefix=f"bench{self.run_id}.")

    async def __aenter__(self) -> Rig:
        await kafka.create_topics(self.bootstrap, self.topics, partitions=self.partitions)
        names = HOPS if self.hops else ("reply_rendered",)
        self._tail = await kafka.tail(self.bootstrap, [getattr(self.topics, h) for h in names])
        for _ in range(self.workers):
            self._procs.append(Worker(self.bootstrap, self.topics.prefix,
                                      stages=",".join(ALL_STAGES), relay=self.relay,
                                      probe_hops=self.hops and not self.relay))
        await asyncio.gather(*(w.start() for w in self._procs))
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await asyncio.gather(*(w.stop() for w in self._procs), return_exceptions=True)
        finally:
            if self._tail is not None:
                await self._tail.stop()
            await kafka.delete_topics(self.bootstrap, self.topics.all())

    async def probe(self) -> dict[str, Any]:
        """Inside our worker, per stage: fetched / queued / acked (see `bench.worker`)."""
        return {} if self.relay or not self.hops else (await self._procs[0].probe())["stages"]

    async def cpu_s(self) -> float:
        samples = await asyncio.gather(*(w.sample() for w in self._procs))
        return sum(s["cpu_s"] for s in samples)

    async def at_rate(self, rate: float, seconds: float, *, warmup_s: float = 0.0,
                      timeout_s: float = 30.0) -> dict[str, Any]:
        """Send `rate` questions/s for `seconds`; every one must be answered within
        `timeout_s` after the last send (else `kept_up` is false and the summary covers the
        ones that were)."""
        first, n = self.sent_total, int(rate * seconds)
        self.sent_total += n
        sent: dict[str, float] = {}
        received: dict[str, float] = {}
        stamps: dict[str, dict[str, int]] = defaultdict(dict)
        cores: dict[str, dict[str, float]] = {}
        names = {getattr(self.topics, h): h for h in HOPS}
        reply_topic = self.topics.reply_rendered

        def on_record(record: ConsumerRecord, now: float) -> None:
            qid = record.key.decode()
            if qid not in sent:  # a late answer from an earlier round
                return
            stamps[qid][names[record.topic]] = record.timestamp
            if record.topic == reply_topic:
                received[qid] = now
            elif record.topic == self.topics.answer_ready and not self.relay:
                cores[qid] = orjson.loads(record.value)["context"]["stage_timings_ms"]

        assert self._tail is not None
        sender = asyncio.create_task(kafka.produce_at_rate(
            self.bootstrap, self.topics.route_decided,
            [route_decided(self.run_id, first + i) for i in range(n)], rate, sent))
        kept_up = True
        try:
            await kafka.read_until(self._tail, lambda _: len(received) >= n,
                                   timeout_s=seconds + timeout_s, on_record=on_record)
        except TimeoutError:
            kept_up = False
        await sender
        measured = [q for q in (question_id(self.run_id, i)
                                for i in range(first + int(rate * warmup_s), first + n))
                    if q in received]
        return self._summarise(rate, n, kept_up, measured, sent, received, stamps, cores)

    async def settle(self, *, quiet_s: float = 1.0, timeout_s: float = 120.0) -> None:
        """Read until nothing has arrived for `quiet_s`: an earlier round's backlog must not
        weigh on the next one."""
        assert self._tail is not None
        deadline = time.monotonic() + timeout_s
        last = time.monotonic()
        while time.monotonic() - last < quiet_s and time.monotonic() < deadline:
            if await self._tail.getmany(timeout_ms=200):
                last = time.monotonic()

    def _summarise(self, rate: float, n: int, kept_up: bool, measured: list[str],
                   sent: dict[str, float], received: dict[str, float],
                   stamps: dict[str, dict[str, int]], cores: dict[str, dict[str, float]]
                   ) -> dict[str, Any]:
        out: dict[str, Any] = {"rate_per_s": rate, "questions": n, "answered": len(received),
                               "kept_up": kept_up}
        if not measured:
            return out
        out["end_to_end_ms"] = summary([(received[q] - sent[q]) * 1000 for q in measured], 2)
        if self.hops:
            # The harness's own share: reply written (its record timestamp) -> read here.
            out["harness_receipt_ms"] = summary(
                [received[q] * 1000 - stamps[q]["reply_rendered"] for q in measured], 1)
            out["hop_ms_from_record_timestamps"] = {
                f"{a}->{b}": summary([stamps[q][b] - stamps[q][a] for q in measured
                                      if a in stamps[q] and b in stamps[q]], 1)
                for a, b in itertools.pairwise(HOPS)}
        if cores:
            out["stage_core_ms"] = {s: summary([cores[q][s] for q in measured
                                                if q in cores and s in cores[q]])
                                    for s in ("plan", "evidence", "verify", "answer")}
        return out


def ratio(ours: float, base: float) -> float | None:
    return round(ours / base, 2) if base else None
