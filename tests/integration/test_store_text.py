"""Every text field a record carries reaches the database, whatever characters it holds: a
NUL (which PostgreSQL's text and JSON refuse) or a lone surrogate (which no UTF-8 text can
hold) costs that character, never the record. The same rule on PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.schemas import AdapterAttempt, AnswerReady, FeedbackGiven
from tests.support.pg import answer_ready, feedback_given

DIRTY, CLEAN = "a\x00b\ud800c", "ab\ufffdc"


@pytest.fixture
async def store(database: tuple[str, dict[str, Any]]) -> AsyncIterator[SqlMemoryStore]:
    url, options = database
    async with await SqlMemoryStore.from_url(url, **options) as opened:
        yield opened


def with_context(event: AnswerReady, **changes: Any) -> AnswerReady:
    return event.model_copy(update={"context": event.context.model_copy(update=changes)})


def with_profile(event: AnswerReady, objects: list[str]) -> AnswerReady:
    routing = event.context.routing
    profile = routing.query_profile.model_copy(update={"referenced_objects": objects})
    return with_context(event, routing=routing.model_copy(update={"query_profile": profile}))


# field -> (the answer carrying DIRTY there, where the stored record keeps it)
ANSWER_FIELDS: dict[str, tuple[Callable[[AnswerReady], AnswerReady],
                               Callable[[dict[str, Any]], Any]]] = {
    "question": (lambda e: with_context(e, question=f"广州天气 {DIRTY}"),
                 lambda r: r["question"].removeprefix("广州天气 ")),
    "thread id": (lambda e: with_context(e, thread_id=DIRTY), lambda r: r["thread_id"]),
    "locale": (lambda e: with_context(e, locale=DIRTY), lambda r: r["locale"]),
    "referenced objects": (
        lambda e: with_profile(e, ["weather", DIRTY]),
        lambda r: r["routing_snapshot"]["query_profile"]["referenced_objects"][1]),
    "MCP error text": (
        lambda e: e.model_copy(update={"attempts": [AdapterAttempt(
            adapter="mcp", server="search", outcome="error", error=f"boom: {DIRTY}")]}),
        lambda r: r["attempts"][0]["error"].removeprefix("boom: ")),
    "answer": (lambda e: e.model_copy(update={"answer": DIRTY}), lambda r: r["answer"]),
    "reason": (lambda e: e.model_copy(update={"reason": DIRTY}), lambda r: r["reason"]),
    "stage timing name": (
        lambda e: with_context(e, stage_timings_ms={DIRTY: 1.0}),
        lambda r: next(iter(r["stage_timings_ms"]))),
}


@pytest.mark.parametrize("field", list(ANSWER_FIELDS))
async def test_an_answer_with_unstorable_characters_is_stored_cleaned(
        store: SqlMemoryStore, field: str) -> None:
    dirty, read = ANSWER_FIELDS[field]
    assert await store.record_answer(dirty(answer_ready())) is True
    record = await store.qa_record("acme", "q-1")
    assert record is not None
    assert read(record) == CLEAN


async def test_the_question_is_cleaned_in_its_route_memory_too(store: SqlMemoryStore) -> None:
    question = f"广州未来5天天气 {DIRTY}"
    await store.record_answer(with_context(answer_ready(), question=question))
    memory = await store.route_memory("acme", question)
    assert memory is not None and memory["sample_question"] == f"广州未来5天天气 {CLEAN}"
    [similar] = await store.similar("acme", question)
    assert similar.question == f"广州未来5天天气 {CLEAN}"


def commented(comment: str, **fields: Any) -> FeedbackGiven:
    return feedback_given("unhelpful", **fields).model_copy(update={"comment": comment})


async def test_a_feedback_comment_with_unstorable_characters_is_stored_cleaned(
        store: SqlMemoryStore) -> None:
    await store.record_answer(answer_ready())
    assert await store.apply_feedback(commented(DIRTY)) is True
    record = await store.qa_record("acme", "q-1")
    assert record is not None and record["feedback_comment"] == CLEAN


async def test_a_waiting_rating_with_unstorable_characters_is_stored_cleaned(
        store: SqlMemoryStore) -> None:
    assert await store.apply_feedback(commented(DIRTY, question_id="q-later")) is False
    await store.record_answer(answer_ready(question_id="q-later"))
    record = await store.qa_record("acme", "q-later")
    assert record is not None and record["feedback_comment"] == CLEAN
