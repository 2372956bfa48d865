"""The memory rules without a database: the pure functions, and the in-memory store that
applies them the way the SQL store does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pmflow_gateway.contract.memory_rules import (
    EXTERNAL_ONLY,
    MAX_GOOD_DOMAINS,
    MemoryRow,
    RecordRow,
    answer_is_late,
    count_answer,
    count_feedback,
    feedback_is_late,
    is_good_answer,
    rank_good_domains,
    route_prior,
)
from pmflow_gateway.handlers.memory import prior_for
from pmflow_gateway.ports import SimilarQuestion
from tests.fakes import InMemoryStore
from tests.support.pg import answer_ready, feedback_given

T0 = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


def record(urls: list[str] | None = None, *, status: str = "answered", key: str = "k",
           feedback: str | None = None, minutes: int = 0) -> RecordRow:
    return RecordRow(question_key=key, status=status, answered_at=T0 + timedelta(minutes=minutes),
                     feedback_outcome=feedback,
                     feedback_at=T0 + timedelta(minutes=minutes + 1) if feedback else None,
                     sources_used=[{"url": url} for url in urls or []])


def sample(route_mode: str = "external", *, similarity: float = 0.8, hits: int = 1,
           feedback: dict[str, int] | None = None, latest: str | None = None,
           domains: list[str] | None = None) -> SimilarQuestion:
    return SimilarQuestion(question="q", query_kind="weather", route_mode=route_mode,
                           hit_count=hits, outcomes={"answered": hits},
                           feedback_counts=feedback or {}, feedback_outcome=latest,
                           good_domains=domains or [], similarity=similarity)



def test_good_answer_is_answered_without_negative_feedback() -> None:
    assert is_good_answer("answered", None)
    assert is_good_answer("answered", "helpful")
    for negative in ["unhelpful", "wrong_route", "stale", "incorrect"]:
        assert not is_good_answer("answered", negative)
    assert not is_good_answer("freshness_guard", "helpful")


def test_a_late_answer_or_late_feedback_changes_nothing() -> None:
    newer = record(minutes=10, feedback="helpful")
    assert answer_is_late(newer, T0)
    assert not answer_is_late(newer, T0 + timedelta(minutes=10))
    assert not answer_is_late(None, T0)
    assert feedback_is_late(newer, T0 + timedelta(minutes=5))
    assert not feedback_is_late(record(), T0)


def test_a_new_question_adds_a_hit_and_a_reanswer_moves_its_outcome() -> None:
    empty = MemoryRow()
    first = count_answer(empty, None, key="k", status="freshness_guard")
    assert first == {"hit_count": 1, "outcome_counts": {"freshness_guard": 1}}
    again = count_answer(MemoryRow(**first), record(status="freshness_guard"), key="k",
                         status="answered")
    assert again == {"hit_count": 1, "outcome_counts": {"answered": 1}}
    rekeyed = count_answer(MemoryRow(**again), record(key="other"), key="k", status="answered")
    assert rekeyed == {"hit_count": 2, "outcome_counts": {"answered": 2}}


def test_a_changed_vote_moves_and_the_latest_feedback_follows_the_newest_event() -> None:
    memory = MemoryRow(hit_count=2, feedback_counts={"helpful": 2}, feedback_at=T0)
    voted = record(feedback="helpful")
    moved = count_feedback(memory, voted, outcome="wrong_route", at=T0 + timedelta(minutes=3))
    assert moved["feedback_counts"] == {"helpful": 1, "wrong_route": 1}
    assert moved["feedback_outcome"] == "wrong_route"
    older = count_feedback(MemoryRow(feedback_at=T0 + timedelta(hours=1)), record(),
                           outcome="stale", at=T0)
    assert older == {"feedback_counts": {"stale": 1}}  # counted, but not the latest


def test_good_domains_count_each_answer_once_and_skip_bad_answers() -> None:
    ranked = rank_good_domains([
        record(["https://a.example/1", "https://a.example/2", "https://b.example/"]),
        record(["https://b.example/x", "https://c.example/"]),
        record(["https://bad.example/"], feedback="incorrect"),
        record(["https://guard.example/"], status="freshness_guard"),
    ])
    assert ranked == ["b.example", "a.example", "c.example"]
    many = [record([f"https://d{i}.example/"]) for i in range(MAX_GOOD_DOMAINS + 5)]
    assert len(rank_good_domains(many)) == MAX_GOOD_DOMAINS


@pytest.mark.parametrize("verdict", ["incorrect", "unhelpful"])
def test_a_discredited_answer_takes_its_domains_credit_back(verdict: str) -> None:
    good = record(["https://a.example/", "https://b.example/"])
    assert rank_good_domains([good]) == ["a.example", "b.example"]
    # One good answer and one discredited answer citing a.example: it no longer counts.
    bad = record(["https://a.example/x"], feedback=verdict)
    assert rank_good_domains([good, bad]) == ["b.example"]
    # A wrong route says nothing about the sources: it withholds credit, takes none back.
    misrouted = record(["https://a.example/y"], feedback="wrong_route")
    assert rank_good_domains([good, misrouted]) == ["a.example", "b.example"]


def test_no_history_gives_an_explicit_empty_prior() -> None:
    prior = route_prior([])
    assert prior.suggested_route_mode is None
    assert (prior.confidence, prior.samples, prior.good_domains) == (0.0, 0, [])
    assert "no similar" in prior.basis


def test_consistent_history_suggests_its_route_with_growing_confidence() -> None:
    one = route_prior([sample(hits=1, domains=["a.example"])])
    many = route_prior([sample(hits=5, domains=["a.example"]), sample(hits=2)])
    assert one.suggested_route_mode == many.suggested_route_mode == "external"
    assert 0 < one.confidence < many.confidence <= 1
    assert many.samples == 2 and many.outcomes == {"answered": 7}
    assert many.good_domains == ["a.example"]


def test_wrong_route_feedback_lowers_the_prior_and_can_overturn_it() -> None:
    clean = route_prior([sample(hits=4)])
    some = route_prior([sample(hits=4, feedback={"wrong_route": 1})])
    mostly = route_prior([sample(hits=4, feedback={"wrong_route": 3}, latest="wrong_route",
                                 domains=["a.example"])])
    assert clean.suggested_route_mode == "external"
    assert some.suggested_route_mode == "external" and some.confidence < clean.confidence
    assert mostly.suggested_route_mode == "internal"
    assert mostly.feedback == {"wrong_route": 3}
    assert mostly.good_domains == []  # a sample whose latest verdict is negative lends none


def test_without_reported_internal_outcomes_the_basis_says_it_knows_one_side() -> None:
    ours = route_prior([sample("external", hits=3)])
    both = route_prior([sample("external", hits=1), sample("internal", hits=3)])
    assert not ours.knows_internal and ours.basis.endswith(EXTERNAL_ONLY)
    assert both.knows_internal and EXTERNAL_ONLY not in both.basis
    assert both.suggested_route_mode == "internal"


def test_split_votes_say_uncertain() -> None:
    prior = route_prior([sample("external", hits=2), sample("uncertain", hits=2)])
    assert prior.suggested_route_mode == "uncertain"
    assert prior.confidence < 0.6


async def test_the_fake_store_applies_the_rules_like_the_real_one() -> None:
    store = InMemoryStore()
    assert await store.record_answer(answer_ready(minutes=0)) is True
    assert await store.record_answer(answer_ready(minutes=0)) is False  # redelivery
    late = answer_ready(minutes=-5, event_id="older", status=answer_ready().status)
    assert await store.record_answer(late) is False
    assert await store.apply_feedback(feedback_given("helpful", minutes=5)) is True
    assert await store.apply_feedback(feedback_given("incorrect", minutes=6)) is True
    assert await store.apply_feedback(feedback_given("helpful", minutes=2)) is False  # late
    [found] = await store.similar("acme", "帮我看看未来5天的广州天气如何")
    assert found.hit_count == 1 and found.feedback_counts == {"incorrect": 1}
    assert found.good_domains == []  # rated incorrect: its domains stop counting
    assert await store.similar("other", "帮我看看未来5天的广州天气如何") == []
    # Another tenant's rating of this question waits for that tenant's record, never ours.
    assert await store.apply_feedback(feedback_given("stale", tenant="other")) is False
    assert store.feedback_of("acme", "q-1") == "incorrect"


async def test_wrong_route_feedback_moves_the_prior_through_the_store() -> None:
    store = InMemoryStore()
    for n in range(3):
        await store.record_answer(answer_ready(question_id=f"q-{n}", minutes=n))
    before = await prior_for(store, "acme", "帮我看看未来5天的广州天气如何")
    for n in range(3):
        await store.apply_feedback(feedback_given("wrong_route", question_id=f"q-{n}"))
    after = await prior_for(store, "acme", "帮我看看未来5天的广州天气如何")
    assert before.suggested_route_mode == "external" and before.samples == 1
    assert after.suggested_route_mode == "internal"
    assert after.feedback == {"wrong_route": 3}
    assert (await prior_for(store, "someone-else", "帮我看看未来5天的广州天气如何")).samples == 0
