"""The whole pipeline on the real broker: a RouteDecided produced by a plain client becomes a
ReplyRendered; poison goes to the dead-letter topic with its reason."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest

from pmflow_gateway.schemas import AnswerStatus, DeadLettered, ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.fakes import WEATHER
from tests.support.kafka import collect, produce
from tests.support.processors import running

pytestmark = pytest.mark.kafka


@pytest.fixture
async def processor(kafka_bootstrap: str, topics: Topics) -> AsyncIterator[Processor]:
    async with running(kafka_bootstrap, topics) as proc:
        yield proc


async def test_hand_written_route_decided_yields_reply_with_external_sources_only(
        processor: Processor, kafka_bootstrap: str) -> None:
    topics = processor.topics
    await produce(kafka_bootstrap, topics.route_decided,
                  [(b"q-20261202-0001", orjson.dumps(ROUTE_DECIDED))])
    records = await collect(kafka_bootstrap, [topics.reply_rendered],
                            until=lambda rs: len(rs) >= 1, settle_s=1.0)
    assert len(records) == 1 and records[0].key == b"q-20261202-0001"
    reply = ReplyRendered.model_validate_json(records[0].value)
    assert reply.status is AnswerStatus.answered
    assert [s.url for s in reply.sources] == [WEATHER.target_url]
    assert all(s.url.startswith("https://") for s in reply.sources)
    assert "Feishu" not in reply.text
    assert dict(records[0].headers)["event_type"] == b"ReplyRendered"


async def test_poison_is_dead_lettered_and_the_partition_moves_on(
        processor: Processor, kafka_bootstrap: str) -> None:
    topics = processor.topics
    bad = [(b"k1", b"{not json"), (b"k2", orjson.dumps({**ROUTE_DECIDED, "tenant_id": ""})),
           (b"k3", orjson.dumps({**ROUTE_DECIDED, "schema_version": 9}))]
    good = orjson.dumps({**ROUTE_DECIDED, "question_id": "after-poison"})
    # all on one key's partition would not prove much; the good one follows on every partition
    await produce(kafka_bootstrap, topics.route_decided, [*bad, (b"after-poison", good)])
    records = await collect(kafka_bootstrap, [topics.dead_letter, topics.reply_rendered],
                            until=lambda rs: len(rs) >= 4, settle_s=0.5)
    letters = [DeadLettered.model_validate_json(r.value) for r in records
               if r.topic == topics.dead_letter]
    replies = [r for r in records if r.topic == topics.reply_rendered]
    assert sorted(letter.reason.split(":")[0].split(" ")[0] for letter in letters) == \
        ["missing", "undecodable", "unknown"]
    assert {letter.origin_topic for letter in letters} == {topics.route_decided}
    assert all(letter.original_value for letter in letters)
    assert [r.key for r in replies] == [b"after-poison"]


async def test_internal_decisions_are_skipped_and_counted(
        processor: Processor, kafka_bootstrap: str) -> None:
    topics = processor.topics
    internal = orjson.dumps({**ROUTE_DECIDED, "question_id": "q-int", "route_mode": "internal"})
    external = orjson.dumps({**ROUTE_DECIDED, "question_id": "q-ext"})
    await produce(kafka_bootstrap, topics.route_decided,
                  [(b"q-int", internal), (b"q-ext", external)])
    records = await collect(kafka_bootstrap, [topics.reply_rendered],
                            until=lambda rs: len(rs) >= 1, settle_s=1.0)
    assert [r.key for r in records] == [b"q-ext"]
    plan_runner = next(r for r in processor.runners if r.stage.name == "plan")
    assert plan_runner.counts["skipped"] == 1


async def test_metrics_health_and_readiness_are_served(processor: Processor,
                                                       kafka_bootstrap: str) -> None:
    import httpx

    topics = processor.topics
    await produce(kafka_bootstrap, topics.route_decided,
                  [(b"q-metrics", orjson.dumps({**ROUTE_DECIDED, "question_id": "q-metrics"}))])
    await collect(kafka_bootstrap, [topics.reply_rendered], until=lambda rs: len(rs) >= 1)
    assert processor.health is not None
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{processor.health.port}") as client:
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/readyz")).status_code == 200
        metrics = (await client.get("/metrics")).text
    assert 'pmflow_questions_total{status="answered"}' in metrics
    assert 'pmflow_stage_seconds_count{stage="plan"}' in metrics
    assert 'pmflow_consumer_lag{stage="render"}' in metrics
