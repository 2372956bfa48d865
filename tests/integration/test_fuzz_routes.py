"""10,000 generated route events, valid and invalid, through the real broker: no crash, every
invalid one dead-lettered with its reason, every valid one answered."""

from __future__ import annotations

import string
from collections.abc import AsyncIterator

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmflow_gateway.schemas import DeadLettered, RouteDecided, Topics
from pmflow_gateway.streams.app import Processor
from pmflow_gateway.streams.codec import Poison, decode
from tests.fakes import FakeAdapter, evidence
from tests.support.apart import drawn_apart
from tests.support.kafka import collect, produce
from tests.support.processors import running

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
N = 10_000
ident = st.text(string.ascii_letters + string.digits + "-", min_size=1, max_size=24)
text = st.text(min_size=0, max_size=80)

valid_route = st.fixed_dictionaries({
    "event_id": ident, "question_id": ident, "tenant_id": ident,
    "occurred_at": st.sampled_from(["2026-12-02T08:00:00+00:00", "2026-12-01T23:59:59Z"]),
    "schema_version": st.just(1),
    "question": st.text(min_size=1, max_size=120).filter(str.strip),
    "locale": st.sampled_from(["zh-CN", "en-US", "en", "ja"]),
    "route_mode": st.sampled_from(["external", "uncertain", "internal"]),
    # Mostly ones the routing table lets out, so most questions go through every stage.
    "effective_source_policy": st.sampled_from(["external_only"] * 3 + ["internal_only", "x"]),
    "reply_contract": st.sampled_from(["external_realtime"] * 3 + ["clarification", ""]),
    "query_profile": st.fixed_dictionaries({"needs_freshness": st.booleans(),
                                            "referenced_objects": st.lists(text, max_size=3)}),
    "sources": st.lists(st.fixed_dictionaries({"source_type": text, "source_label": text,
                                               "snippet": text}), max_size=3),
})
broken_route = st.one_of(
    valid_route.map(lambda d: {**d, "tenant_id": ""}),
    valid_route.map(lambda d: {k: v for k, v in d.items() if k != "question"}),
    valid_route.map(lambda d: {**d, "schema_version": 2}),
    valid_route.map(lambda d: {**d, "route_mode": "sideways"}),
    valid_route.map(lambda d: {**d, "occurred_at": "yesterday"}),
    st.dictionaries(text, text, max_size=4),
)
_shapes = [valid_route, valid_route, broken_route, st.binary(max_size=64)]
record_value = st.integers(0, len(_shapes) - 1).flatmap(lambda i: _shapes[i])


def generate(n: int) -> list[bytes]:
    """n generated record values; each question gets its own id, so every valid one must be
    answered (hypothesis likes to repeat small ids, which would fold questions together)."""
    corpus: list[bytes] = []

    @settings(max_examples=n, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(record_value)
    def draw(value: dict[str, object] | bytes) -> None:
        if isinstance(value, dict):
            if "question_id" in value:
                value = {**value, "question_id": f"fz-{len(corpus)}"}
            value = orjson.dumps(value)
        corpus.append(value)

    draw()
    return corpus


@pytest.fixture
def corpus() -> list[bytes]:
    return drawn_apart(generate, N)


@pytest.fixture
async def processor(corpus: list[bytes], kafka_bootstrap: str,
                    topics: Topics) -> AsyncIterator[Processor]:
    adapter = FakeAdapter("mcp", items=[evidence("https://example.org/a", "A fact. [1]")])
    async with running(kafka_bootstrap, topics, adapters=[adapter]) as proc:
        yield proc


async def test_ten_thousand_generated_route_events(corpus: list[bytes], processor: Processor,
                                                   kafka_bootstrap: str) -> None:
    values = corpus
    assert len(values) >= N * 0.9  # hypothesis may stop early only on an exhausted space
    messages = [(f"k{i}".encode(), v) for i, v in enumerate(values)]
    expected_replies, expected_letters = set(), set()
    for key, value in messages:
        try:
            route = decode(RouteDecided, value, max_bytes=1_048_576)
        except Poison:
            expected_letters.add(key)
            continue
        if route.route_mode != "internal":
            expected_replies.add(route.question_id.encode())
    await produce(kafka_bootstrap, processor.topics.route_decided, messages)
    topics = processor.topics

    def done(records: list) -> bool:
        replies = {r.key for r in records if r.topic == topics.reply_rendered}
        letters = {r.key for r in records if r.topic == topics.dead_letter}
        return replies >= expected_replies and len(letters) >= len(expected_letters)

    records = await collect(kafka_bootstrap, [topics.reply_rendered, topics.dead_letter],
                            until=done, timeout_s=240, settle_s=1.0)
    letters = [DeadLettered.model_validate_json(r.value) for r in records
               if r.topic == topics.dead_letter]
    replies = {r.key for r in records if r.topic == topics.reply_rendered}
    print(f"\nfuzz: {len(values)} events, {len(expected_replies)} distinct answerable "
          f"questions, {len(expected_letters)} invalid; replies {len(replies)}, "
          f"dead letters {len(letters)} ({len(letters) - len(expected_letters)} redelivered)")
    assert replies == expected_replies
    # at-least-once: a redelivered record is dead-lettered again, under the same event id
    assert {x.question_id.encode() for x in letters if x.question_id} == expected_letters
    assert len({x.event_id for x in letters}) == len(expected_letters)
    assert all(letter.reason and letter.origin_topic == topics.route_decided for letter in letters)
    assert all(r.stage == "plan" for r in letters)
    assert all(runner.counts["failed"] == 0 for runner in processor.runners)
