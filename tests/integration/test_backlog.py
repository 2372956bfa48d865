"""A backlog in front of the evidence stage, on the real broker: a question that waited in the
queue still gets its evidence budget; one that waited past the bound ends `timed_out` (never
the false "no reliable data" reply); and one event id names one content.

Each test prints its counts; the adapter always has fresh evidence about the question, so a
`freshness_guard` reply is always the false one."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.contract.statuses import status_text
from pmflow_gateway.handlers.plan import plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import AdapterResult, PlanDefaults
from pmflow_gateway.schemas import AnswerStatus, ReplyRendered, RouteDecided, Topics
from pmflow_gateway.schemas.contracts import AdapterAttempt, ExternalQueryPlan
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from pmflow_gateway.streams.codec import encode
from pmflow_gateway.streams.runner import RunnerConfig
from tests.fakes import WEATHER, SlowAdapter
from tests.support.chaos import Replies, report
from tests.support.kafka import collect, produce
from tests.support.processors import running
from tests.support.workers import Worker

pytestmark = pytest.mark.kafka

BURST = 600  # at 32 in flight and 0.25 s a call the evidence stage drains it in about 5 s


def burst(n: int, *, deadline_ms: int, prefix: str = "q") -> list[tuple[bytes, bytes]]:
    return [(f"{prefix}-{i}".encode(), orjson.dumps({
        **ROUTE_DECIDED, "event_id": str(uuid.uuid4()), "question_id": f"{prefix}-{i}",
        "deadline_ms": deadline_ms})) for i in range(n)]


async def replies(bootstrap: str, topics: Topics, questions: int, *, settle_s: float = 0.5,
                  timeout_s: float = 120) -> list[ReplyRendered]:
    records = await collect(bootstrap, [topics.reply_rendered], timeout_s=timeout_s,
                            until=lambda rs: len({r.key for r in rs}) >= questions,
                            settle_s=settle_s)
    return [ReplyRendered.model_validate_json(r.value) for r in records]


async def test_a_burst_queued_for_the_evidence_stage_still_gets_its_budget(
        kafka_bootstrap: str, topics: Topics) -> None:
    """Every question has 1.5 s, and most wait longer than that behind the others: the
    budget starts when the evidence stage takes the question up, so all are answered."""
    adapter = SlowAdapter(items=[WEATHER], delay_s=0.25)
    async with running(kafka_bootstrap, topics, adapters=[adapter],
                       runner_config=RunnerConfig(max_in_flight=32)):
        await produce(kafka_bootstrap, topics.route_decided, burst(BURST, deadline_ms=1500))
        got = await replies(kafka_bootstrap, topics, BURST)
    statuses = Counter(str(r.status) for r in got)
    report("burst", questions=BURST, replies=len(got), **statuses)
    assert statuses["freshness_guard"] == 0  # "no reliable external data", untrue here
    assert statuses["answered"] == BURST == len(got)


async def test_a_question_past_the_backlog_bound_ends_timed_out_not_no_data(
        kafka_bootstrap: str, topics: Topics) -> None:
    """With 1 s of budget and 0.5 s of allowed waiting, the end of the burst is past the
    bound when its turn comes: it is not looked up, and says so."""
    adapter = SlowAdapter(items=[WEATHER], delay_s=0.25)
    async with running(kafka_bootstrap, topics, adapters=[adapter],
                       runner_config=RunnerConfig(max_in_flight=32),
                       plan_defaults=PlanDefaults(max_wait_ms=500)):
        await produce(kafka_bootstrap, topics.route_decided, burst(BURST, deadline_ms=1000))
        got = await replies(kafka_bootstrap, topics, BURST)
    statuses = Counter(str(r.status) for r in got)
    report("burst past the bound", questions=BURST, replies=len(got), calls=adapter.calls,
           **statuses)
    assert statuses["freshness_guard"] == 0
    assert statuses["timed_out"] > 0 and statuses["answered"] > 0
    assert statuses["timed_out"] + statuses["answered"] == BURST == len(got)
    assert adapter.calls == statuses["answered"]  # a timed-out question asked no provider
    timed_out = [r for r in got if r.status is AnswerStatus.timed_out]
    assert {r.text.splitlines()[-1] for r in timed_out} == {
        status_text(AnswerStatus.timed_out, "zh-CN")}
    assert all(not r.sources for r in timed_out)


@dataclass
class AnswersOnce:
    """A provider with evidence for the first call of each plan topic and none after."""

    name: str = "mcp"
    seen: set[str] = field(default_factory=set)

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        first = plan.topic not in self.seen
        self.seen.add(plan.topic)
        items = [WEATHER] if first else []
        return AdapterResult(items=items, attempts=[AdapterAttempt(
            adapter=self.name, outcome="ok" if items else "empty", evidence_count=len(items))])

    async def aclose(self) -> None:
        return None


def conflicts(events: Sequence[ReplyRendered]) -> int:
    """Event ids that name more than one content (anything but the time it was made)."""
    contents: dict[str, set[bytes]] = defaultdict(set)
    for event in events:
        contents[event.event_id].add(orjson.dumps(
            event.model_dump(mode="json", exclude={"occurred_at"})))
    return sum(len(c) > 1 for c in contents.values())


async def test_one_event_id_names_one_content(kafka_bootstrap: str, topics: Topics) -> None:
    """Two contents under one id: the same question id asked twice with different questions,
    and a plan delivered twice whose provider answered only the first time."""
    route = {**ROUTE_DECIDED, "question_id": "asked-twice"}
    london = {**route, "event_id": str(uuid.uuid4()),
              "question": "What's the weather in London tomorrow?", "locale": "en"}
    planned = await plan_question(
        RouteDecided.model_validate({**ROUTE_DECIDED, "question_id": "delivered-twice",
                                     "question": "广州未来五天天气怎么样"}),
        planner=RulesPlanner(), clock=SystemClock(), defaults=PlanDefaults())
    assert planned is not None
    async with running(kafka_bootstrap, topics, adapters=[AnswersOnce()]):
        await produce(kafka_bootstrap, topics.route_decided,
                      [(b"asked-twice", orjson.dumps(route))])
        await replies(kafka_bootstrap, topics, 1)
        await produce(kafka_bootstrap, topics.route_decided,
                      [(b"asked-twice", orjson.dumps(london))])
        await produce(kafka_bootstrap, topics.plan_created,
                      [(b"delivered-twice", encode(planned))] * 2)
        records = await collect(kafka_bootstrap, [topics.reply_rendered],
                                until=lambda rs: len(rs) >= 4, settle_s=1.0)
    got = [ReplyRendered.model_validate_json(r.value) for r in records]
    by_question = Counter(r.question_id for r in got)
    statuses = {q: sorted(str(r.status) for r in got if r.question_id == q) for q in by_question}
    report("event ids", replies=len(got), conflicting_ids=conflicts(got),
           distinct_ids=len({r.event_id for r in got}))
    assert by_question == {"asked-twice": 2, "delivered-twice": 2}
    assert statuses["delivered-twice"] == ["answered", "freshness_guard"]
    assert conflicts(got) == 0
    assert len({r.event_id for r in got}) == 4


PAUSED_QUESTIONS = 40


@pytest.mark.slow
async def test_questions_queued_behind_a_paused_evidence_worker_are_answered_once_each(
        kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> None:
    """The evidence worker stands still (SIGSTOP) for 15 s, past the questions' 4 s budget
    and past its session timeout, while 40 questions are planned; then it wakes up, is
    thrown out of its group, rejoins and gets them again. Counted: questions that got a
    non-answer, and event ids that name two contents."""
    env = {"PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap, "PMFLOW_TOPIC_PREFIX": topics.prefix,
           "PMFLOW_DEMO": "1", "PMFLOW_DATA_DIR": str(tmp_path / "data"),
           "OTEL_EXPORTER_OTLP_ENDPOINT": ""}
    log = tmp_path / "workers.log"
    others = Worker(env, stages=["plan", "verify", "answer", "render"], log=log).start()
    evidence = Worker(env, stages=["evidence"], log=log).start()
    try:
        async with Replies(kafka_bootstrap, topics.reply_rendered) as replies:
            await produce(kafka_bootstrap, topics.route_decided,
                          burst(1, deadline_ms=20_000, prefix="warm-up"))
            await replies.wait_for({b"warm-up-0"}, timeout_s=120, worker=evidence)
            evidence.pause()
            try:
                questions = burst(PAUSED_QUESTIONS, deadline_ms=4_000)
                await produce(kafka_bootstrap, topics.route_decided, questions)
                await asyncio.sleep(15)
            finally:
                evidence.resume()
            await replies.wait_for({key for key, _ in questions}, timeout_s=120,
                                   worker=evidence)
            await asyncio.sleep(10)  # a second reply, if any, has come by now
    finally:
        for worker in (others, evidence):
            if worker.alive:
                worker.kill()
    got = [ReplyRendered.model_validate_json(r.value)
           for key, rs in replies.by_question.items() if key != b"warm-up-0" for r in rs]
    not_answered = {r.question_id for r in got if r.status is not AnswerStatus.answered}
    report("paused evidence worker", questions=PAUSED_QUESTIONS, replies=len(got),
           duplicates=len(got) - len({r.question_id for r in got}),
           not_answered=len(not_answered), conflicting_ids=conflicts(got))
    assert len({r.question_id for r in got}) == PAUSED_QUESTIONS, log.read_text()[-3000:]
    assert not_answered == set()
    assert conflicts(got) == 0


def lag_by_stage(text: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {s.labels["stage"]: s.value for family in text_string_to_metric_families(text)
            if family.name == "pmflow_consumer_lag" for s in family.samples}


async def scrape(processor: Processor) -> str:
    import httpx

    assert processor.health is not None
    async with httpx.AsyncClient() as client:
        return (await client.get(f"http://127.0.0.1:{processor.health.port}/metrics")).text


async def test_lag_on_metrics_counts_what_waits_and_nothing_a_restart_inherited(
        kafka_bootstrap: str, topics: Topics) -> None:
    """A backlog shows as lag (and as time waited); once it is done, a restarted worker
    reports none, however much the partitions hold from before."""
    adapter = SlowAdapter(items=[WEATHER], delay_s=0.25)
    async with running(kafka_bootstrap, topics, adapters=[adapter],
                       runner_config=RunnerConfig(max_in_flight=8)) as first:
        await produce(kafka_bootstrap, topics.route_decided, burst(120, deadline_ms=60_000))
        await replies(kafka_bootstrap, topics, 1, settle_s=0)
        waiting = lag_by_stage(await scrape(first))
        await replies(kafka_bootstrap, topics, 120, settle_s=0)
    async with running(kafka_bootstrap, topics) as second:
        await produce(kafka_bootstrap, topics.route_decided, burst(1, deadline_ms=20_000,
                                                                   prefix="after"))
        await replies(kafka_bootstrap, topics, 121, settle_s=0)
        idle: dict[str, float] = {}
        for _ in range(50):  # the last commits land within a few intervals
            text = await scrape(second)
            idle = lag_by_stage(text)
            if not any(idle.values()):
                break
            await asyncio.sleep(0.1)
    report("lag", waiting_evidence=waiting.get("evidence"), idle_after_restart=sum(
        idle.values()))
    assert waiting["evidence"] > 0
    assert 'pmflow_queue_wait_seconds_count{stage="evidence"}' in text
    assert set(idle) >= {"plan", "evidence", "verify", "answer", "render", "memory"}
    assert sum(idle.values()) == 0, idle
