"""What the store tests need: a database (a SQLite file always; PostgreSQL when the
`postgres_url` fixture provides one, each test in a fresh schema of its own) and events to
write into it, built through the real pydantic models.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    Citation,
    ExternalQueryPlan,
    FeedbackGiven,
    PlannerInfo,
    QueryKind,
    QuestionContext,
    RoutingSnapshot,
    SourceUsed,
    Verdict,
    stage_event_id,
)

# Parametrise a fixture with these to run a test on both databases.
STORE_BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

BASE_TIME = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


@asynccontextmanager
async def empty_database(request: pytest.FixtureRequest, backend: str,
                         tmp_path: Path) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(url, engine options) of an empty database; PostgreSQL comes from the `postgres_url`
    fixture (which skips, or fails, when there is none)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}", {}
        return
    url: str = request.getfixturevalue("postgres_url")
    # A schema per test gives every test an empty database without CREATE DATABASE's cost.
    schema = f"store_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(url)
    try:
        async with admin.begin() as conn:
            await conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        yield url, {"connect_args": {"server_settings": {"search_path": schema}}}
    finally:
        async with admin.begin() as conn:
            await conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.dispose()


def answer_ready(
    *,
    tenant: str = "acme",
    question_id: str = "q-1",
    question: str = "帮我看看未来 5 天的广州天气如何",
    status: AnswerStatus = AnswerStatus.answered,
    urls: tuple[str, ...] = ("https://www.weather.com.cn/guangzhou", "https://tianqi.example/gz"),
    query_kind: QueryKind = QueryKind.weather,
    minutes: int = 0,
    event_id: str | None = None,
) -> AnswerReady:
    """An AnswerReady as the verify+compose stage emits it; `minutes` after BASE_TIME."""
    at = BASE_TIME + timedelta(minutes=minutes)
    answered = status is AnswerStatus.answered
    sources = [SourceUsed(n=i, title=f"来源 {i}", site=url.split("/")[2], url=url)
               for i, url in enumerate(urls, start=1)] if answered else []
    return AnswerReady(
        event_id=event_id or stage_event_id(tenant, question_id, "answer"),
        question_id=question_id, tenant_id=tenant, occurred_at=at,
        context=QuestionContext(
            question=question, locale="zh-CN", thread_id="t-42",
            routing=RoutingSnapshot(route_mode="external", effective_source_policy="external_only",
                                    decision_origin="probe", reply_contract="external_realtime"),
            deadline_at=at + timedelta(seconds=20),
            stage_timings_ms={"plan": 3.0, "evidence": 420.0, "answer": 5.0},
        ),
        status=status,
        answer="广州未来 5 天多云转小雨 [1]" if answered else "证据不足",
        citations=[Citation(n=s.n, target_url=s.url, title=s.title) for s in sources],
        sources_used=sources,
        execution_id=f"exec-{question_id}",
        plan=ExternalQueryPlan(query_kind=query_kind, topic=question, search_queries=[question]),
        planner=PlannerInfo(mode="rules"),
        verdict=Verdict(passed=answered, kept=len(sources)),
    )


def feedback_given(
    outcome: str = "helpful",
    *,
    tenant: str = "acme",
    question_id: str = "q-1",
    minutes: int = 5,
    event_id: str | None = None,
) -> FeedbackGiven:
    return FeedbackGiven.model_validate({
        "event_id": event_id or f"fb-{question_id}-{outcome}-{minutes}",
        "question_id": question_id, "tenant_id": tenant,
        "occurred_at": BASE_TIME + timedelta(minutes=minutes),
        "outcome": outcome, "comment": f"{outcome} comment",
    })


@asynccontextmanager
async def own_database(postgres_url: str) -> AsyncIterator[str]:
    """The URL of a database made for one test and dropped after it: a test that locks tables
    or cuts connections must not touch a database other tests (or other people) use."""
    name = f"pmflow_own_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(postgres_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield str(make_url(postgres_url).set(database=name).render_as_string(hide_password=False))
    finally:
        async with admin.connect() as conn:
            await conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.dispose()
