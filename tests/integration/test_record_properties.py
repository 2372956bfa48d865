"""A property of the whole processor on the real broker: whatever a Kafka record carries (any
header names and values, null or binary or long keys, valid, invalid, binary or oversize
values), it ends as exactly one of: an answer (AnswerReady), skipped (an `internal` route),
or a dead letter naming its origin offset with a reason; and every stage's committed offsets
reach the end of what it consumes.

Header names are text in the Kafka protocol and in aiokafka's API: a producer cannot write a
name that is not UTF-8 (the first test shows it refuses), so such a record cannot arrive, and
the generated names are any text, empty included.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from random import Random
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer, ConsumerRecord, TopicPartition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmflow_gateway.schemas import AnswerReady, DeadLettered, RouteDecided, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from pmflow_gateway.streams.codec import Poison, decode
from pmflow_gateway.streams.runner import RunnerConfig
from tests.support.apart import drawn_apart
from tests.support.kafka import collect
from tests.support.processors import Guarantee, running

pytestmark = pytest.mark.kafka

LIMIT = 1_048_576  # the default input limit, so "near the limit" means what it does in use
EXAMPLES = 6
Header = tuple[str, bytes | None]

header_name = st.one_of(
    st.sampled_from(["traceparent", "tracestate", "baggage", "event_type", "", "x-note"]),
    st.text(max_size=40))
# Long and repeated parts are built from small draws: hypothesis gives up on examples whose
# raw draws exceed its buffer, which large binaries and long lists would.
header_value = st.one_of(
    st.none(), st.binary(max_size=64), st.integers(2000, 6000).map(lambda n: b"\xfe" * n),
    st.sampled_from([b"\xff\xfe", b"00-zz-not-a-trace-0", b"",
                     b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]),
    st.text(max_size=40).map(str.encode))
header = st.tuples(header_name, header_value)
headers = st.one_of(st.lists(header, max_size=6),
                    st.tuples(st.lists(header, min_size=1, max_size=3), st.integers(40, 120))
                    .map(lambda drawn: (drawn[0] * drawn[1])[:drawn[1]]))
keys = st.one_of(st.none(), st.sampled_from([b"shared", b"q"]), st.binary(max_size=32),
                 st.integers(1000, 4000).map(lambda n: b"\x00k" * (n // 2)))

route = st.fixed_dictionaries({
    "route_mode": st.sampled_from(["external", "uncertain", "internal"]),
    "question": st.sampled_from([ROUTE_DECIDED["question"], "What is the weather in Paris?",
                                 "明天北京会下雨吗"]),
    "locale": st.sampled_from(["zh-CN", "en-US", "en"]),
    "sources": st.sampled_from([ROUTE_DECIDED["sources"], []]),
}).map(lambda changes: {**ROUTE_DECIDED, **changes})
broken = st.one_of(
    route.map(lambda d: {**d, "tenant_id": ""}),
    route.map(lambda d: {k: v for k, v in d.items() if k != "question"}),
    route.map(lambda d: {**d, "schema_version": 99}),
    route.map(lambda d: {**d, "route_mode": "sideways"}),
    st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3))
# one_of flattens nested one_ofs into equal branches: pick a shape first to keep half valid
_shapes = [route, route, route, route, broken, st.none(), st.binary(max_size=200),
           st.sampled_from([b"{", b"[]", b"null", b'{"question_id": 1'])]
small_value = st.integers(0, len(_shapes) - 1).flatmap(lambda i: _shapes[i])
# A valid route padded (an unknown field, ignored) to just under or just over the limit.
near_limit = st.tuples(route, st.integers(-64, 64).filter(bool))


@dataclass
class Sent:
    key: bytes | None
    value: bytes | None
    headers: list[Header]
    expected: str  # "answer" | "skipped" | "dead letter"
    question_id: str | None = None
    partition: int = -1
    offset: int = -1


def _padded(doc: dict[str, Any], size: int) -> bytes:
    bare = orjson.dumps({**doc, "pad": ""})
    return orjson.dumps({**doc, "pad": "x" * max(size - len(bare), 0)})


def _expected(value: bytes | None) -> str:
    try:
        route_event = decode(RouteDecided, value, max_bytes=LIMIT)
    except Poison:
        return "dead letter"
    return "skipped" if route_event.route_mode == "internal" else "answer"


def generate() -> list[list[Sent]]:
    """EXAMPLES batches of 10-30 records; each valid route gets its own question id."""
    batches: list[list[Sent]] = []
    record = st.tuples(keys, small_value, headers)
    big = st.tuples(keys, near_limit, headers)

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(record, min_size=9, max_size=28), st.lists(big, max_size=2),
           st.randoms(use_true_random=False))
    def draw(small: list[tuple[bytes | None, Any, list[Header]]],
             large: list[tuple[bytes | None, Any, list[Header]]], rnd: Random) -> None:
        drawn = [*small, *large]
        rnd.shuffle(drawn)
        batch: list[Sent] = []
        for key, value, record_headers in drawn:
            question_id = f"pp-{len(batches)}-{len(batch)}"
            if isinstance(value, tuple):  # near the limit
                doc, delta = value
                value = _padded({**doc, "question_id": question_id}, LIMIT + delta)
            elif isinstance(value, dict):
                if "question_id" in value:
                    value = {**value, "question_id": question_id, "event_id": question_id}
                value = orjson.dumps(value)
            if key is None and value is None:  # aiokafka sends no record without both
                key = b"tombstone"
            batch.append(Sent(key, value, record_headers, _expected(value), question_id))
        batches.append(batch)

    draw()
    return batches


@pytest.fixture
def batches() -> list[list[Sent]]:
    return drawn_apart(generate)


async def _publish(bootstrap: str, topic: str, batch: list[Sent]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=50,
                                max_request_size=4 * LIMIT)
    await producer.start()
    try:
        futures = [await producer.send(topic, s.value, key=s.key, headers=s.headers)
                   for s in batch]
        for sent, future in zip(batch, futures, strict=True):
            meta = await future
            sent.partition, sent.offset = meta.partition, meta.offset
    finally:
        await producer.stop()


async def test_a_header_name_that_is_not_utf8_cannot_be_produced(kafka_bootstrap: str,
                                                                topics: Topics) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
    await producer.start()
    try:
        with pytest.raises(UnicodeEncodeError):
            await producer.send(topics.route_decided, b"{}", headers=[("\udcff", b"x")])
        with pytest.raises(TypeError):
            await producer.send(topics.route_decided, b"{}",
                                headers=[(b"\xff", b"x")])  # type: ignore[list-item]
    finally:
        await producer.stop()


@pytest.fixture(params=["at_least_once", "exactly_once"])
async def processor(request: pytest.FixtureRequest, batches: list[list[Sent]],
                    kafka_bootstrap: str, topics: Topics) -> AsyncIterator[Processor]:
    guarantee: Guarantee = request.param
    async with running(kafka_bootstrap, topics, guarantee=guarantee,
                       runner_config=RunnerConfig(max_message_bytes=LIMIT)) as proc:
        yield proc


async def test_every_record_ends_as_one_outcome_and_commits_reach_the_end(
        batches: list[list[Sent]], processor: Processor, kafka_bootstrap: str) -> None:
    topics = processor.topics
    plan = next(r for r in processor.runners if r.stage.name == "plan")
    totals = {"records": 0, "answer": 0, "skipped": 0, "dead letter": 0}
    for batch in batches:
        skipped_before = plan.counts["skipped"]
        await _publish(kafka_bootstrap, topics.route_decided, batch)
        found = await _outcomes(kafka_bootstrap, topics, batch)
        answered = {a.question_id for a in found.answers}
        letters: dict[tuple[int, int], list[DeadLettered]] = {}
        for letter in found.letters:
            assert letter.reason and letter.stage == "plan", letter
            assert letter.origin_topic == topics.route_decided
            letters.setdefault((letter.origin_partition, letter.origin_offset), []).append(letter)
        for sent in batch:
            outcomes = [sent.question_id in answered, (sent.partition, sent.offset) in letters]
            assert outcomes == {"answer": [True, False], "skipped": [False, False],
                                "dead letter": [False, True]}[sent.expected], sent
            totals[sent.expected] += 1
        # a redelivered record is dead-lettered again under the same event id, never twice
        assert all(len({x.event_id for x in same}) == 1 for same in letters.values())
        assert plan.counts["skipped"] - skipped_before == sum(
            s.expected == "skipped" for s in batch)
        await _all_committed(processor, kafka_bootstrap)
        totals["records"] += len(batch)
    print(f"\nrecord properties ({processor.settings.processing_guarantee}): "
          f"{len(batches)} examples, {totals}")
    assert totals["answer"] and totals["dead letter"] and totals["skipped"]


@dataclass
class Outcomes:
    answers: list[AnswerReady]
    letters: list[DeadLettered]


async def _outcomes(bootstrap: str, topics: Topics, batch: list[Sent]) -> Outcomes:
    """Every answer and dead letter of this batch's records (waits for all expected, then
    a second more for anything unexpected)."""
    ids = {s.question_id for s in batch}
    origins = {(s.partition, s.offset) for s in batch}
    wanted_answers = {s.question_id for s in batch if s.expected == "answer"}
    wanted_letters = {(s.partition, s.offset) for s in batch if s.expected == "dead letter"}

    def mine(records: list[ConsumerRecord]) -> Outcomes:
        answers = [a for a in (AnswerReady.model_validate_json(r.value) for r in records
                               if r.topic == topics.answer_ready) if a.question_id in ids]
        letters = [d for d in (DeadLettered.model_validate_json(r.value) for r in records
                               if r.topic == topics.dead_letter)
                   if d.question_id in ids or (d.origin_topic == topics.route_decided and (
                       d.origin_partition, d.origin_offset) in origins)]
        return Outcomes(answers, letters)

    def done(records: list[ConsumerRecord]) -> bool:
        seen = mine(records)
        return ({a.question_id for a in seen.answers} >= wanted_answers and
                {(d.origin_partition, d.origin_offset) for d in seen.letters} >= wanted_letters)

    records = await collect(bootstrap, [topics.answer_ready, topics.dead_letter], until=done,
                            timeout_s=40, settle_s=1.0, isolation_level="read_committed")
    return mine(records)


async def _all_committed(processor: Processor, bootstrap: str) -> None:
    """Wait until every stage has committed up to the last record of each partition it reads
    (the last record, not the end offset: a transaction's marker follows its records)."""
    topics = sorted({r.topic for r in processor.runners})
    records = await collect(bootstrap, topics, until=lambda rs: False, timeout_s=2.0,
                            isolation_level="read_committed")
    ends: dict[TopicPartition, int] = {}
    for r in records:
        tp = TopicPartition(r.topic, r.partition)
        ends[tp] = max(ends.get(tp, 0), r.offset + 1)
    behind: dict[str, dict[TopicPartition, tuple[int, int]]] = {}
    for _ in range(100):
        behind = {}
        for runner in processor.runners:
            await runner.commit()
            done = runner.executor.committed_offsets()
            late = {tp: (done.get(tp, 0), end) for tp, end in ends.items()
                    if tp.topic == runner.topic and done.get(tp, 0) < end}
            if late:
                behind[runner.stage.name] = late
        if not behind:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"commits never reached the last records: {behind}")
