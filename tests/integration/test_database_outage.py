"""Nothing the memory and feedback stages read is lost while PostgreSQL is away: refused,
hung, or holding a table lock. The real broker, the real stages in a worker process, and a
TCP proxy between them and a database of the test's own.

Each run prints its numbers (answers and ratings sent during the outage, rows written after
it, records lost, dead letters).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import text
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.ext.asyncio import create_async_engine

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.schemas import AdapterAttempt, AnswerReady, DeadLettered, Topics
from pmflow_gateway.streams.app import ensure_topics
from tests.support.chaos import QUESTIONS, report, worker_env
from tests.support.kafka import collect, produce
from tests.support.pg import answer_ready, feedback_given, own_database
from tests.support.tcp_proxy import TcpProxy
from tests.support.workers import Worker

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

ANSWERS, RATINGS = 50, 10
T = TypeVar("T")


@dataclass
class Site:
    """A database of the test's own, the proxy in front of it, the topics of the run."""

    database: str  # reached directly, by the test
    proxy: TcpProxy  # the workers' way to it
    topics: Topics
    bootstrap: str
    logs: Path

    def worker(self, *stages: str, name: str = "worker", direct: bool = False,
               **env: str) -> Worker:
        """A worker of `stages` reaching the database through the proxy (or `direct`ly)."""
        database = self.database if direct else self.proxy.url(self.database)
        env = {**worker_env(self.bootstrap, self.topics, database), **env}
        return Worker(env, stages=stages, log=self.logs / f"{name}.log").start()


@pytest.fixture
async def site(kafka_bootstrap: str, postgres_url: str, topics: Topics,
               tmp_path: Path) -> AsyncIterator[Site]:
    async with own_database(postgres_url) as database:
        await (await SqlMemoryStore.from_url(database)).aclose()  # migrated before the counts
        await ensure_topics(kafka_bootstrap, topics)
        proxy = await TcpProxy.in_front_of(database).start()
        try:
            yield Site(database, proxy, topics, kafka_bootstrap, tmp_path)
        finally:
            await proxy.aclose()


def answers(tenant: str, ids: range, prefix: str = "q") -> list[tuple[bytes, bytes]]:
    return [(f"{prefix}-{i}".encode(), answer_ready(
        tenant=tenant, question_id=f"{prefix}-{i}",
        question=f"{QUESTIONS[i % len(QUESTIONS)]} #{i}").model_dump_json().encode())
        for i in ids]


def ratings(tenant: str, ids: range, prefix: str = "q") -> list[tuple[bytes, bytes]]:
    return [(f"{prefix}-{i}".encode(), feedback_given(
        "incorrect", tenant=tenant, question_id=f"{prefix}-{i}").model_dump_json().encode())
        for i in ids]


async def counts(database: str, tenant: str) -> tuple[int, int]:
    """(QA records, QA records carrying feedback) of the tenant."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            row = (await conn.execute(text(
                "select count(*), count(feedback_outcome) from qa_records where tenant_id = :t"),
                {"t": tenant})).one()
        return int(row[0]), int(row[1])
    finally:
        await engine.dispose()


async def watch(probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], *,
                worker: Worker, stall_s: float = 40) -> T:
    """`probe()` once `done` with it, or once its value has not moved for `stall_s` (a loaded
    machine is slow, not lossy)."""
    loop = asyncio.get_running_loop()
    last: T | None = None
    deadline = loop.time() + stall_s
    while True:
        assert worker.alive, worker.log.read_text()[-3000:]
        found = await probe()
        if found != last:
            last, deadline = found, loop.time() + stall_s
        if done(found) or loop.time() > deadline:
            return found
        await asyncio.sleep(0.5)


async def settled(database: str, tenant: str, *, expect: tuple[int, int], worker: Worker,
                  stall_s: float = 40) -> tuple[int, int]:
    """The tenant's (records, rated records) once they reach `expect`, or stop moving."""
    return await watch(lambda: counts(database, tenant),
                       lambda found: all(f >= e for f, e in zip(found, expect, strict=True)),
                       worker=worker, stall_s=stall_s)


async def dead_letters(site: Site) -> list[DeadLettered]:
    records = await collect(site.bootstrap, [site.topics.dead_letter], until=lambda rs: False,
                            timeout_s=3)
    return [DeadLettered.model_validate_json(r.value) for r in records]


async def stop(worker: Worker | None) -> None:
    """SIGTERM, waited for in a thread: the proxy lives in this event loop, and the worker
    closes its database connections through it."""
    if worker is not None and worker.alive:
        await asyncio.to_thread(worker.terminate)


Outage = Callable[[Site, float], Awaitable[None]]


async def refused(site: Site, seconds: float) -> None:
    await site.proxy.refuse()
    await asyncio.sleep(seconds)
    await site.proxy.restore()


async def hung(site: Site, seconds: float) -> None:
    site.proxy.hang()
    await asyncio.sleep(seconds)
    await site.proxy.restore()


async def table_locked(site: Site, seconds: float) -> None:
    engine = create_async_engine(site.database)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("LOCK TABLE qa_records IN ACCESS EXCLUSIVE MODE"))
            await asyncio.sleep(seconds)
    finally:
        await engine.dispose()


async def outage_run(site: Site, name: str, outage: Outage, seconds: float,
                     guarantee: str | None = None) -> None:
    """Ten answers stored; then, while the database is away, fifty more answers and a rating
    of each of the first ten; then the database returns. Nothing may be lost. `guarantee`
    None: the gateway's default (exactly-once)."""
    tenant = f"{name}{uuid.uuid4().hex[:6]}"
    worker = (site.worker("memory", "feedback", PMFLOW_PROCESSING_GUARANTEE=guarantee)
              if guarantee else site.worker("memory", "feedback"))
    try:
        await produce(site.bootstrap, site.topics.answer_ready, answers(tenant, range(RATINGS),
                                                                        "pre"))
        before = await settled(site.database, tenant, expect=(RATINGS, 0), worker=worker,
                               stall_s=120)
        assert before == (RATINGS, 0), worker.log.read_text()[-3000:]
        away = asyncio.create_task(outage(site, seconds))
        await asyncio.sleep(0.5)
        await produce(site.bootstrap, site.topics.answer_ready, answers(tenant, range(ANSWERS)))
        await produce(site.bootstrap, site.topics.feedback, ratings(tenant, range(RATINGS),
                                                                    "pre"))
        await away
        rows, rated = await settled(site.database, tenant, expect=(ANSWERS + RATINGS, RATINGS),
                                    worker=worker)
        letters = await dead_letters(site)
    finally:
        await stop(worker)
    report(f"postgres {name} {seconds:.0f}s", answers=ANSWERS, ratings=RATINGS,
           answers_lost=ANSWERS + RATINGS - rows, ratings_lost=RATINGS - rated,
           dead_letters=len(letters))
    assert (rows, rated) == (ANSWERS + RATINGS, RATINGS), worker.log.read_text()[-3000:]
    assert letters == []


@pytest.mark.parametrize("guarantee", [None, "at_least_once"])
async def test_refused_for_20_s_loses_nothing(site: Site, guarantee: str | None) -> None:
    await outage_run(site, "refused", refused, 20, guarantee)


async def test_hung_for_130_s_loses_nothing(site: Site) -> None:
    await outage_run(site, "hung", hung, 130)


async def test_table_locked_for_130_s_loses_nothing(site: Site) -> None:
    await outage_run(site, "locked", table_locked, 130)


async def test_ratings_that_overtake_their_answers_are_applied_when_the_answers_land(
        site: Site) -> None:
    """The memory stage lags: forty ratings reach the feedback stage before their answers are
    stored; each is applied once its answer lands."""
    tenant, n = f"early{uuid.uuid4().hex[:6]}", 40
    feedback = site.worker("feedback", name="feedback")
    memory: Worker | None = None
    try:
        await produce(site.bootstrap, site.topics.answer_ready, answers(tenant, range(n)))
        await produce(site.bootstrap, site.topics.feedback, ratings(tenant, range(n)))
        await asyncio.sleep(15)  # the memory stage is 15 s behind
        memory = site.worker("memory", name="memory")
        rows, rated = await settled(site.database, tenant, expect=(n, n), worker=memory)
        letters = await dead_letters(site)
    finally:
        for worker in (feedback, memory):
            await stop(worker)
    report("ratings first, memory 15 s behind", ratings=n, rows=rows,
           ratings_lost=n - rated, dead_letters=len(letters))
    assert (rows, rated) == (n, n)
    assert letters == []


def nul_answers(tenant: str) -> list[tuple[bytes, bytes]]:
    """One answer per text field PostgreSQL refused with a NUL in it."""
    def answer(i: int, **context: Any) -> AnswerReady:
        event = answer_ready(tenant=tenant, question_id=f"nul-{i}")
        return event.model_copy(update={"context": event.context.model_copy(update=context)})

    base = answer_ready(tenant=tenant, question_id="nul-0").context.routing
    profile = base.query_profile.model_copy(update={"referenced_objects": ["wea\x00ther"]})
    events = [
        answer(0, question="广州\x00天气"), answer(1, thread_id="t-\x0042"),
        answer(2, locale="zh\x00-CN"),
        answer(3, routing=base.model_copy(update={"query_profile": profile})),
        answer(4).model_copy(update={"attempts": [AdapterAttempt(
            adapter="mcp", server="s", outcome="error", error="server said \x00 no")]}),
    ]
    return [(e.question_id.encode(), e.model_dump_json().encode()) for e in events]


async def test_records_with_a_nul_in_any_text_field_are_stored(site: Site) -> None:
    tenant = f"nul{uuid.uuid4().hex[:6]}"
    records = nul_answers(tenant)
    rating = feedback_given("unhelpful", tenant=tenant, question_id="nul-0").model_copy(
        update={"comment": "bad\x00answer"})
    worker = site.worker("memory", "feedback")
    try:
        await produce(site.bootstrap, site.topics.answer_ready, records)
        await produce(site.bootstrap, site.topics.feedback,
                      [(b"nul-0", rating.model_dump_json().encode())])
        rows, rated = await settled(site.database, tenant, expect=(len(records), 1),
                                    worker=worker, stall_s=20)
        letters = await dead_letters(site)
    finally:
        await stop(worker)
    report("NUL in text fields", answers=len(records), ratings=1,
           answers_lost=len(records) - rows, ratings_lost=1 - rated, dead_letters=len(letters))
    assert (rows, rated) == (len(records), 1)
    assert letters == []


async def waiting_ratings(database: str) -> int | None:
    """Ratings kept for a record that has not landed (None: no such table, the code before)."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(text("select count(*) from pending_feedback"))
                        ).scalar_one())
    except ProgrammingError:
        return None
    finally:
        await engine.dispose()


async def test_ratings_for_questions_that_never_come_do_not_hold_back_real_ones(
        site: Site) -> None:
    """5,000 ratings for ids that never get a record, then ten real ones: each orphan is
    kept once (no retries, no dead letter), and the real ones are applied. How long the
    orphans wait and what becomes of them after: test_store_pending_feedback."""
    tenant, orphans = f"orph{uuid.uuid4().hex[:6]}", 5000
    worker = site.worker("memory", "feedback", direct=True)
    loop = asyncio.get_running_loop()
    try:
        await produce(site.bootstrap, site.topics.answer_ready, answers(tenant, range(10), "r"))
        assert await settled(site.database, tenant, expect=(10, 0), worker=worker,
                             stall_s=120) == (10, 0)
        await produce(site.bootstrap, site.topics.feedback,
                      ratings(tenant, range(orphans), "never") + ratings(tenant, range(10), "r"))
        sent = loop.time()

        async def rated_and_parked() -> tuple[int, int]:
            return ((await counts(site.database, tenant))[1],
                    await waiting_ratings(site.database) or 0)

        rated, parked = await watch(rated_and_parked, lambda found: found[0] == 10,
                                    worker=worker)
        real_after_s = loop.time() - sent
        letters = await dead_letters(site)
    finally:
        await stop(worker)
    report("5,000 ratings for unknown ids, then 10 real ones", real_lost=10 - rated,
           real_applied_after_s=round(real_after_s, 1), orphans_waiting=parked,
           dead_letters=len(letters))
    assert rated == 10 and letters == []
    assert parked == orphans  # every orphan kept, once
