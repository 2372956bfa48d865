"""The feedback loop through the real broker into PostgreSQL: a rated answer gets its
feedback written back; feedback about another tenant's or a not (yet) known question waits
for its own tenant's record, changes nothing else, and is not dead-lettered."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import orjson
import pytest
from sqlalchemy import func, select

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.adapters.store_schema import pending_feedback
from pmflow_gateway.schemas import Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.support.kafka import collect, produce
from tests.support.processors import running

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]


@pytest.fixture
async def processor(kafka_bootstrap: str, postgres_url: str,
                    topics: Topics) -> AsyncIterator[tuple[Processor, SqlMemoryStore]]:
    store = await SqlMemoryStore.from_url(postgres_url)
    async with running(kafka_bootstrap, topics, store=store) as proc:
        yield proc, store


def feedback(question_id: str, tenant: str, outcome: str) -> bytes:
    return orjson.dumps({"event_id": str(uuid.uuid4()), "question_id": question_id,
                         "tenant_id": tenant, "occurred_at": "2026-12-02T09:00:00+00:00",
                         "schema_version": 1, "outcome": outcome, "comment": "test"})


async def test_feedback_round_trip_and_refusals(
        processor: tuple[Processor, SqlMemoryStore], kafka_bootstrap: str) -> None:
    proc, store = processor
    tenant, question_id = f"fb{uuid.uuid4().hex[:6]}", f"q-{uuid.uuid4().hex[:8]}"
    other = f"other-{tenant}"  # unique: the database outlives the test run
    route = {**ROUTE_DECIDED, "question_id": question_id, "tenant_id": tenant}
    await produce(kafka_bootstrap, proc.topics.route_decided,
                  [(question_id.encode(), orjson.dumps(route))])
    for _ in range(100):
        if await store.qa_record(tenant, question_id) is not None:
            break
        await asyncio.sleep(0.1)
    await produce(kafka_bootstrap, proc.topics.feedback, [
        (question_id.encode(), feedback(question_id, tenant, "helpful")),
        (question_id.encode(), feedback(question_id, other, "incorrect")),
        (b"q-unknown", feedback("q-unknown", tenant, "stale")),
    ])
    for _ in range(100):
        if await waiting(store, tenant, other) == 2:
            break
        await asyncio.sleep(0.1)
    assert await waiting(store, tenant, other) == 2
    assert await collect(kafka_bootstrap, [proc.topics.dead_letter], until=lambda rs: False,
                         timeout_s=2) == []
    record = await store.qa_record(tenant, question_id)
    assert record is not None and record["feedback_outcome"] == "helpful"
    memory = await store.route_memory(tenant, ROUTE_DECIDED["question"])  # type: ignore[arg-type]
    assert memory is not None and memory["feedback_outcome"] == "helpful"
    assert await store.qa_record(other, question_id) is None


async def waiting(store: SqlMemoryStore, *tenants: str) -> int:
    """Ratings of these tenants kept until their question's record lands."""
    async with store.engine.connect() as conn:
        return int((await conn.execute(
            select(func.count()).select_from(pending_feedback)
            .where(pending_feedback.c.tenant_id.in_(tenants)))).scalar_one())
