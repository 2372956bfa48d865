"""StageRunner without services: retries, dead letters, the give-up answer and commit points,
with a recording publisher and a consumer that only records commits."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

import orjson
import pytest
from aiokafka import ConsumerRecord, TopicPartition

from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps, Unavailable, Unstorable
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    DeadLettered,
    PlanCreated,
    RouteDecided,
    Topics,
)
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.outage import Backoff
from pmflow_gateway.streams.retries import Retries
from pmflow_gateway.streams.runner import RunnerConfig, StageRunner
from pmflow_gateway.streams.stages import MEMORY, PLAN
from tests.fakes import (
    BrokenPlanner,
    CommittingConsumer,
    FlakyPlanner,
    InMemoryStore,
    RecordingPublisher,
    fake_deps,
)
from tests.support.pg import answer_ready

TOPICS = Topics(prefix="t.")
CONFIG = RunnerConfig(retry=Retries(retries=2, backoff_s=0), max_message_bytes=4096)


def deps(planner: object) -> Deps:
    return fake_deps(planner=planner)  # type: ignore[arg-type]


def record(offset: int, value: bytes | None, *, key: bytes | None = None) -> ConsumerRecord:
    return ConsumerRecord(topic=PLAN.source(TOPICS), partition=0, offset=offset, timestamp=0,
                          timestamp_type=0, key=key, value=value, checksum=None,
                          serialized_key_size=0, serialized_value_size=0, headers=())


def route(question_id: str = "q-1") -> bytes:
    return orjson.dumps({**ROUTE_DECIDED, "question_id": question_id})


def plan_runner(planner: object, config: RunnerConfig = CONFIG) -> tuple[StageRunner,
                                                                          RecordingPublisher]:
    publisher = RecordingPublisher()
    runner = StageRunner(PLAN, deps=deps(planner), publisher=publisher, topics=TOPICS,
                         config=config)
    return runner, publisher


async def test_a_transient_failure_is_retried_and_the_result_published() -> None:
    planner = FlakyPlanner(failures=2)
    runner, publisher = plan_runner(planner)
    await runner.process(record(0, route()))
    assert planner.calls == 3
    [plan] = publisher.to(TOPICS.plan_created)
    assert isinstance(plan, PlanCreated) and plan.question_id == "q-1"
    assert publisher.to(TOPICS.dead_letter) == [] and publisher.to(TOPICS.answer_ready) == []
    assert runner.counts["processed"] == 1 and runner.counts["failed"] == 0
    assert publisher.sent[0].key == "q-1"


async def test_retries_wait_longer_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    runner, _ = plan_runner(FlakyPlanner(failures=3),
                            replace(CONFIG, retry=Retries(retries=3, backoff_s=0.5)))
    await runner.process(record(0, route()))
    assert waits == [0.5, 1.0, 2.0]


async def test_after_the_last_retry_the_user_gets_a_failed_answer_and_the_input_a_letter() -> None:
    planner = BrokenPlanner()
    runner, publisher = plan_runner(planner)
    await runner.process(record(7, route("q-7")))
    assert publisher.to(TOPICS.plan_created) == []
    [answer] = publisher.to(TOPICS.answer_ready)
    assert isinstance(answer, AnswerReady) and answer.question_id == "q-7"
    assert answer.status is AnswerStatus.failed and answer.reason is not None
    assert "rules unavailable" in answer.reason
    [letter] = publisher.to(TOPICS.dead_letter)
    assert isinstance(letter, DeadLettered)
    assert letter.reason.startswith("gave up after 3 tries: RuntimeError")
    assert (letter.origin_offset, letter.question_id, letter.stage) == (7, "q-7", "plan")
    assert runner.counts["failed"] == 1 and runner.counts["dead_lettered"] == 1


@dataclass
class DownStore(InMemoryStore):
    """Away (or refusing rows, with `refuse`) until `back` is set."""

    back: asyncio.Event = field(default_factory=asyncio.Event)
    refuse: bool = False
    calls: int = 0

    async def record_answer(self, event: AnswerReady) -> bool:
        self.calls += 1
        if self.refuse:
            raise Unstorable("DataError: value too long for an index row")
        if not self.back.is_set():
            raise Unavailable("database", "ConnectionRefusedError: refused")
        return await super().record_answer(event)


def memory_runner(store: DownStore) -> tuple[StageRunner, RecordingPublisher,
                                             CommittingConsumer]:
    publisher = RecordingPublisher()
    runner = StageRunner(MEMORY, publisher=publisher, topics=TOPICS, config=replace(
        CONFIG, outage=Backoff(first_s=0.001, max_s=0.005)), deps=fake_deps(adapters=[],
                                                                            store=store))
    consumer = CommittingConsumer(assigned={TopicPartition(MEMORY.source(TOPICS), p)
                                            for p in range(3)})
    runner.consumer = consumer  # type: ignore[assignment]
    return runner, publisher, consumer


def answer_record(offset: int, question_id: str, partition: int = 0) -> ConsumerRecord:
    value = answer_ready(question_id=question_id).model_dump_json().encode()
    return ConsumerRecord(topic=MEMORY.source(TOPICS), partition=partition, offset=offset,
                          timestamp=0, timestamp_type=0, key=question_id.encode(), value=value,
                          checksum=None, serialized_key_size=0, serialized_value_size=0,
                          headers=())


async def test_a_store_that_is_away_holds_records_and_partitions_until_it_answers() -> None:
    store = DownStore()
    runner, publisher, consumer = memory_runner(store)
    first, other = (TopicPartition(MEMORY.source(TOPICS), p) for p in (0, 1))
    await runner.on_batch([answer_record(0, "q-1")])
    await _eventually(lambda: store.calls >= 3)  # well past the stage's own retries
    await runner.on_batch([answer_record(0, "q-2", partition=1)])  # arrives during the outage
    await _eventually(lambda: consumer.paused == {first, other})
    await runner.commit()
    assert consumer.commits == [] and publisher.sent == []  # nothing given up, nothing past

    store.back.set()
    assert await runner.executor.drain(5)
    await runner.commit()
    assert consumer.commits == [{first: 1, other: 1}]
    assert consumer.paused == set() and sorted(consumer.resumed) == [first, other]
    assert {q for _, q in store.records} == {"q-1", "q-2"}
    assert publisher.sent == [] and runner.counts["dead_lettered"] == 0


async def test_a_row_the_store_refuses_for_its_content_is_dead_lettered_at_once() -> None:
    store = DownStore(refuse=True)
    runner, publisher, consumer = memory_runner(store)
    await runner.process(answer_record(4, "q-4"))
    assert store.calls == 1  # no retry changes the content
    [letter] = publisher.to(TOPICS.dead_letter)
    assert isinstance(letter, DeadLettered) and letter.origin_offset == 4
    assert letter.reason == "not storable: DataError: value too long for an index row"
    assert publisher.to(TOPICS.answer_ready) == [] and consumer.paused == set()


async def _an_answer() -> AnswerReady:
    outcome = await ask_in_process(RouteDecided.model_validate(ROUTE_DECIDED),
                                   deps(RulesPlanner()))
    assert outcome.answer is not None
    return outcome.answer


@pytest.mark.parametrize(("value", "reason"), [
    (b"{not json", "undecodable"),
    (orjson.dumps({**ROUTE_DECIDED, "route_mode": "sideways"}), "schema violation: route_mode"),
    (b" " * 5000, "oversize"),
    (b"\xff\xfe", "undecodable"),
])
async def test_poison_is_dead_lettered_once_with_its_reason(value: bytes, reason: str) -> None:
    planner = FlakyPlanner(failures=0)
    runner, publisher = plan_runner(planner)
    await runner.process(record(3, value, key=b"q-3"))
    assert planner.calls == 0  # poison never reaches the core, so it is never retried
    [letter] = [s.event for s in publisher.sent]
    assert isinstance(letter, DeadLettered) and reason in letter.reason
    assert letter.question_id == "q-3" and letter.tenant_id is None
    assert letter.original_value  # the record travels with the letter, whatever its bytes
    assert publisher.to(TOPICS.answer_ready) == []


async def test_the_commit_point_is_the_end_of_the_finished_prefix() -> None:
    gates = {1: asyncio.Event()}

    class GatedPlanner:
        async def plan(self, route: RouteDecided):  # type: ignore[no-untyped-def]
            offset = int(route.question_id.rsplit("-", 1)[1])
            if offset in gates:
                await gates[offset].wait()
            return await RulesPlanner().plan(route)

    runner, publisher = plan_runner(GatedPlanner())
    consumer = CommittingConsumer()
    runner.consumer = consumer  # type: ignore[assignment]
    await runner.on_batch([record(i, route(f"q-{i}"), key=f"q-{i}".encode()) for i in range(4)])
    await _until(lambda: len(publisher.sent) == 3)
    await runner.commit()
    tp = TopicPartition(PLAN.source(TOPICS), 0)
    assert consumer.commits == [{tp: 1}]  # 2 and 3 are done, but 1 is not: nothing past it
    gates[1].set()
    assert await runner.executor.drain(5)
    await runner.commit()
    assert consumer.commits == [{tp: 1}, {tp: 4}]


async def test_a_batch_waiting_for_room_takes_no_more_of_a_partition_revoked_meanwhile() -> None:
    """The consumer fetches a revoked partition again from its committed offset: records of the
    old batch taken after the revocation would start its progress past those, and commit past
    them before they ran (a kill then loses them)."""
    gate = asyncio.Event()
    planned: list[str] = []

    class GatedPlanner:
        async def plan(self, route: RouteDecided):  # type: ignore[no-untyped-def]
            planned.append(route.question_id)
            await gate.wait()
            return await RulesPlanner().plan(route)

    runner, publisher = plan_runner(GatedPlanner(), replace(CONFIG, max_in_flight=1))
    consumer = CommittingConsumer()
    runner.consumer = consumer  # type: ignore[assignment]
    batch = [record(i, route(f"q-{i}"), key=f"q-{i}".encode()) for i in range(3)]
    taking = asyncio.create_task(runner.on_batch(batch))
    await _until(lambda: planned == ["q-0"])  # the executor is full: the batch waits for room
    tp = TopicPartition(PLAN.source(TOPICS), 0)
    listener = runner.rebalance_listener()
    await listener.on_partitions_revoked({tp})
    await listener.on_partitions_assigned({tp})
    gate.set()
    await asyncio.wait_for(taking, 5)
    assert await runner.executor.drain(5)
    assert planned == ["q-0"] and publisher.sent == []
    await runner.commit()
    assert consumer.commits == []
    # The next poll (from the committed offset) is taken as usual.
    runner.executor.closing = False
    await runner.on_batch(batch)
    assert await runner.executor.drain(5)
    await runner.commit()
    assert planned == ["q-0", "q-0", "q-1", "q-2"] and consumer.commits == [{tp: 3}]


async def test_a_failed_commit_is_tried_again_next_round() -> None:
    runner, _ = plan_runner(FlakyPlanner(failures=0))
    consumer = CommittingConsumer(fail_next=1)
    runner.consumer = consumer  # type: ignore[assignment]
    await runner.on_batch([record(0, route())])
    assert await runner.executor.drain(5)
    await runner.commit()
    assert consumer.commits == []
    await runner.commit()
    assert consumer.commits == [{TopicPartition(PLAN.source(TOPICS), 0): 1}]


async def _until(condition: object) -> None:
    for _ in range(500):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def _eventually(condition: object) -> None:
    """Like `_until`, for conditions that need real time to pass (backoff pauses)."""
    for _ in range(10_000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition never held")


async def test_a_commit_loop_that_dies_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """A stage whose offsets stop moving must not be silent about it."""
    runner, _ = plan_runner(FlakyPlanner(failures=0), replace(CONFIG, commit_interval_s=0.001))

    async def broken() -> None:
        raise RuntimeError("coordinator gone")

    runner.commit = broken  # type: ignore[method-assign]
    with caplog.at_level("ERROR", logger="pmflow_gateway.streams.runner"):
        runner.start_committing()
        for _ in range(100):
            if caplog.records:
                break
            await asyncio.sleep(0.01)
    [logged] = caplog.records
    assert logged.getMessage() == "stage plan stopped committing"
    assert "coordinator gone" in str(logged.exc_info[1] if logged.exc_info else "")
