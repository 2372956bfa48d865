"""The store's tables as SQLAlchemy Core objects, for building queries, and how their rows
map to events and to the memory rules' row snapshots.

The migrations under `adapters/migrations/` create these tables; this module only describes
them (a test checks the two agree). Column comments live in the SQL files.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Dialect, Integer, MetaData, Row, Table, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator

from pmflow_gateway.contract.memory_rules import MemoryRow, RecordRow
from pmflow_gateway.ports import SimilarQuestion
from pmflow_gateway.schemas import AnswerReady


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


def _tenant_rows(name: str, key: str, *columns: Column[Any]) -> Table:
    """A table of rows each tenant keeps apart, one per `key`, stamped when first written and
    when last changed."""
    return Table(name, metadata,
                 Column("tenant_id", Text, primary_key=True), Column(key, Text, primary_key=True),
                 *columns,
                 _required("created_at", UtcDateTime), _required("updated_at", UtcDateTime))


qa_records = _tenant_rows(
    "qa_records", "question_id",
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
)

query_route_memories = _tenant_rows(
    "query_route_memories", "question_key",
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

# The QA record columns the memory rules read (see `record_row`).
RECORD_ROW_COLUMNS = ("question_key", "status", "answered_at", "feedback_outcome",
                      "feedback_at", "sources_used")


def answer_values(event: AnswerReady, key: str) -> dict[str, Any]:
    """The QA record columns an AnswerReady sets (feedback columns are left alone)."""
    context = event.context

    def dump(models: list[Any]) -> list[Any]:
        return [model.model_dump(mode="json") for model in models]

    return {
        "question_key": key, "thread_id": context.thread_id, "question": context.question,
        "locale": context.locale, "status": str(event.status), "reason": event.reason,
        "answer": event.answer, "routing_snapshot": context.routing.model_dump(mode="json"),
        "plan": event.plan.model_dump(mode="json"),
        "planner": event.planner.model_dump(mode="json"),
        "verdict": event.verdict.model_dump(mode="json"),
        "citations": dump(event.citations), "sources_used": dump(event.sources_used),
        "attempts": dump(event.attempts), "stage_timings_ms": dict(context.stage_timings_ms),
        "composer": event.composer, "execution_id": event.execution_id,
        "answer_event_id": event.event_id, "answered_at": event.occurred_at,
    }


def record_row(row: Row[Any]) -> RecordRow:
    return RecordRow(question_key=row.question_key, status=row.status,
                     answered_at=row.answered_at, feedback_outcome=row.feedback_outcome,
                     feedback_at=row.feedback_at, sources_used=row.sources_used)


def memory_row(row: Row[Any]) -> MemoryRow:
    return MemoryRow(hit_count=row.hit_count, outcome_counts=row.outcome_counts,
                     feedback_counts=row.feedback_counts, feedback_at=row.feedback_at)


def similar_question(row: Row[Any], score: float) -> SimilarQuestion:
    return SimilarQuestion(
        question=row.sample_question, query_kind=row.query_kind, route_mode=row.route_mode,
        hit_count=row.hit_count, outcomes=dict(row.outcome_counts),
        feedback_counts=dict(row.feedback_counts), feedback_outcome=row.feedback_outcome,
        good_domains=list(row.good_domains), similarity=score)
