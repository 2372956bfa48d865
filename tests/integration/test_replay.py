"""`replay` on the real broker: recorded questions planned again by a different planner."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ops.replay import SKIPPED, WOULD_SEARCH, parse_time, replay
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlannerInfo,
    QueryKind,
    RouteDecided,
    Topics,
)
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import ensure_topics
from pmflow_gateway.streams.codec import encode
from tests.fakes import WEATHER, fake_deps
from tests.support.kafka import produce

pytestmark = pytest.mark.kafka


class NewsPlanner:
    """A deliberately different planner: everything is news, searched by one fixed query."""

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        return (ExternalQueryPlan(query_kind=QueryKind.news, topic=route.question,
                                  search_queries=["replayed query"],
                                  answer_contract=AnswerContract.summary_with_sources),
                PlannerInfo(mode="model", model="replay-test"))


def _route(question_id: str, *, tenant: str = "acme", route_mode: str = "external",
           policy: str = "external_only") -> RouteDecided:
    return RouteDecided.model_validate({**ROUTE_DECIDED, "question_id": question_id,
                                        "event_id": f"e-{question_id}", "tenant_id": tenant,
                                        "route_mode": route_mode,
                                        "effective_source_policy": policy})


async def _record(bootstrap: str, topics: Topics, routes: list[RouteDecided]) -> None:
    """Publish the questions and what the current pipeline answered for them."""
    gateway = fake_deps(clock=SystemClock())
    await produce(bootstrap, topics.route_decided,
                  [(r.question_id.encode(), encode(r)) for r in routes])
    answers, collected, verified = [], [], []
    for route in routes:
        outcome = await ask_in_process(route, gateway)
        key = route.question_id.encode()
        if outcome.answer is not None:
            answers.append((key, encode(outcome.answer)))
        if outcome.evidence is not None and outcome.verified is not None:
            collected.append((key, encode(outcome.evidence)))
            verified.append((key, encode(outcome.verified)))
    await produce(bootstrap, topics.answer_ready, answers)
    await produce(bootstrap, topics.evidence_collected, collected)
    await produce(bootstrap, topics.evidence_verified, verified)


async def test_replay_diffs_plans_and_statuses_in_the_time_range(
        kafka_bootstrap: str, topics: Topics) -> None:
    await ensure_topics(kafka_bootstrap, topics)
    await _record(kafka_bootstrap, topics, [_route("q-before")])
    await asyncio.sleep(1.1)  # record timestamps are milliseconds: leave a clear gap
    start = datetime.now(UTC)
    await _record(kafka_bootstrap, topics, [_route("q-1"), _route("q-2", tenant="other"),
                                            _route("q-internal", route_mode="internal"),
                                            _route("q-held", policy="internal_only")])
    await produce(kafka_bootstrap, topics.route_decided, [(b"q-poison", b"not json")])
    await produce(kafka_bootstrap, topics.route_decided,
                  [(b"q-unanswered", orjson.dumps({**ROUTE_DECIDED,
                                                   "question_id": "q-unanswered"}))])

    report = await replay(bootstrap=kafka_bootstrap, topics=topics, start=start, end=None,
                          planner=NewsPlanner(), defaults=PlanDefaults())

    by_id = {q.question_id: q for q in report.questions}
    assert set(by_id) == {"q-1", "q-2", "q-internal", "q-held", "q-unanswered"}  # not q-before
    first = by_id["q-1"]
    assert first.status_then == "answered" and first.status_now == WOULD_SEARCH
    assert first.plan_changes["query_kind"] == ("weather", "news")
    assert first.plan_changes["search_queries"][1] == ["replayed query"]
    # the evidence recorded then, verified again today: the same item kept, nothing fetched
    assert first.kept_then == first.kept_now == [WEATHER.target_url]
    assert not first.verify_changed and by_id["q-held"].kept_now is None
    assert by_id["q-internal"].status_then is None and by_id["q-internal"].status_now == SKIPPED
    assert by_id["q-unanswered"].status_then is None and not by_id["q-unanswered"].plan_changes
    held = by_id["q-held"]  # the routing table answers it before any planner: nothing to diff
    assert held.status_then == "refused" and held.status_now.startswith("refused (routing")
    assert not held.status_changed and not held.plan_changes
    assert report.undecodable == 1
    assert report.changes_by_field["query_kind"] == 2

    text = report.render()
    assert "  query_kind: 'weather' -> 'news'" in text
    assert "  verify: kept 1 -> 1" in text and "0 verification changes" in text
    assert text.splitlines()[-1].startswith("summary: 5 questions; 2 plan changes (")
    assert "query_kind 2" in text.splitlines()[-1]


async def test_replay_filters_by_tenant_and_end_and_same_planner_changes_nothing(
        kafka_bootstrap: str, topics: Topics) -> None:
    await ensure_topics(kafka_bootstrap, topics)
    start = datetime.now(UTC) - timedelta(seconds=1)
    await _record(kafka_bootstrap, topics, [_route("q-a"), _route("q-b", tenant="other")])
    end = datetime.now(UTC) + timedelta(milliseconds=5)
    await asyncio.sleep(0.05)
    await _record(kafka_bootstrap, topics, [_route("q-late")])

    report = await replay(bootstrap=kafka_bootstrap, topics=topics, start=start, end=end,
                          planner=RulesPlanner(), defaults=PlanDefaults(), tenant="acme")

    assert [q.question_id for q in report.questions] == ["q-a"]
    assert report.questions[0].plan_changes == {}
    assert "  plan unchanged" in report.render()
    assert report.summary() == ("summary: 1 questions; 0 plan changes; 0 status changes; "
                                "0 verification changes")


def test_times_are_iso_or_a_duration_ago() -> None:
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert parse_time("6h", now=now) == datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    assert parse_time("30m", now=now) == datetime(2026, 12, 2, 11, 30, tzinfo=UTC)
    assert parse_time("2026-12-02T08:00") == datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
    assert parse_time("2026-12-02T08:00:00+08:00").utcoffset() == timedelta(hours=8)
