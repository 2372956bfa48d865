"""The store's tables as SQLAlchemy Core objects, for building queries.

The migrations under `adapters/migrations/` create these tables; this module only describes
them (a test checks the two agree). Column comments live in the SQL files.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Dialect, Integer, MetaData, Table, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every dialect: SQLite keeps no offset, so it is stored as UTC
    and put back on read."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


Json: Any = JSON().with_variant(JSONB(), "postgresql")

metadata = MetaData()


def _required(name: str, type_: Any) -> Column[Any]:
    return Column(name, type_, nullable=False)


qa_records = Table(
    "qa_records",
    metadata,
    Column("tenant_id", Text, primary_key=True),
    Column("question_id", Text, primary_key=True),
    _required("question_key", Text),
    Column("thread_id", Text),
    _required("question", Text),
    _required("locale", Text),
    _required("status", Text),
    Column("reason", Text),
    _required("answer", Text),
    _required("routing_snapshot", Json),
    _required("plan", Json),
    _required("planner", Json),
    _required("verdict", Json),
    _required("citations", Json),
    _required("sources_used", Json),
    _required("attempts", Json),
    _required("stage_timings_ms", Json),
    _required("composer", Text),
    Column("execution_id", Text),
    _required("answer_event_id", Text),
    _required("answered_at", UtcDateTime),
    Column("feedback_outcome", Text),
    Column("feedback_comment", Text),
    Column("feedback_at", UtcDateTime),
    Column("feedback_event_id", Text),
    _required("created_at", UtcDateTime),
    _required("updated_at", UtcDateTime),
)

query_route_memories = Table(
    "query_route_memories",
    metadata,
    Column("tenant_id", Text, primary_key=True),
    Column("question_key", Text, primary_key=True),
    _required("sample_question", Text),
    _required("route_mode", Text),
    _required("query_kind", Text),
    _required("hit_count", Integer),
    _required("outcome_counts", Json),
    _required("feedback_counts", Json),
    Column("feedback_outcome", Text),
    Column("feedback_at", UtcDateTime),
    _required("good_domains", Json),
    _required("last_question_id", Text),
    _required("created_at", UtcDateTime),
    _required("updated_at", UtcDateTime),
)

applied_events = Table(
    "applied_events",
    metadata,
    Column("tenant_id", Text, primary_key=True),
    Column("kind", Text, primary_key=True),
    Column("event_id", Text, primary_key=True),
    _required("question_id", Text),
    _required("applied_at", UtcDateTime),
)
