"""The memory store on a real database: SQLite always, PostgreSQL when configured."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from pmflow_gateway.adapters.store import SqlMemoryStore, open_store
from pmflow_gateway.adapters.store_schema import applied_events, qa_records
from pmflow_gateway.handlers.memory import preferred_domain_hints, remember_answer
from pmflow_gateway.schemas import AnswerStatus
from pmflow_gateway.settings import Settings
from tests.fakes import FixedClock
from tests.support.pg import answer_ready, feedback_given


@pytest.fixture
async def store(database: tuple[str, dict[str, Any]]) -> AsyncIterator[SqlMemoryStore]:
    url, options = database
    async with await SqlMemoryStore.from_url(url, clock=FixedClock(), **options) as opened:
        yield opened


async def count_rows(store: SqlMemoryStore, table: Any, tenant: str = "acme") -> int:
    async with store.engine.connect() as conn:
        query = select(func.count()).select_from(table).where(table.c.tenant_id == tenant)
        return int((await conn.execute(query)).scalar_one())


async def test_an_answer_is_recorded_with_all_the_seed_asks_for(store: SqlMemoryStore) -> None:
    event = answer_ready()
    assert await remember_answer(event, store=store) is True

    record = await store.qa_record("acme", "q-1")
    assert record is not None
    assert record["status"] == "answered"
    assert record["routing_snapshot"]["route_mode"] == "external"
    assert [c["n"] for c in record["citations"]] == [1, 2]
    assert record["sources_used"][0]["url"] == "https://www.weather.com.cn/guangzhou"
    assert record["attempts"] == []
    assert record["stage_timings_ms"]["evidence"] == 420.0
    assert record["plan"]["query_kind"] == "weather"
    assert record["answer_event_id"] == event.event_id
    assert record["execution_id"] == "exec-q-1"
    assert record["answered_at"] == event.occurred_at
    assert record["feedback_outcome"] is None

    memory = await store.route_memory("acme", "帮我看看未来5天的广州天气如何？")
    assert memory is not None
    assert memory["hit_count"] == 1
    assert memory["outcome_counts"] == {"answered": 1}
    assert memory["good_domains"] == ["weather.com.cn", "tianqi.example"]
    assert (memory["route_mode"], memory["query_kind"]) == ("external", "weather")


async def test_redelivering_an_answer_three_times_changes_nothing(store: SqlMemoryStore) -> None:
    event = answer_ready()
    assert [await store.record_answer(event) for _ in range(3)] == [True, False, False]

    assert await count_rows(store, qa_records) == 1
    assert await count_rows(store, applied_events) == 1
    memory = await store.route_memory("acme", event.context.question)
    assert memory is not None
    assert (memory["hit_count"], memory["outcome_counts"]) == (1, {"answered": 1})


async def test_concurrent_duplicate_deliveries_write_one_row(
    store: SqlMemoryStore, database: tuple[str, dict[str, Any]]
) -> None:
    # A second engine plays the second consumer process that got the same message.
    url, options = database
    async with await SqlMemoryStore.from_url(url, **options) as other_process:
        event = answer_ready()
        results = await asyncio.gather(
            *(target.record_answer(event) for target in [store, other_process] * 4))

    assert sorted(results) == [False] * 7 + [True]
    assert await count_rows(store, qa_records) == 1
    memory = await store.route_memory("acme", event.context.question)
    assert memory is not None
    assert (memory["hit_count"], memory["outcome_counts"]) == (1, {"answered": 1})


async def test_concurrent_questions_with_one_key_are_each_counted(store: SqlMemoryStore) -> None:
    spellings = ["帮我看看未来 5 天的广州天气如何", "帮我看看未来5天的广州天气如何?",
                 "帮我看看 未来5天的广州天气如何！"]
    events = [answer_ready(question_id=f"q-{i}", question=q) for i, q in enumerate(spellings)]
    assert await asyncio.gather(*(store.record_answer(e) for e in events)) == [True] * 3

    memory = await store.route_memory("acme", spellings[0])
    assert memory is not None
    assert (memory["hit_count"], memory["outcome_counts"]) == (3, {"answered": 3})


async def test_racing_answers_to_one_question_leave_the_newest(store: SqlMemoryStore) -> None:
    older = answer_ready(event_id="answer-a", status=AnswerStatus.freshness_guard)
    newer = answer_ready(event_id="answer-b", minutes=1)
    results = await asyncio.gather(store.record_answer(older), store.record_answer(newer))

    assert results[1] is True
    assert await count_rows(store, qa_records) == 1
    record = await store.qa_record("acme", "q-1")
    assert record is not None and record["answer_event_id"] == "answer-b"
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None
    assert (memory["hit_count"], memory["outcome_counts"]) == (1, {"answered": 1})


async def test_a_newer_answer_to_the_same_question_moves_its_outcome(store: SqlMemoryStore) -> None:
    assert await store.record_answer(answer_ready(status=AnswerStatus.freshness_guard))
    assert await store.record_answer(answer_ready(event_id="answer-retry", minutes=1))
    late_old = answer_ready(event_id="answer-old", status=AnswerStatus.failed, minutes=-1)
    assert await store.record_answer(late_old) is False

    record = await store.qa_record("acme", "q-1")
    assert record is not None
    assert (record["status"], record["answer_event_id"]) == ("answered", "answer-retry")
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None
    assert (memory["hit_count"], memory["outcome_counts"]) == (1, {"answered": 1})


async def test_feedback_round_trip(store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready())
    helpful = feedback_given("helpful", minutes=5)
    assert await store.apply_feedback(helpful) is True
    assert await store.apply_feedback(helpful) is False  # redelivery

    record = await store.qa_record("acme", "q-1")
    assert record is not None
    assert record["feedback_outcome"] == "helpful"
    assert record["feedback_comment"] == "helpful comment"
    assert record["feedback_at"] == helpful.occurred_at
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None
    assert (memory["feedback_outcome"], memory["feedback_counts"]) == ("helpful", {"helpful": 1})
    assert memory["good_domains"] == ["weather.com.cn", "tianqi.example"]

    # The user changes their mind: the vote moves and the domains stop counting as good.
    assert await store.apply_feedback(feedback_given("incorrect", minutes=9)) is True
    assert await store.apply_feedback(feedback_given("helpful", minutes=7)) is False  # older
    memory = await store.route_memory("acme", record["question"])
    assert memory is not None
    assert memory["feedback_outcome"] == "incorrect"
    assert memory["feedback_counts"] == {"incorrect": 1}
    assert memory["good_domains"] == []
    record = await store.qa_record("acme", "q-1")
    assert record is not None and record["feedback_outcome"] == "incorrect"


async def test_tenants_never_see_or_change_each_others_memories(store: SqlMemoryStore) -> None:
    # Same question id and even the same event id (a producer that ignores tenants):
    # still two tenants' separate answers.
    acme = answer_ready(tenant="acme", urls=("https://acme-weather.example/gz",))
    globex = answer_ready(tenant="globex", status=AnswerStatus.freshness_guard,
                          event_id=acme.event_id)
    assert await store.record_answer(acme) is True
    assert await store.record_answer(globex) is True
    assert await store.apply_feedback(feedback_given("wrong_route", tenant="globex")) is True

    acme_record = await store.qa_record("acme", "q-1")
    assert acme_record is not None
    assert (acme_record["status"], acme_record["feedback_outcome"]) == ("answered", None)
    acme_memory = await store.route_memory("acme", acme.context.question)
    globex_memory = await store.route_memory("globex", acme.context.question)
    assert acme_memory is not None and globex_memory is not None
    assert acme_memory["outcome_counts"] == {"answered": 1}
    assert acme_memory["feedback_outcome"] is None
    assert globex_memory["outcome_counts"] == {"freshness_guard": 1}
    assert globex_memory["feedback_outcome"] == "wrong_route"

    [acme_similar] = await store.similar("acme", acme.context.question)
    assert acme_similar.good_domains == ["acme-weather.example"]
    [globex_similar] = await store.similar("globex", acme.context.question)
    assert globex_similar.good_domains == []
    assert await store.similar("initech", acme.context.question) == []
    assert await store.qa_record("initech", "q-1") is None


async def test_similar_returns_the_closest_questions_first(store: SqlMemoryStore) -> None:
    questions = {
        "q-gz": "帮我看看未来 5 天的广州天气如何",
        "q-sz": "帮我看看未来 5 天的深圳天气如何",
        "q-sz-today": "深圳今天天气怎么样",
        "q-stock": "腾讯今天的股价是多少",
    }
    for minutes, (question_id, question) in enumerate(questions.items()):
        await store.record_answer(answer_ready(question_id=question_id, question=question,
                                               minutes=minutes))
    await store.record_answer(answer_ready(tenant="globex", question=questions["q-gz"]))

    found = await store.similar("acme", "未来5天广州的天气如何？", limit=3)

    assert [s.question for s in found] == ["帮我看看未来 5 天的广州天气如何",
                                           "帮我看看未来 5 天的深圳天气如何"]
    assert found[0].similarity > found[1].similarity >= 0.2
    assert found[0].outcomes == {"answered": 1} and found[0].hit_count == 1
    exact = await store.similar("acme", "帮我看看未来5天的深圳天气如何", limit=1)
    assert [(s.question, s.similarity) for s in exact] == [("帮我看看未来 5 天的深圳天气如何", 1.0)]


async def test_domain_hints_come_only_from_well_rated_answers(store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready(question_id="q-good"))
    await store.record_answer(answer_ready(
        question_id="q-bad", question="帮我看看未来 5 天的深圳天气如何",
        urls=("https://bad-weather.example/sz",)))
    await store.apply_feedback(feedback_given("stale", question_id="q-bad"))

    hints = await preferred_domain_hints(store, "acme", "未来5天广州的天气如何？")
    assert hints == ["weather.com.cn", "tianqi.example"]
    assert await preferred_domain_hints(store, "globex", "未来5天广州的天气如何？") == []


async def test_open_store_defaults_to_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "state", database_url=None)
    async with await open_store(settings) as opened:
        assert await opened.record_answer(answer_ready()) is True
    assert (tmp_path / "state" / "memory.sqlite3").is_file()
    async with await open_store(settings) as reopened:
        assert await reopened.record_answer(answer_ready()) is False
