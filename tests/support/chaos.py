"""The chaos tests' questions, reply reader and database counts, shared by both delivery modes."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from pmflow_gateway.schemas import ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.support.kafka import collect
from tests.support.workers import Worker

QUESTIONS = ["帮我看看未来 5 天的广州天气如何", "What's the weather in London tomorrow?",
             "英伟达最新财报怎么样", "latest news about OpenAI", "今天上证指数收盘多少"]


def routes(tenant: str, n: int) -> list[tuple[bytes, bytes]]:
    return [(f"{tenant}-{i}".encode(), orjson.dumps({
        **ROUTE_DECIDED, "event_id": str(uuid.uuid4()), "question_id": f"{tenant}-{i}",
        "tenant_id": tenant, "question": QUESTIONS[i % len(QUESTIONS)]})) for i in range(n)]


class Replies:
    """Reads the reply topic in the background; keeps every record per question."""

    def __init__(self, bootstrap: str, topic: str, *,
                 isolation_level: str = "read_uncommitted") -> None:
        self.by_question: dict[bytes, list[ConsumerRecord]] = defaultdict(list)
        self.poll_errors: list[str] = []
        self._consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap,
                                          auto_offset_reset="earliest", enable_auto_commit=False,
                                          isolation_level=isolation_level,
                                          request_timeout_ms=10_000, retry_backoff_ms=500)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Replies:
        await self._consumer.start()
        self._task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        """Read until cancelled. A poll that fails (the broker restarting) is tried again, as
        any consumer loop would: a reader that died here would pass for lost replies."""
        while True:
            try:
                batches = await self._consumer.getmany(timeout_ms=200)
            except KafkaError as exc:
                self.poll_errors.append(repr(exc))
                await asyncio.sleep(0.5)
                continue
            for records in batches.values():
                for r in records:
                    self.by_question[r.key].append(r)

    def _check_reading(self) -> None:
        assert self._task is not None
        if self._task.done():
            raise AssertionError("the reply reader stopped") from self._task.exception()

    async def wait_for(self, keys: set[bytes], timeout_s: float,
                       worker: Worker | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not keys <= set(self.by_question) and loop.time() < deadline:
            assert worker is None or worker.alive, f"worker died: {worker.log.read_text()[-3000:]}"
            self._check_reading()
            await asyncio.sleep(0.25)

    async def wait_for_count(self, count: int, timeout_s: float, worker: Worker) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.by_question) < count and loop.time() < deadline:
            assert worker.alive, f"worker died: {worker.log.read_text()[-3000:]}"
            self._check_reading()
            await asyncio.sleep(0.1)

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        # The reader's own shutdown is not under test: on a loaded machine, or right after the
        # broker-restart test, closing its fetcher can time out after every reply was read, and
        # aiokafka then lets the cancel of its own retry sleep out of `stop()`. It runs as its
        # own task, so whatever it raises stays there.
        stopping = asyncio.ensure_future(self._consumer.stop())
        await asyncio.wait({stopping}, timeout=30)
        if stopping.done() and not stopping.cancelled():
            stopping.exception()  # retrieved, not raised

    def one_content_per_event_id(self) -> bool:
        """No event id names two contents (anything but the moment a reply was made)."""
        contents: dict[str, set[bytes]] = defaultdict(set)
        for records in self.by_question.values():
            for r in records:
                reply = ReplyRendered.model_validate_json(r.value)
                contents[reply.event_id].add(orjson.dumps(
                    reply.model_dump(mode="json", exclude={"occurred_at"})))
        return all(len(c) == 1 for c in contents.values())

    def missing(self, keys: set[bytes]) -> set[bytes]:
        return keys - set(self.by_question)

    @property
    def duplicates(self) -> int:
        return sum(len(rs) - 1 for rs in self.by_question.values())


async def qa_rows(database_url: str, tenant: str, *, expect: int,
                  stall_s: float = 60) -> tuple[int, int]:
    """QA rows of the tenant (all, distinct questions), once the memory writer (which runs
    beside the renderer, so may still be busy when the last reply is out) has written `expect`,
    or has written nothing new for `stall_s` (a loaded machine is slow, not lossy)."""
    engine = create_async_engine(database_url)
    loop = asyncio.get_running_loop()
    last, deadline = -1, loop.time() + stall_s
    try:
        while True:
            async with engine.connect() as conn:
                row = (await conn.execute(text(
                    "select count(*), count(distinct question_id) from qa_records "
                    "where tenant_id = :t"), {"t": tenant})).one()
            if int(row[0]) > last:
                last, deadline = int(row[0]), loop.time() + stall_s
            if int(row[0]) >= expect or loop.time() > deadline:
                return int(row[0]), int(row[1])
            await asyncio.sleep(0.5)
    finally:
        await engine.dispose()


def worker_env(bootstrap: str, topics: Topics, postgres_url: str,
               guarantee: str | None = None) -> dict[str, str]:
    """A worker's environment; `guarantee` None: the gateway's default (exactly-once)."""
    env = {"PMFLOW_KAFKA_BOOTSTRAP": bootstrap, "PMFLOW_TOPIC_PREFIX": topics.prefix,
           "PMFLOW_DATABASE_URL": postgres_url, "OTEL_EXPORTER_OTLP_ENDPOINT": ""}
    if guarantee is not None:
        env["PMFLOW_PROCESSING_GUARANTEE"] = guarantee
    return env


def report(name: str, **numbers: object) -> None:
    print(f"\nchaos {name}: " + ", ".join(f"{k}={v}" for k, v in numbers.items()))


def warnings(log: Path, last: int = 60) -> str:
    """The worker log's warnings and errors, the last `last` of them."""
    lines = [line for line in log.read_text().splitlines()
             if '"level":"WARNING"' in line or '"level":"ERROR"' in line]
    return "\n".join(lines[-last:])


def check_run(name: str, replies: Replies, *, n: int, rows: int, distinct: int, log: Path,
              exactly_once: bool = False, **numbers: int) -> None:
    """Prints the run's numbers, then holds it to the promise: every question answered and
    written once; a reply seen twice never names two contents with one id (at least once) or
    is never seen twice (exactly once)."""
    lost = n - len(replies.by_question)
    report(name, questions=n, **numbers, replies=len(replies.by_question),
           duplicates=replies.duplicates, rows=rows, lost=lost)
    assert lost == 0, log.read_text()[-3000:]
    if exactly_once:
        assert replies.duplicates == 0, warnings(log)
    else:
        assert replies.one_content_per_event_id()
    assert rows == distinct == n


async def committed_and_ends(bootstrap: str,
                             group: str) -> tuple[dict[TopicPartition, int],
                                                  dict[TopicPartition, int]]:
    """The group's committed offsets and the end offsets of the same partitions."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        committed = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(list(committed))
    finally:
        await consumer.stop()
    return {tp: meta.offset for tp, meta in committed.items()}, ends


async def lost_where(bootstrap: str, topic: str, missing: set[bytes],
                     groups: Sequence[str] = ()) -> str:
    """For a run that lost replies: whether a fresh reader of the whole topic finds them
    (committed, or written but not committed), by partition, so a stuck reader and a lost
    output tell apart."""
    if not missing:
        return "nothing missing"
    found: dict[str, Counter[int]] = {}
    for level in ("read_committed", "read_uncommitted"):
        records = await collect(bootstrap, [topic], isolation_level=level, timeout_s=20,
                                until=lambda rs: False)
        found[level] = Counter(r.partition for r in records if r.key in missing)
    lags = {}
    for group in groups:
        committed, ends = await committed_and_ends(bootstrap, group)
        lags[group] = {f"{tp.topic}-{tp.partition}": (o, ends[tp]) for tp, o in committed.items()
                       if ends[tp] - o > 1}  # the end counts the last commit's marker
    return (f"{len(missing)} missing (e.g. {sorted(missing)[:5]}); a fresh reader finds "
            f"{dict(found['read_committed'])} committed and "
            f"{dict(found['read_uncommitted'])} written, by partition; groups with records "
            f"left (committed, end): {lags}")
