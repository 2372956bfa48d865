"""The memory store on SQLAlchemy 2 async: PostgreSQL (asyncpg) in production, SQLite
(aiosqlite) for one-machine use, through the same queries.

Every write is one transaction that first claims the event in `applied_events`; a redelivered
event finds its claim and changes nothing, so counts are never incremented twice. Concurrent
deliveries of one event meet at that primary key: PostgreSQL makes the second `INSERT ... ON
CONFLICT DO NOTHING` wait for the first transaction and then insert nothing; SQLite runs one
writer at a time (`BEGIN IMMEDIATE`). Rows that several transactions update (a QA record, a
route memory) are read `FOR UPDATE`, always the QA record before the memory, so concurrent
writers serialise without deadlocking. The writes of one question (its answer, its ratings)
also take a transaction-scoped advisory lock on PostgreSQL: a rating that finds no record
waits in `pending_feedback`, and the answer that lands at the same moment must see it.

Every call is bounded by `timeout_s` and fails in the port's terms (`store_engine.answering`):
`Unavailable` while the database is away, `Unstorable` for a row it refuses for its content.
Every text it writes is made storable first (`store_schema.StorableText`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Row, Table, delete, select, text, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from pmflow_gateway.adapters.migrations import apply_migrations
from pmflow_gateway.adapters.store_engine import answering, create_engine, database_url
from pmflow_gateway.adapters.store_schema import (
    RECORD_ROW_COLUMNS,
    Recorded,
    applied_events,
    memory_row,
    pending_feedback,
    qa_records,
    query_route_memories,
    record_row,
    recorded_answer,
    recorded_outcome,
    similar_question,
    storable_text,
)
from pmflow_gateway.adapters.store_similar import candidates
from pmflow_gateway.contract.memory_rules import (
    answer_is_late,
    count_answer,
    count_feedback,
    feedback_is_late,
    rank_good_domains,
)
from pmflow_gateway.contract.similarity import most_similar, question_key
from pmflow_gateway.ports import Clock, SimilarQuestion
from pmflow_gateway.schemas import AnswerReady, FeedbackGiven, RouteOutcomeReported
from pmflow_gateway.settings import Settings

__all__ = ["SqlMemoryStore", "create_engine", "database_url", "open_store"]

log = logging.getLogger(__name__)

# similar() ranks this many candidates from the trigram index by bigram Jaccard.
SIMILAR_CANDIDATES = 200
# Below this bigram Jaccard a past question is noise, not a similar sample.
MIN_SIMILARITY = 0.2
# The good-domain recount reads at most this many recent answers to one question key.
GOOD_DOMAIN_SCAN_LIMIT = 50
# How long one call may wait for the database before it counts as away.
TIMEOUT_S = 10.0
# Calls that may use the database at once: fewer than the engine's connections (5 + 10
# overflow), so a call whose turn it is never queues for one. The turn is waited for without
# a limit: a queue in this process says nothing about the database.
CONCURRENT_CALLS = 10
# How long a rating waits for the QA record it rates before it is dropped as an orphan.
FEEDBACK_WAIT = timedelta(days=7)
# Orphans are swept while a rating is parked, at most this often and this many at a time.
ORPHAN_SWEEP_EVERY = timedelta(seconds=10)
ORPHAN_SWEEP = 5000

_ANSWER, _FEEDBACK = "answer", "feedback"


class SqlMemoryStore:
    """`ports.MemoryStore` on a SQL database; every statement is scoped by tenant."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Clock | None = None,
        similar_candidates: int = SIMILAR_CANDIDATES,
        min_similarity: float = MIN_SIMILARITY,
        timeout_s: float = TIMEOUT_S,
        feedback_wait: timedelta = FEEDBACK_WAIT,
    ) -> None:
        """Use `from_url` or `open_store`: they also bring the schema up to date."""
        self._engine = engine
        self._clock = clock
        self._candidates = similar_candidates
        self._min_similarity = min_similarity
        self._timeout_s = timeout_s
        self._feedback_wait = feedback_wait
        self._on_postgres = engine.dialect.name == "postgresql"
        self._turns = asyncio.Semaphore(CONCURRENT_CALLS)
        self._swept_at: datetime | None = None

    @classmethod
    async def from_url(cls, url: str, *, clock: Clock | None = None,
                       timeout_s: float = TIMEOUT_S, feedback_wait: timedelta = FEEDBACK_WAIT,
                       **engine_options: Any) -> SqlMemoryStore:
        """A store on `url` with all migrations applied; `engine_options` go to the engine.
        A database that cannot be reached raises `Unavailable` (no time limit: a migration
        may take long)."""
        engine = create_engine(url, **engine_options)
        try:
            async with answering(None):
                await apply_migrations(engine)
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine, clock=clock, timeout_s=timeout_s, feedback_wait=feedback_wait)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    async def aclose(self) -> None:
        await self._engine.dispose()

    async def __aenter__(self) -> SqlMemoryStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """This call's turn at the database, then its time limit (`answering`)."""
        async with self._turns, answering(self._timeout_s):
            yield

    def _insert(self, table: Table) -> postgresql.Insert | sqlite.Insert:
        """An INSERT that can say ON CONFLICT: both dialects spell it the same way."""
        return postgresql.insert(table) if self._on_postgres else sqlite.insert(table)

    # --- writes -------------------------------------------------------------------------

    async def record_answer(self, event: AnswerReady) -> bool:
        """Persist the answer once. False when this event was already applied, or when the
        question already holds a newer answer (an older event arriving late changes nothing).
        Ratings that waited for this record are applied with it, oldest first."""
        async with self._turn():
            return await self._record(recorded_answer(event), self._now())

    async def record_outcome(self, event: RouteOutcomeReported) -> bool:
        """Persist how a question PMFlow answered itself ended, under the same rules as an
        answer of ours: once, never over a newer one, counted in its route memory."""
        async with self._turn():
            return await self._record(recorded_outcome(event), self._now())

    async def _record(self, recorded: Recorded, now: datetime) -> bool:
        key = question_key(recorded.question)
        tenant_id, question_id = recorded.tenant_id, recorded.question_id
        async with self._engine.begin() as conn:
            await self._serialise(conn, tenant_id, question_id)
            if not await self._claim(conn, tenant_id, recorded.event_id, question_id,
                                     recorded.kind, now):
                return False
            previous = await self._lock_record(conn, tenant_id, question_id)
            if previous is None:
                previous = await self._insert_record(conn, recorded, key, now)
            if previous is not None:
                if answer_is_late(record_row(previous), recorded.occurred_at):
                    return False
                await self._update_record(conn, tenant_id, question_id, question_key=key,
                                          **recorded.values, updated_at=now)
            await self._count_answer(conn, recorded, key, previous, now)
            if previous is None:
                await self._apply_waiting(conn, tenant_id, question_id, now)
            return True

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        """Write feedback onto the QA record and its route memory. False when this event was
        already applied or newer feedback is already there, and when the tenant has no such
        record yet: the rating then waits in `pending_feedback` for the record to land.
        Ratings that waited longer than `feedback_wait` are dropped as orphans."""
        async with self._turn():
            return await self._apply_feedback(event, self._now())

    async def _apply_feedback(self, event: FeedbackGiven, now: datetime) -> bool:
        async with self._engine.begin() as conn:
            await self._serialise(conn, event.tenant_id, event.question_id)
            if not await self._claim(conn, event.tenant_id, event.event_id, event.question_id,
                                     _FEEDBACK, now):
                return False
            record = await self._lock_record(conn, event.tenant_id, event.question_id)
            if record is None:
                await conn.execute(self._insert(pending_feedback).values(
                    tenant_id=event.tenant_id, event_id=event.event_id,
                    question_id=event.question_id, outcome=event.outcome,
                    comment=event.comment, occurred_at=event.occurred_at, received_at=now))
                if self._swept_at is None or now - self._swept_at >= ORPHAN_SWEEP_EVERY:
                    self._swept_at = now
                    await self._drop_orphans(conn, now - self._feedback_wait)
                return False
            return await self._rate(conn, record, event_id=event.event_id,
                                    outcome=event.outcome, comment=event.comment,
                                    at=event.occurred_at, now=now)

    async def _rate(self, conn: AsyncConnection, record: Row[Any], *, event_id: str,
                    outcome: str, comment: str | None, at: datetime, now: datetime) -> bool:
        """Write one rating onto a locked QA record; False when newer feedback is there."""
        if feedback_is_late(record_row(record), at):
            return False
        await self._update_record(
            conn, record.tenant_id, record.question_id, feedback_outcome=outcome,
            feedback_comment=comment, feedback_at=at, feedback_event_id=event_id,
            updated_at=now)
        await self._count_feedback(conn, record, outcome, at, now)
        return True

    async def _apply_waiting(self, conn: AsyncConnection, tenant_id: str, question_id: str,
                             now: datetime) -> None:
        """Apply the ratings that arrived before this question's record, oldest first; one
        that waited longer than `feedback_wait` is an orphan, dropped unapplied."""
        waiting = (await conn.execute(
            delete(pending_feedback)
            .where(pending_feedback.c.tenant_id == tenant_id,
                   pending_feedback.c.question_id == question_id)
            .returning(*pending_feedback.c))).all()
        cutoff = now - self._feedback_wait
        if expired := [row for row in waiting if row.received_at < cutoff]:
            self._log_orphans(expired)
        for rating in sorted((row for row in waiting if row.received_at >= cutoff),
                             key=lambda row: (row.occurred_at, row.event_id)):
            record = await self._lock_record(conn, tenant_id, question_id)
            assert record is not None  # inserted by this transaction
            await self._rate(conn, record, event_id=rating.event_id, outcome=rating.outcome,
                             comment=rating.comment, at=rating.occurred_at, now=now)

    async def _drop_orphans(self, conn: AsyncConnection, before: datetime) -> None:
        """Delete ratings that waited since before `before` for a record that never came;
        rows another transaction holds are left for the next sweep (no one waits here).
        Swept while parking a rating, as orphans are only made there."""
        columns = (pending_feedback.c.tenant_id, pending_feedback.c.event_id)
        expired = (await conn.execute(
            select(*columns, pending_feedback.c.question_id)
            .where(pending_feedback.c.received_at < before)
            .order_by(pending_feedback.c.received_at).limit(ORPHAN_SWEEP)
            .with_for_update(skip_locked=True))).all()
        if expired:
            await conn.execute(delete(pending_feedback).where(
                tuple_(*columns).in_([(row.tenant_id, row.event_id) for row in expired])))
            self._log_orphans(expired)

    def _log_orphans(self, expired: Sequence[Any]) -> None:
        log.warning("dropped %d rating(s) whose QA record did not come within %s, e.g. %s",
                    len(expired), self._feedback_wait,
                    ", ".join(f"{r.tenant_id}/{r.question_id} ({r.event_id})"
                              for r in expired[:5]))

    async def _serialise(self, conn: AsyncConnection, tenant_id: str, question_id: str) -> None:
        """Let one transaction at a time write this question (SQLite already runs one
        writer at a time)."""
        if not self._on_postgres:
            return
        digest = hashlib.blake2b(f"{tenant_id}\x1f{question_id}".encode("utf-8", "replace"),
                                 digest_size=8).digest()
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                           {"key": int.from_bytes(digest, "big", signed=True)})

    async def _claim(self, conn: AsyncConnection, tenant_id: str, event_id: str,
                     question_id: str, kind: str, now: datetime) -> bool:
        """Whether this event is applied for the first time (its claim is then taken)."""
        claimed = await conn.execute(
            self._insert(applied_events)
            .values(tenant_id=tenant_id, kind=kind, event_id=event_id,
                    question_id=question_id, applied_at=now)
            .on_conflict_do_nothing(index_elements=list(applied_events.primary_key))
            .returning(applied_events.c.event_id)
        )
        return claimed.first() is not None

    async def _lock_record(self, conn: AsyncConnection, tenant_id: str,
                           question_id: str) -> Row[Any] | None:
        found = await conn.execute(
            select(qa_records)
            .where(qa_records.c.tenant_id == tenant_id, qa_records.c.question_id == question_id)
            .with_for_update()
        )
        return found.first()

    async def _update_record(self, conn: AsyncConnection, tenant_id: str, question_id: str,
                             **values: Any) -> None:
        await conn.execute(
            update(qa_records)
            .where(qa_records.c.tenant_id == tenant_id, qa_records.c.question_id == question_id)
            .values(**values))

    async def _insert_record(self, conn: AsyncConnection, recorded: Recorded, key: str,
                             now: datetime) -> Row[Any] | None:
        """Insert the QA record; None when inserted, else the row another delivery of the same
        question (a different event id) inserted first, now locked."""
        inserted = await conn.execute(
            self._insert(qa_records)
            .values(tenant_id=recorded.tenant_id, question_id=recorded.question_id,
                    question_key=key, **recorded.values, created_at=now, updated_at=now)
            .on_conflict_do_nothing(index_elements=list(qa_records.primary_key))
            .returning(qa_records.c.question_id)
        )
        if inserted.first() is not None:
            return None
        return await self._lock_record(conn, recorded.tenant_id, recorded.question_id)

    async def _lock_memory(self, conn: AsyncConnection, tenant_id: str, key: str,
                           seed: dict[str, Any], now: datetime) -> Row[Any]:
        """The memory row of the key, created from `seed` if new, locked for this transaction."""
        await conn.execute(
            self._insert(query_route_memories)
            .values(tenant_id=tenant_id, question_key=key, hit_count=0, outcome_counts={},
                    feedback_counts={}, good_domains=[], created_at=now, updated_at=now, **seed)
            .on_conflict_do_nothing(index_elements=list(query_route_memories.primary_key))
        )
        found = await conn.execute(
            select(query_route_memories)
            .where(query_route_memories.c.tenant_id == tenant_id,
                   query_route_memories.c.question_key == key)
            .with_for_update()
        )
        return found.one()

    async def _count_answer(self, conn: AsyncConnection, recorded: Recorded, key: str,
                            previous: Row[Any] | None, now: datetime) -> None:
        sample = recorded.sample()
        memory = await self._lock_memory(conn, recorded.tenant_id, key, sample, now)
        counts = count_answer(memory_row(memory), None if previous is None
                              else record_row(previous), key=key, status=recorded.status)
        await self._update_memory(conn, recorded.tenant_id, key, now, **sample, **counts)

    async def _count_feedback(self, conn: AsyncConnection, record: Row[Any], outcome: str,
                              at: datetime, now: datetime) -> None:
        seed = {"sample_question": record.question, "route_mode": record.routing_snapshot.get(
            "route_mode", "external"), "query_kind": record.plan.get("query_kind", "unknown"),
            "last_question_id": record.question_id}
        memory = await self._lock_memory(conn, record.tenant_id, record.question_key, seed, now)
        values = count_feedback(memory_row(memory), record_row(record), outcome=outcome, at=at)
        await self._update_memory(conn, record.tenant_id, record.question_key, now, **values)

    async def _update_memory(self, conn: AsyncConnection, tenant_id: str, key: str,
                             now: datetime, **values: Any) -> None:
        """Write the memory's new values and recount its good domains from the QA records
        (recounting, not patching, keeps them right whichever way feedback moved)."""
        answers = await conn.execute(
            select(*(qa_records.c[name] for name in RECORD_ROW_COLUMNS))
            .where(qa_records.c.tenant_id == tenant_id, qa_records.c.question_key == key,
                   qa_records.c.status == "answered")
            .order_by(qa_records.c.answered_at.desc())
            .limit(GOOD_DOMAIN_SCAN_LIMIT)
        )
        good_domains = rank_good_domains(record_row(row) for row in answers)
        await conn.execute(
            update(query_route_memories)
            .where(query_route_memories.c.tenant_id == tenant_id,
                   query_route_memories.c.question_key == key)
            .values(**values, good_domains=good_domains, updated_at=now)
        )

    # --- reads --------------------------------------------------------------------------

    async def similar(
        self, tenant_id: str, question: str, *, limit: int = 5
    ) -> list[SimilarQuestion]:
        """The tenant's past questions most like this one, best first (ties: most recently
        updated first). The database's trigram index finds candidates among all of the
        tenant's memories; they are then ranked by the same similarity everywhere."""
        # The text queries below bind plain strings: cleaned here as the columns clean theirs.
        key, tenant_id = storable_text(question_key(question)), storable_text(tenant_id)
        async with self._turn(), self._engine.connect() as conn:
            rows = await candidates(conn, tenant_id, key, limit=self._candidates)
        rows.sort(key=lambda row: (row.updated_at, row.question_key), reverse=True)
        by_key = {row.question_key: row for row in rows}
        best = most_similar(question, by_key, limit=limit, min_similarity=self._min_similarity)
        return [similar_question(by_key[scored.key], scored.similarity) for scored in best]

    async def qa_record(self, tenant_id: str, question_id: str) -> dict[str, Any] | None:
        """The tenant's QA record of one question, as stored."""
        return await self._read_one(qa_records, tenant_id, question_id=question_id)

    async def route_memory(self, tenant_id: str, question: str) -> dict[str, Any] | None:
        """The tenant's route memory of a question (any spelling with the same key)."""
        return await self._read_one(query_route_memories, tenant_id,
                                    question_key=question_key(question))

    async def _read_one(self, table: Table, tenant_id: str, **match: str) -> dict[str, Any] | None:
        conditions = [table.c.tenant_id == tenant_id]
        conditions += [table.c[name] == value for name, value in match.items()]
        async with self._turn(), self._engine.connect() as conn:
            row = (await conn.execute(select(table).where(*conditions))).first()
        return dict(row._mapping) if row is not None else None

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)


async def open_store(settings: Settings, *, clock: Clock | None = None) -> SqlMemoryStore:
    """The store the settings point at, its schema migrated; close it with `aclose()`."""
    return await SqlMemoryStore.from_url(
        database_url(settings), clock=clock, timeout_s=settings.database_timeout_s,
        feedback_wait=timedelta(seconds=settings.feedback_wait_s))
