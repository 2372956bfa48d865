"""Versioned SQL migrations and the tiny runner that applies them at start-up.

Files are `NNNN_name.sql`, applied in version order, each version once; applied versions are
recorded in `schema_migrations`. A version that only one dialect can express comes as one
file per dialect, `NNNN_name.postgresql.sql` and `NNNN_name.sqlite.sql`. A run is one
transaction (PostgreSQL and SQLite both have transactional DDL), so a failed migration
leaves the schema as it was. Two processes starting at once are serialised: by an advisory
lock on PostgreSQL, by `BEGIN IMMEDIATE` on SQLite (see `adapters.store`). Never edit a
released file: add a new version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

_HERE = Path(__file__).parent
_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)(?:\.(postgresql|sqlite))?\.sql$")

# The only dialect differences the SQL files have: column types.
_TYPES = {
    "postgresql": {"__JSON__": "JSONB", "__TIMESTAMP__": "TIMESTAMPTZ"},
    "sqlite": {"__JSON__": "TEXT", "__TIMESTAMP__": "TEXT"},
}

# Any fixed 64-bit number works; it only has to be the same in every process of this app.
_PG_MIGRATION_LOCK = 0x706D_666C_6F77_0001

_LEDGER = {
    "postgresql": "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)",
    "sqlite": "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, applied_at TEXT NOT NULL)",
}


@dataclass(frozen=True, kw_only=True)
class Migration:
    version: int
    name: str
    sql: str
    dialect: str | None = None
    """The only dialect this file is for; None: every dialect."""

    def statements(self, dialect: str) -> list[str]:
        """The file's statements with the dialect's types filled in: a line ending in `;`
        ends a statement, except inside a trigger's body, which ends at `END;`."""
        if self.dialect not in (None, dialect):
            return []
        body = self.sql
        for token, sql_type in _TYPES[dialect].items():
            body = body.replace(token, sql_type)
        statements: list[str] = []
        current: list[str] = []
        for line in body.splitlines():
            if line.lstrip().startswith("--"):
                continue
            current.append(line)
            in_trigger = current[0].lstrip().upper().startswith("CREATE TRIGGER")
            ends = line.strip().upper() == "END;" if in_trigger else line.rstrip().endswith(";")
            if ends:
                statements.append("\n".join(current).strip().removesuffix(";").strip())
                current = []
        rest = "\n".join(current).strip()
        return [s for s in [*statements, rest] if s]


def load_migrations(directory: Path = _HERE) -> list[Migration]:
    """Every migration file, in version order; refuses gaps and duplicate versions."""
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise ValueError(f"migration file name must be NNNN_name.sql: {path.name}")
        found.append(Migration(version=int(match[1]), name=match[2], dialect=match[3],
                               sql=path.read_text(encoding="utf-8")))
    if not found:
        raise ValueError(f"no migrations found in {directory} (is the package data installed?)")
    versions = sorted({m.version for m in found})
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must run 1..n without gaps: {versions}")
    for version in versions:
        dialects = sorted(str(m.dialect) for m in found if m.version == version)
        if dialects not in (["None"], sorted(_TYPES)):
            raise ValueError(f"migration {version:04d} needs one file for every dialect "
                             f"or one per dialect ({', '.join(sorted(_TYPES))}): {dialects}")
    return found


async def applied_versions(conn: AsyncConnection) -> list[int]:
    rows = await conn.execute(text("SELECT version FROM schema_migrations ORDER BY version"))
    return [int(version) for (version,) in rows]


async def apply_migrations(
    engine: AsyncEngine, migrations: list[Migration] | None = None
) -> list[int]:
    """Bring the database up to the latest version; the versions this call applied."""
    dialect = engine.dialect.name
    if dialect not in _TYPES:
        raise ValueError(f"unsupported database dialect {dialect!r}: use postgresql or sqlite")
    wanted = load_migrations() if migrations is None else migrations
    async with engine.begin() as conn:
        if dialect == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                               {"key": _PG_MIGRATION_LOCK})
        await conn.execute(text(_LEDGER[dialect]))
        done = set(await applied_versions(conn))
        newly: list[int] = []
        for migration in wanted:
            if migration.version in done or migration.dialect not in (None, dialect):
                continue
            for statement in migration.statements(dialect):
                # Sent as written: no bind-parameter parsing of `:` inside the SQL files.
                await conn.exec_driver_sql(statement)
            await conn.execute(
                text("INSERT INTO schema_migrations (version, name, applied_at) "
                     "VALUES (:version, :name, :at)"),
                {"version": migration.version, "name": migration.name,
                 "at": _ledger_time(dialect)},
            )
            newly.append(migration.version)
        return newly


def _ledger_time(dialect: str) -> datetime | str:
    now = datetime.now(UTC)
    return now if dialect == "postgresql" else now.isoformat()
