"""The store's engine and its failures: how a SQL database is opened (PostgreSQL through
asyncpg, SQLite through aiosqlite), and which of its errors mean "away, try again later"
(`ports.Unavailable`) and which "this row can never be stored" (`ports.Unstorable`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext import asyncio as sqlalchemy_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine

from pmflow_gateway.ports import Unavailable, Unstorable
from pmflow_gateway.settings import Settings

DATABASE = "database"

# SQLSTATE classes that speak of the row, not of the server: data exception (a value the
# column cannot hold), integrity constraint violation, program limit exceeded (a key too
# long to index). Every other error of the database can go away: a connection lost or
# refused, a lock or statement timeout, a serialization failure, a server shutting down,
# too many connections, even a missing table or grant an operator will fix.
CONTENT_SQLSTATE_CLASSES = ("22", "23", "54")


def create_engine(url: str, **options: Any) -> AsyncEngine:
    """An async engine; on SQLite, one whose transactions really are transactions."""
    is_sqlite = url.startswith("sqlite")
    if is_sqlite:
        # Writers queue for the file lock instead of failing at once.
        options["connect_args"] = {"timeout": 30.0, **options.get("connect_args", {})}
    # Looked up at call time: the SQLAlchemy instrumentation, installed with tracing after
    # this module was imported, replaces the function there to trace every new engine.
    engine = sqlalchemy_asyncio.create_async_engine(url, **options)
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


@asynccontextmanager
async def answering(timeout_s: float | None) -> AsyncIterator[None]:
    """Run a unit of database work within `timeout_s` (None: no limit), its failures in the
    port's terms: a database that does not answer in time is away (a hung link or a held
    lock looks the same from here); an error about the row is `Unstorable`; any other
    database error is `Unavailable`. Errors that are not the database's (a bug) pass
    through unchanged."""
    try:
        async with asyncio.timeout(timeout_s):
            yield
    except TimeoutError as exc:
        raise Unavailable(DATABASE, f"no answer within {timeout_s:g} s") from exc
    except UnicodeError as exc:  # text no database encoding can hold
        raise Unstorable(_reason(exc)) from exc
    except (sa_exc.DBAPIError, sqlite3.Error, OSError, sa_exc.TimeoutError) as exc:
        reason = _reason(exc)
        if is_about_content(exc):
            raise Unstorable(reason) from exc
        raise Unavailable(DATABASE, reason) from exc


def is_about_content(exc: BaseException) -> bool:
    """Whether the database refused the row itself (no retry can store it)."""
    origin = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    sqlstate = getattr(origin, "sqlstate", None)
    if isinstance(sqlstate, str):
        return sqlstate[:2] in CONTENT_SQLSTATE_CLASSES
    return isinstance(origin, sqlite3.DataError | sqlite3.IntegrityError)


def _reason(exc: BaseException) -> str:
    origin = exc.orig if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None else exc
    first_line = (str(origin).strip().splitlines() or [""])[0]
    return f"{type(origin).__name__}: {first_line[:300]}".rstrip(": ")
