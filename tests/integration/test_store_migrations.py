"""The migration runner on a real database: empty, existing, partly migrated, raced."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from pmflow_gateway.adapters.migrations import (
    applied_versions,
    apply_migrations,
    load_migrations,
)
from pmflow_gateway.adapters.store import SqlMemoryStore, create_engine
from pmflow_gateway.adapters.store_schema import metadata
from tests.support.pg import answer_ready

LATEST = max(m.version for m in load_migrations())


@pytest.fixture
async def engine(database: tuple[str, dict[str, Any]]) -> AsyncIterator[AsyncEngine]:
    url, options = database
    created = create_engine(url, **options)
    yield created
    await created.dispose()


async def versions(engine: AsyncEngine) -> list[int]:
    async with engine.connect() as conn:
        return await applied_versions(conn)


def describe(conn: AsyncConnection) -> Any:
    def read(sync_conn: Any) -> dict[str, Any]:
        inspector = inspect(sync_conn)
        tables = set(inspector.get_table_names())
        known = [name for name in metadata.tables if name in tables]  # as far as migrated
        return {
            "tables": tables,
            "columns": {name: [c["name"] for c in inspector.get_columns(name)]
                        for name in known},
            "primary_keys": {name: inspector.get_pk_constraint(name)["constrained_columns"]
                             for name in known},
            "indexes": {i["name"] for name in known for i in inspector.get_indexes(name)},
        }
    return conn.run_sync(read)


async def test_an_empty_database_gets_every_version_once(engine: AsyncEngine) -> None:
    assert await apply_migrations(engine) == list(range(1, LATEST + 1))
    assert await apply_migrations(engine) == []
    assert await versions(engine) == list(range(1, LATEST + 1))


async def test_the_migrated_schema_is_the_one_the_store_queries(engine: AsyncEngine) -> None:
    await apply_migrations(engine)
    async with engine.connect() as conn:
        found = await describe(conn)

    # SQLite keeps its full-text index in tables of its own, named after the index.
    tables = {t for t in found["tables"] if not t.startswith("query_route_memories_trgm")}
    assert tables == {*metadata.tables, "schema_migrations"}
    for name, table in metadata.tables.items():
        assert found["columns"][name] == [column.name for column in table.columns]
        assert found["primary_keys"][name] == [column.name for column in table.primary_key]
    assert {"ix_query_route_memories_recent", "ix_qa_records_key"} <= found["indexes"]
    if engine.dialect.name == "postgresql":  # one trigram index, led by the tenant
        assert "ix_query_route_memories_tenant_trgm" in found["indexes"]
        assert "ix_query_route_memories_trgm" not in found["indexes"]


async def test_version_one_database_is_brought_to_latest(engine: AsyncEngine) -> None:
    assert await apply_migrations(engine, load_migrations()[:1]) == [1]
    async with engine.connect() as conn:
        assert "ix_qa_records_key" not in (await describe(conn))["indexes"]

    assert await apply_migrations(engine) == list(range(2, LATEST + 1))
    assert await versions(engine) == list(range(1, LATEST + 1))


async def test_reopening_an_existing_database_keeps_its_data(
    database: tuple[str, dict[str, Any]],
) -> None:
    url, options = database
    async with await SqlMemoryStore.from_url(url, **options) as first:
        assert await first.record_answer(answer_ready()) is True
    async with await SqlMemoryStore.from_url(url, **options) as again:
        assert await apply_migrations(again.engine) == []
        assert await again.record_answer(answer_ready()) is False
        memory = await again.route_memory("acme", answer_ready().context.question)
        assert memory is not None and memory["hit_count"] == 1


async def test_processes_starting_together_apply_each_version_once(
    database: tuple[str, dict[str, Any]],
) -> None:
    url, options = database
    engines = [create_engine(url, **options) for _ in range(3)]
    try:
        applied = await asyncio.gather(*(apply_migrations(e) for e in engines))
        assert sorted(v for run in applied for v in run) == list(range(1, LATEST + 1))
        assert await versions(engines[0]) == list(range(1, LATEST + 1))
    finally:
        for each in engines:
            await each.dispose()


def test_migration_files_must_be_numbered_without_gaps(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no migrations"):
        load_migrations(tmp_path)
    (tmp_path / "0001_init.sql").write_text("CREATE TABLE a (x INTEGER);")
    (tmp_path / "0003_later.sql").write_text("CREATE TABLE b (x INTEGER);")
    with pytest.raises(ValueError, match="without gaps"):
        load_migrations(tmp_path)
    (tmp_path / "0002_middle.postgresql.sql").write_text("CREATE TABLE c (x INTEGER);")
    with pytest.raises(ValueError, match="every dialect"):
        load_migrations(tmp_path)
    (tmp_path / "0002_middle.sqlite.sql").write_text("CREATE TABLE c (x INTEGER);")
    assert [m.version for m in load_migrations(tmp_path)] == [1, 2, 2, 3]
    (tmp_path / "3_bad.sql").write_text("")
    with pytest.raises(ValueError, match=r"NNNN_name\.sql"):
        load_migrations(tmp_path)


def test_statements_get_the_dialects_types() -> None:
    [init] = load_migrations()[:1]
    postgres = " ".join(init.statements("postgresql"))
    sqlite = " ".join(init.statements("sqlite"))
    assert "JSONB" in postgres and "TIMESTAMPTZ" in postgres and "__" not in postgres
    assert "JSONB" not in sqlite and "__" not in sqlite
    assert len(init.statements("sqlite")) == 3


def test_a_trigger_body_stays_one_statement_and_dialect_files_apply_to_theirs() -> None:
    [trigrams] = [m for m in load_migrations()
                  if m.dialect == "sqlite" and m.name == "question_trigrams"]
    statements = trigrams.statements("sqlite")
    triggers = [s for s in statements if s.startswith("CREATE TRIGGER")]
    assert len(triggers) == 2 and all(t.endswith("END") for t in triggers)
    assert trigrams.statements("postgresql") == []
