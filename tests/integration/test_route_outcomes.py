"""PMFlow's own route outcomes through the real broker into PostgreSQL: a question it answered
internally, published to the route-outcome topic, is recorded under the same memory rules as
ours and changes what `route_prior` says of a similar question."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import orjson
import pytest

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.contract.memory_rules import EXTERNAL_ONLY
from pmflow_gateway.handlers.memory import prior_for
from pmflow_gateway.schemas import Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.support.kafka import collect, produce
from tests.support.processors import running

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]

ASKED = "未来5天广州的天气如何"
# What PMFlow answered from its own data: its route gateway sent them internal.
INTERNAL = ["广州未来5天天气如何", "未来5天广州天气怎么样", "看看广州未来5天的天气"]


@pytest.fixture
async def processor(kafka_bootstrap: str, postgres_url: str,
                    topics: Topics) -> AsyncIterator[tuple[Processor, SqlMemoryStore]]:
    store = await SqlMemoryStore.from_url(postgres_url)
    async with running(kafka_bootstrap, topics, store=store) as proc:
        yield proc, store


def outcome(tenant: str, n: int, question: str) -> tuple[bytes, bytes]:
    question_id = f"pmflow-internal-{n}"
    return question_id.encode(), orjson.dumps({
        "event_id": f"outcome-{tenant}-{n}", "question_id": question_id, "tenant_id": tenant,
        "occurred_at": "2026-12-02T09:00:00+00:00", "schema_version": 1,
        "question": question, "locale": "zh-CN", "route_mode": "internal",
        "effective_source_policy": "internal_only", "decision_origin": "probe",
        "reply_contract": "internal_answer", "outcome": "answered", "query_kind": "status"})


async def until_recorded(store: SqlMemoryStore, tenant: str, question_ids: list[str]) -> None:
    for _ in range(150):
        found = [await store.qa_record(tenant, q) for q in question_ids]
        if all(found):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not recorded: {question_ids}")


async def test_an_internal_outcome_changes_the_route_prior_of_a_similar_question(
        processor: tuple[Processor, SqlMemoryStore], kafka_bootstrap: str) -> None:
    proc, store = processor
    tenant = f"ro{uuid.uuid4().hex[:6]}"
    ours = {**ROUTE_DECIDED, "question_id": "q-ours", "tenant_id": tenant}
    await produce(kafka_bootstrap, proc.topics.route_decided, [(b"q-ours", orjson.dumps(ours))])
    await until_recorded(store, tenant, ["q-ours"])
    before = await prior_for(store, tenant, ASKED)
    assert before.suggested_route_mode == "external" and before.samples == 1
    assert before.basis.endswith(EXTERNAL_ONLY) and not before.knows_internal

    reported = [outcome(tenant, n, q) for n, q in enumerate(INTERNAL)]
    await produce(kafka_bootstrap, proc.topics.route_outcome, [*reported, reported[0]])
    await until_recorded(store, tenant, [f"pmflow-internal-{n}" for n in range(len(INTERNAL))])
    after = await prior_for(store, tenant, ASKED)
    assert after.suggested_route_mode == "internal", after
    assert after.samples == 4 and after.knows_internal and EXTERNAL_ONLY not in after.basis
    assert after.outcomes == {"answered": 4}
    memory = await store.route_memory(tenant, INTERNAL[0])
    assert memory is not None and memory["route_mode"] == "internal"
    assert memory["hit_count"] == 1  # the redelivered report counted once
    record = await store.qa_record(tenant, "pmflow-internal-0")
    assert record is not None and record["routing_snapshot"]["route_mode"] == "internal"
    assert await collect(kafka_bootstrap, [proc.topics.dead_letter], until=lambda rs: False,
                         timeout_s=1) == []


async def test_feedback_on_an_internal_outcome_lands_like_feedback_on_ours(
        processor: tuple[Processor, SqlMemoryStore], kafka_bootstrap: str) -> None:
    proc, store = processor
    tenant = f"ro{uuid.uuid4().hex[:6]}"
    await produce(kafka_bootstrap, proc.topics.route_outcome, [outcome(tenant, 0, INTERNAL[0])])
    await until_recorded(store, tenant, ["pmflow-internal-0"])
    rating = {"event_id": str(uuid.uuid4()), "question_id": "pmflow-internal-0",
              "tenant_id": tenant, "occurred_at": "2026-12-02T09:05:00+00:00",
              "schema_version": 1, "outcome": "wrong_route"}
    await produce(kafka_bootstrap, proc.topics.feedback,
                  [(b"pmflow-internal-0", orjson.dumps(rating))])
    for _ in range(100):
        prior = await prior_for(store, tenant, ASKED)
        if prior.feedback:
            break
        await asyncio.sleep(0.1)
    # an internal answer rated wrong_route votes for the other side
    assert prior.feedback == {"wrong_route": 1} and prior.suggested_route_mode == "uncertain"
