"""The store's tables as SQLAlchemy Core objects, for building queries, and how their rows
map to events and to the memory rules' row snapshots.

The migrations under `adapters/migrations/` create these tables; this module only describes
them (a test checks the two agree). Column comments live in the SQL files.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Dialect, Integer, MetaData, Row, Table, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator

from pmflow_gateway.contract.memory_rules import MemoryRow, RecordRow
from pmflow_gateway.ports import SimilarQuestion
from pmflow_gateway.schemas import AnswerReady, RouteOutcomeReported


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


def storable_text(text: str) -> str:
    """`text` as every store can keep it, the same on PostgreSQL and SQLite: NUL removed
    (PostgreSQL's text and JSON cannot hold it, and it carries nothing a reader sees), lone
    surrogates (which no UTF-8 text can hold) replaced by U+FFFD; a surrogate pair becomes
    the character it spells."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def storable_json(value: Any) -> Any:
    """`value` with every string in it, keys included, made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(str(k)): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(v) for v in value]
    return value


class StorableText(TypeDecorator[str]):
    """TEXT whose every bound value, written or compared, is made storable first: a field
    that carries a NUL or a lone surrogate costs that character, never the row."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else storable_text(value)


class StorableJson(TypeDecorator[Any]):
    """JSON (JSONB on PostgreSQL) whose strings are made storable before it is written."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> Any:
        return dialect.type_descriptor(JSONB() if dialect.name == "postgresql" else JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return storable_json(value)


metadata = MetaData()


def _required(name: str, type_: Any) -> Column[Any]:
    return Column(name, type_, nullable=False)


def _tenant_rows(name: str, key: str, *columns: Column[Any]) -> Table:
    """A table of rows each tenant keeps apart, one per `key`, stamped when first written and
    when last changed."""
    return Table(name, metadata,
                 Column("tenant_id", StorableText, primary_key=True),
                 Column(key, StorableText, primary_key=True),
                 *columns,
                 _required("created_at", UtcDateTime), _required("updated_at", UtcDateTime))


qa_records = _tenant_rows(
    "qa_records", "question_id",
    _required("question_key", StorableText),
    Column("thread_id", StorableText),
    _required("question", StorableText),
    _required("locale", StorableText),
    _required("status", StorableText),
    Column("reason", StorableText),
    _required("answer", StorableText),
    _required("routing_snapshot", StorableJson),
    _required("plan", StorableJson),
    _required("planner", StorableJson),
    _required("verdict", StorableJson),
    _required("citations", StorableJson),
    _required("sources_used", StorableJson),
    _required("attempts", StorableJson),
    _required("stage_timings_ms", StorableJson),
    _required("composer", StorableText),
    Column("execution_id", StorableText),
    _required("answer_event_id", StorableText),
    _required("answered_at", UtcDateTime),
    Column("feedback_outcome", StorableText),
    Column("feedback_comment", StorableText),
    Column("feedback_at", UtcDateTime),
    Column("feedback_event_id", StorableText),
)

query_route_memories = _tenant_rows(
    "query_route_memories", "question_key",
    _required("sample_question", StorableText),
    _required("route_mode", StorableText),
    _required("query_kind", StorableText),
    _required("hit_count", Integer),
    _required("outcome_counts", StorableJson),
    _required("feedback_counts", StorableJson),
    Column("feedback_outcome", StorableText),
    Column("feedback_at", UtcDateTime),
    _required("good_domains", StorableJson),
    _required("last_question_id", StorableText),
)

applied_events = Table(
    "applied_events",
    metadata,
    Column("tenant_id", StorableText, primary_key=True),
    Column("kind", StorableText, primary_key=True),
    Column("event_id", StorableText, primary_key=True),
    _required("question_id", StorableText),
    _required("applied_at", UtcDateTime),
)

pending_feedback = Table(
    "pending_feedback",
    metadata,
    Column("tenant_id", StorableText, primary_key=True),
    Column("event_id", StorableText, primary_key=True),
    _required("question_id", StorableText),
    _required("outcome", StorableText),
    Column("comment", StorableText),
    _required("occurred_at", UtcDateTime),
    _required("received_at", UtcDateTime),
)

# The QA record columns the memory rules read (see `record_row`).
RECORD_ROW_COLUMNS = ("question_key", "status", "answered_at", "feedback_outcome",
                      "feedback_at", "sources_used")


def answer_values(event: AnswerReady) -> dict[str, Any]:
    """The QA record columns an AnswerReady sets but its question key (feedback columns are
    left alone)."""
    context = event.context

    def dump(models: list[Any]) -> list[Any]:
        return [model.model_dump(mode="json") for model in models]

    return {
        "thread_id": context.thread_id, "question": context.question,
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


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """One question's outcome as the store writes it: our answer, or one PMFlow reported."""

    kind: str  # the claim's kind in applied_events: "answer" or "outcome"
    tenant_id: str
    question_id: str
    event_id: str
    occurred_at: datetime
    question: str
    status: str
    route_mode: str
    query_kind: str
    values: dict[str, Any]  # the QA record's columns, but its question key

    def sample(self) -> dict[str, Any]:
        """The route memory's sample columns, from the latest question counted under a key."""
        return {"sample_question": self.question, "route_mode": self.route_mode,
                "query_kind": self.query_kind, "last_question_id": self.question_id}


def recorded_answer(event: AnswerReady) -> Recorded:
    context = event.context
    return Recorded(
        kind="answer", tenant_id=event.tenant_id, question_id=event.question_id,
        event_id=event.event_id, occurred_at=event.occurred_at, question=context.question,
        status=str(event.status), route_mode=context.routing.route_mode,
        query_kind=str(event.plan.query_kind), values=answer_values(event))


def recorded_outcome(event: RouteOutcomeReported) -> Recorded:
    """A question PMFlow answered itself: a QA record of its routing and outcome (no plan,
    evidence or sources of ours), so its feedback lands and its memory counts like ours."""
    return Recorded(
        kind="outcome", tenant_id=event.tenant_id, question_id=event.question_id,
        event_id=event.event_id, occurred_at=event.occurred_at, question=event.question,
        status=str(event.outcome), route_mode=event.route_mode, query_kind=event.query_kind,
        values={
            "thread_id": event.thread_id, "question": event.question, "locale": event.locale,
            "status": str(event.outcome), "reason": "reported by PMFlow", "answer": "",
            "routing_snapshot": event.routing().model_dump(mode="json"),
            "plan": {"query_kind": event.query_kind}, "planner": {"mode": "pmflow"},
            "verdict": {}, "citations": [], "sources_used": [], "attempts": [],
            "stage_timings_ms": {}, "composer": "pmflow", "execution_id": None,
            "answer_event_id": event.event_id, "answered_at": event.occurred_at})


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
