"""Feedback that changes the routing prior and the good domains, and similar questions found
among all of a tenant's memories: on SQLite always, on PostgreSQL when configured."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.handlers.memory import prior_for
from tests.fakes import FixedClock
from tests.support.pg import answer_ready, feedback_given

QUESTION = "帮我看看未来 5 天的广州天气如何"


@pytest.fixture
async def store(database: tuple[str, dict[str, Any]]) -> AsyncIterator[SqlMemoryStore]:
    url, options = database
    async with await SqlMemoryStore.from_url(url, clock=FixedClock(), **options) as opened:
        yield opened


async def test_wrong_route_feedback_lowers_then_overturns_the_prior(
        store: SqlMemoryStore) -> None:
    for n in range(4):
        await store.record_answer(answer_ready(question_id=f"q-{n}", minutes=n))
    clean = await prior_for(store, "acme", QUESTION)
    await store.apply_feedback(feedback_given("wrong_route", question_id="q-0"))
    lowered = await prior_for(store, "acme", QUESTION)
    for n in range(1, 4):
        await store.apply_feedback(feedback_given("wrong_route", question_id=f"q-{n}"))
    overturned = await prior_for(store, "acme", QUESTION)

    assert clean.suggested_route_mode == lowered.suggested_route_mode == "external"
    assert lowered.confidence < clean.confidence
    assert overturned.suggested_route_mode == "internal"
    assert overturned.feedback == {"wrong_route": 4}


async def test_an_incorrect_answer_stops_its_domains_counting_as_good(
        store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready(question_id="q-1", urls=(
        "https://www.weather.com.cn/gz", "https://tianqi.example/gz")))
    await store.record_answer(answer_ready(question_id="q-2", minutes=1, urls=(
        "https://tianqi.example/gz2",)))
    before = await store.route_memory("acme", QUESTION)
    assert before is not None
    assert before["good_domains"] == ["tianqi.example", "weather.com.cn"]

    await store.apply_feedback(feedback_given("incorrect", question_id="q-2"))
    after = await store.route_memory("acme", QUESTION)
    assert after is not None and after["good_domains"] == ["weather.com.cn"]
    await store.apply_feedback(feedback_given("unhelpful", question_id="q-1", minutes=6))
    emptied = await store.route_memory("acme", QUESTION)
    assert emptied is not None and emptied["good_domains"] == []


async def test_the_prior_is_tenant_scoped(store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready(tenant="acme"))
    await store.apply_feedback(feedback_given("wrong_route", tenant="acme"))
    mine = await prior_for(store, "acme", QUESTION)
    theirs = await prior_for(store, "globex", QUESTION)
    assert mine.samples == 1 and mine.feedback == {"wrong_route": 1}
    assert (theirs.samples, theirs.suggested_route_mode, theirs.feedback) == (0, None, {})


async def test_an_old_question_is_found_among_many_newer_ones(store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready(question_id="old", question="深圳明天会下雨吗"))
    for n in range(600):  # more than any recent-window scan would read
        await store.record_answer(answer_ready(
            question_id=f"n{n}", question=f"第{n}号产品的公开价格是多少", minutes=n + 1))
    [found] = await store.similar("acme", "深圳明天下雨吗", limit=1)
    assert found.question == "深圳明天会下雨吗"
    assert await store.similar("globex", "深圳明天下雨吗") == []
