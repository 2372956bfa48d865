"""The memory store on SQLAlchemy 2 async: PostgreSQL (asyncpg) in production, SQLite
(aiosqlite) for one-machine use, through the same queries.

Every write is one transaction that first claims the event in `applied_events`; a redelivered
event finds its claim and changes nothing, so counts are never incremented twice. Concurrent
deliveries of one event meet at that primary key: PostgreSQL makes the second `INSERT ... ON
CONFLICT DO NOTHING` wait for the first transaction and then insert nothing; SQLite runs one
writer at a time (`BEGIN IMMEDIATE`). Rows that several transactions update (a QA record, a
route memory) are read `FOR UPDATE`, always the QA record before the memory, so concurrent
writers serialise without deadlocking.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Row, Table, event, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from pmflow_gateway.adapters.migrations import apply_migrations
from pmflow_gateway.adapters.store_schema import (
    RECORD_ROW_COLUMNS,
    answer_values,
    applied_events,
    memory_row,
    qa_records,
    query_route_memories,
    record_row,
    similar_question,
)
from pmflow_gateway.contract.memory_rules import (
    answer_is_late,
    count_answer,
    count_feedback,
    feedback_is_late,
    rank_good_domains,
)
from pmflow_gateway.contract.similarity import most_similar, question_key
from pmflow_gateway.ports import Clock, SimilarQuestion, UnknownQuestion
from pmflow_gateway.schemas import AnswerReady, FeedbackGiven
from pmflow_gateway.settings import Settings

# similar() ranks this many candidates from the trigram index by bigram Jaccard.
SIMILAR_CANDIDATES = 200
# The trigram index's own similarity below which a memory is not even a candidate.
TRIGRAM_THRESHOLD = 0.1
# A long question is looked up by its first trigrams only: enough to find its neighbours.
MAX_QUERY_TRIGRAMS = 64
# Below this bigram Jaccard a past question is noise, not a similar sample.
MIN_SIMILARITY = 0.2
# The good-domain recount reads at most this many recent answers to one question key.
GOOD_DOMAIN_SCAN_LIMIT = 50

_ANSWER, _FEEDBACK = "answer", "feedback"
_MEMORY_COLUMNS = ", ".join(column.name for column in query_route_memories.c)


class SqlMemoryStore:
    """`ports.MemoryStore` on a SQL database; every statement is scoped by tenant."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Clock | None = None,
        similar_candidates: int = SIMILAR_CANDIDATES,
        min_similarity: float = MIN_SIMILARITY,
    ) -> None:
        """Use `from_url` or `open_store`: they also bring the schema up to date."""
        self._engine = engine
        self._clock = clock
        self._candidates = similar_candidates
        self._min_similarity = min_similarity
        self._on_postgres = engine.dialect.name == "postgresql"

    @classmethod
    async def from_url(cls, url: str, *, clock: Clock | None = None,
                       **engine_options: Any) -> SqlMemoryStore:
        """A store on `url` with all migrations applied; `engine_options` go to the engine."""
        engine = create_engine(url, **engine_options)
        try:
            await apply_migrations(engine)
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine, clock=clock)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    async def aclose(self) -> None:
        await self._engine.dispose()

    async def __aenter__(self) -> SqlMemoryStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _insert(self, table: Table) -> postgresql.Insert | sqlite.Insert:
        """An INSERT that can say ON CONFLICT: both dialects spell it the same way."""
        return postgresql.insert(table) if self._on_postgres else sqlite.insert(table)

    # --- writes -------------------------------------------------------------------------

    async def record_answer(self, event: AnswerReady) -> bool:
        """Persist the answer once. False when this event was already applied, or when the
        question already holds a newer answer (an older event arriving late changes nothing)."""
        now = self._now()
        key = question_key(event.context.question)
        async with self._engine.begin() as conn:
            if not await self._claim(conn, event, _ANSWER, now):
                return False
            previous = await self._lock_record(conn, event.tenant_id, event.question_id)
            if previous is None:
                previous = await self._insert_record(conn, event, key, now)
            if previous is not None:
                if answer_is_late(record_row(previous), event.occurred_at):
                    return False
                await self._update_record(conn, event.tenant_id, event.question_id,
                                          **answer_values(event, key), updated_at=now)
            await self._count_answer(conn, event, key, previous, now)
            return True

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        """Write feedback onto the QA record and its route memory. False when this event was
        already applied or newer feedback is already there; `UnknownQuestion` when the tenant
        has no such question (nothing is written then, not even the claim)."""
        now = self._now()
        async with self._engine.begin() as conn:
            if not await self._claim(conn, event, _FEEDBACK, now):
                return False
            record = await self._lock_record(conn, event.tenant_id, event.question_id)
            if record is None:
                raise UnknownQuestion(
                    f"tenant {event.tenant_id!r} has no question {event.question_id!r}")
            if feedback_is_late(record_row(record), event.occurred_at):
                return False
            await self._update_record(
                conn, event.tenant_id, event.question_id, feedback_outcome=event.outcome,
                feedback_comment=event.comment, feedback_at=event.occurred_at,
                feedback_event_id=event.event_id, updated_at=now)
            await self._count_feedback(conn, event, record, now)
            return True

    async def _claim(self, conn: AsyncConnection, event: AnswerReady | FeedbackGiven, kind: str,
                     now: datetime) -> bool:
        """Whether this event is applied for the first time (its claim is then taken)."""
        claimed = await conn.execute(
            self._insert(applied_events)
            .values(tenant_id=event.tenant_id, kind=kind, event_id=event.event_id,
                    question_id=event.question_id, applied_at=now)
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

    async def _insert_record(self, conn: AsyncConnection, event: AnswerReady, key: str,
                             now: datetime) -> Row[Any] | None:
        """Insert the QA record; None when inserted, else the row another delivery of the same
        question (a different event id) inserted first, now locked."""
        inserted = await conn.execute(
            self._insert(qa_records)
            .values(tenant_id=event.tenant_id, question_id=event.question_id,
                    **answer_values(event, key), created_at=now, updated_at=now)
            .on_conflict_do_nothing(index_elements=list(qa_records.primary_key))
            .returning(qa_records.c.question_id)
        )
        if inserted.first() is not None:
            return None
        return await self._lock_record(conn, event.tenant_id, event.question_id)

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

    async def _count_answer(self, conn: AsyncConnection, event: AnswerReady, key: str,
                            previous: Row[Any] | None, now: datetime) -> None:
        sample = {"sample_question": event.context.question,
                  "route_mode": event.context.routing.route_mode,
                  "query_kind": str(event.plan.query_kind),
                  "last_question_id": event.question_id}
        memory = await self._lock_memory(conn, event.tenant_id, key, sample, now)
        counts = count_answer(memory_row(memory), None if previous is None
                              else record_row(previous), key=key, status=str(event.status))
        await self._update_memory(conn, event.tenant_id, key, now, **sample, **counts)

    async def _count_feedback(self, conn: AsyncConnection, event: FeedbackGiven,
                              record: Row[Any], now: datetime) -> None:
        seed = {"sample_question": record.question, "route_mode": record.routing_snapshot.get(
            "route_mode", "external"), "query_kind": record.plan.get("query_kind", "unknown"),
            "last_question_id": record.question_id}
        memory = await self._lock_memory(conn, event.tenant_id, record.question_key, seed, now)
        values = count_feedback(memory_row(memory), record_row(record),
                                outcome=event.outcome, at=event.occurred_at)
        await self._update_memory(conn, event.tenant_id, record.question_key, now, **values)

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
        key = question_key(question)
        async with self._engine.connect() as conn:
            if len(key) < 3:  # no trigram to look up: compare with the most recent
                rows = await self._recent(conn, tenant_id)
            elif self._on_postgres:
                rows = await self._postgres_candidates(conn, tenant_id, key)
            else:
                rows = await self._sqlite_candidates(conn, tenant_id, key)
        rows.sort(key=lambda row: (row.updated_at, row.question_key), reverse=True)
        by_key = {row.question_key: row for row in rows}
        best = most_similar(question, by_key, limit=limit, min_similarity=self._min_similarity)
        return [similar_question(by_key[scored.key], scored.similarity) for scored in best]

    async def _recent(self, conn: AsyncConnection, tenant_id: str) -> list[Row[Any]]:
        return list((await conn.execute(
            select(query_route_memories)
            .where(query_route_memories.c.tenant_id == tenant_id)
            .order_by(query_route_memories.c.updated_at.desc())
            .limit(self._candidates)
        )).all())

    async def _postgres_candidates(self, conn: AsyncConnection, tenant_id: str,
                                   key: str) -> list[Row[Any]]:
        # Loose on purpose: trigram similarity only preselects, bigram Jaccard decides.
        await conn.execute(text("SELECT set_config('pg_trgm.similarity_threshold', "
                                ":threshold, true)"), {"threshold": str(TRIGRAM_THRESHOLD)})
        return list((await conn.execute(
            text(f"SELECT {_MEMORY_COLUMNS} FROM query_route_memories "
                 "WHERE tenant_id = :tenant AND question_key OPERATOR(public.%) :key "
                 "ORDER BY public.similarity(question_key, :key) DESC LIMIT :n")
            .columns(*query_route_memories.c),
            {"tenant": tenant_id, "key": key, "n": self._candidates},
        )).all())

    async def _sqlite_candidates(self, conn: AsyncConnection, tenant_id: str,
                                 key: str) -> list[Row[Any]]:
        grams = list(dict.fromkeys(key[i:i + 3] for i in range(len(key) - 2)))
        match = " OR ".join('"' + gram.replace('"', '""') + '"'
                            for gram in grams[:MAX_QUERY_TRIGRAMS])
        columns = ", ".join(f"m.{c.name}" for c in query_route_memories.c)
        return list((await conn.execute(
            text(f"SELECT {columns} FROM query_route_memories_trgm AS f "
                 "JOIN query_route_memories AS m ON m.rowid = f.rowid "
                 "WHERE query_route_memories_trgm MATCH :match AND m.tenant_id = :tenant "
                 "ORDER BY f.rank LIMIT :n")
            .columns(*query_route_memories.c),
            {"match": match, "tenant": tenant_id, "n": self._candidates},
        )).all())

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
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(table).where(*conditions))).first()
        return dict(row._mapping) if row is not None else None

    def _now(self) -> datetime:
        return self._clock.now() if self._clock is not None else datetime.now(UTC)


def create_engine(url: str, **options: Any) -> AsyncEngine:
    """An async engine; on SQLite, one whose transactions really are transactions."""
    is_sqlite = url.startswith("sqlite")
    if is_sqlite:
        # Writers queue for the file lock instead of failing at once.
        options["connect_args"] = {"timeout": 30.0, **options.get("connect_args", {})}
    engine = create_async_engine(url, **options)
    if is_sqlite:
        _take_over_sqlite_transactions(engine)
    return engine


def _take_over_sqlite_transactions(engine: AsyncEngine) -> None:
    """The sqlite3 driver only BEGINs before DML, so reads and DDL would escape the
    transaction. SQLAlchemy emits BEGIN instead, IMMEDIATE so that the write lock is taken
    up front and two writers queue rather than deadlock on the upgrade from read to write."""

    @event.listens_for(engine.sync_engine, "connect")
    def _driver_leaves_transactions_alone(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine.sync_engine, "begin")
    def _begin_immediate(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def database_url(settings: Settings) -> str:
    """`PMFLOW_DATABASE_URL`, or a SQLite file under `PMFLOW_DATA_DIR` (created if missing)."""
    if settings.database_url:
        return settings.database_url
    data_dir = Path(settings.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{(data_dir / 'memory.sqlite3').resolve()}"


async def open_store(settings: Settings, *, clock: Clock | None = None) -> SqlMemoryStore:
    """The store the settings point at, its schema migrated; close it with `aclose()`."""
    return await SqlMemoryStore.from_url(database_url(settings), clock=clock)
