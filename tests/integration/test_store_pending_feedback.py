"""Ratings that arrive before the QA record they rate, on a real database (SQLite always,
PostgreSQL when configured): they wait, are applied when the record lands, stay with their
tenant, and are dropped as orphans once they have waited longer than the store's bound."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.adapters.store_schema import pending_feedback
from tests.fakes import FixedClock, InMemoryStore
from tests.support.pg import answer_ready, feedback_given

WAIT = timedelta(hours=1)


@pytest.fixture
async def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
async def store(database: tuple[str, dict[str, Any]],
                clock: FixedClock) -> AsyncIterator[SqlMemoryStore]:
    url, options = database
    async with await SqlMemoryStore.from_url(url, clock=clock, feedback_wait=WAIT,
                                             **options) as opened:
        yield opened


async def waiting(store: SqlMemoryStore) -> int:
    async with store.engine.connect() as conn:
        query = select(func.count()).select_from(pending_feedback)
        return int((await conn.execute(query)).scalar_one())


async def test_a_rating_that_overtakes_its_answer_is_applied_when_the_answer_lands(
        store: SqlMemoryStore) -> None:
    early = feedback_given("incorrect", question_id="q-early")
    assert await store.apply_feedback(early) is False
    assert await store.apply_feedback(early) is False  # a redelivery does not wait twice
    assert await waiting(store) == 1
    assert await store.qa_record("acme", "q-early") is None

    assert await store.record_answer(answer_ready(question_id="q-early")) is True
    record = await store.qa_record("acme", "q-early")
    assert record is not None
    assert (record["feedback_outcome"], record["feedback_event_id"]) == ("incorrect",
                                                                         early.event_id)
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None
    assert (memory["feedback_outcome"], memory["feedback_counts"]) == ("incorrect",
                                                                       {"incorrect": 1})
    assert memory["good_domains"] == []  # the rating took the answer's credit back
    assert await waiting(store) == 0
    assert await store.apply_feedback(early) is False  # applied once, ever


async def test_waiting_ratings_apply_in_the_order_they_were_given(
        store: SqlMemoryStore) -> None:
    later = feedback_given("helpful", question_id="q-2", minutes=9)
    earlier = feedback_given("wrong_route", question_id="q-2", minutes=5)
    for rating in (later, earlier):  # arriving out of order too
        assert await store.apply_feedback(rating) is False
    await store.record_answer(answer_ready(question_id="q-2"))
    record = await store.qa_record("acme", "q-2")
    assert record is not None and record["feedback_outcome"] == "helpful"
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None and memory["feedback_counts"] == {"helpful": 1}


async def test_a_rating_waits_for_its_own_tenants_record_only(store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready(tenant="acme"))
    assert await store.apply_feedback(feedback_given("incorrect", tenant="globex")) is False
    record = await store.qa_record("acme", "q-1")
    assert record is not None and record["feedback_outcome"] is None
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None and memory["feedback_counts"] == {}
    assert await waiting(store) == 1  # globex's, for a globex record that may still come


async def test_ratings_that_wait_longer_than_the_bound_are_dropped_as_orphans(
        store: SqlMemoryStore, clock: FixedClock) -> None:
    for i in range(3):
        await store.apply_feedback(feedback_given("stale", question_id=f"q-never-{i}"))
    clock.advance(WAIT.total_seconds() + 1)
    # A record that comes after its rating's wait does not get it.
    await store.record_answer(answer_ready(question_id="q-never-0"))
    record = await store.qa_record("acme", "q-never-0")
    assert record is not None and record["feedback_outcome"] is None
    assert await waiting(store) == 2
    # The next rating that has to wait sweeps the other orphans away.
    await store.apply_feedback(feedback_given("helpful", question_id="q-fresh"))
    assert await waiting(store) == 1  # only the fresh one


class Interleaving(SqlMemoryStore):
    """Holds a rating's transaction right after it found no record, until the answer's
    transaction has looked for waiting ratings (or two seconds passed): the moment where,
    unserialised, each would miss the other."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rating: asyncio.Task[bool] | None = None
        self.rating_looked, self.answer_looked = asyncio.Event(), asyncio.Event()

    async def _lock_record(self, conn: Any, tenant_id: str, question_id: str) -> Any:
        row = await super()._lock_record(conn, tenant_id, question_id)
        if row is None and asyncio.current_task() is self.rating:
            self.rating_looked.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self.answer_looked.wait()
        return row

    async def _apply_waiting(self, *args: Any) -> None:
        await super()._apply_waiting(*args)
        self.answer_looked.set()


async def test_an_answer_landing_while_its_rating_is_being_parked_still_gets_it(
        database: tuple[str, dict[str, Any]]) -> None:
    url, options = database
    async with await Interleaving.from_url(url, **options) as store:
        assert isinstance(store, Interleaving)
        store.rating = asyncio.create_task(
            store.apply_feedback(feedback_given("incorrect", question_id="q-race")))
        await store.rating_looked.wait()
        assert await store.record_answer(answer_ready(question_id="q-race")) is True
        await store.rating
        record = await store.qa_record("acme", "q-race")
        assert record is not None and record["feedback_outcome"] == "incorrect"
        assert await waiting(store) == 0


async def test_the_fake_store_keeps_waiting_ratings_the_same_way() -> None:
    fake = InMemoryStore()
    assert await fake.apply_feedback(feedback_given("incorrect", question_id="q-early")) is False
    await fake.record_answer(answer_ready(question_id="q-early"))
    assert fake.feedback_of("acme", "q-early") == "incorrect"
