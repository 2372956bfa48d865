"""The verify stage: EvidenceVerified carries the kept evidence and every dropped item with its
reason and contract, validates against its published JSON Schema, and the answer stage
composes from it alone."""

from __future__ import annotations

import json

import jsonschema
import orjson

from pmflow_gateway.handlers.answer import compose_answer
from pmflow_gateway.handlers.verify import verify_collected
from pmflow_gateway.schemas import AnswerStatus, EvidenceVerified
from pmflow_gateway.schemas.export import SCHEMA_DIR
from pmflow_gateway.streams.codec import decode, encode
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, weather_plan

GOOD = evidence("https://www.weather.com.cn/guangzhou/5d", "广州未来5天以多云为主，气温18至25度。")
SECOND = evidence("https://tianqi.example.org/guangzhou", "广州未来5天多云转晴，气温19至26度。")
STALE = evidence("https://old.example.org/guangzhou", "广州未来5天有小雨，气温15至20度。",
                 fresh=0.1)
ELSEWHERE = evidence("https://www.weather.com.cn/shenzhen/5d", "深圳未来5天晴，气温20至28度。")
INTERNAL = evidence("https://acme.example.org/x", "广州未来5天多云。", source_type="feishu")
COPY = GOOD.model_copy()


def test_every_collected_item_is_either_kept_or_dropped_with_its_contract() -> None:
    plan = weather_plan(result_limit=1)
    verified = verify_collected(collected([GOOD, STALE, ELSEWHERE, INTERNAL, COPY, SECOND],
                                          plan=plan), clock=CLOCK)
    assert verified.kept == [GOOD] and verified.conclusion is None
    by_url = {(d.item.target_url, d.contract): d.reason for d in verified.dropped}
    assert len(verified.dropped) == 5
    assert by_url[(STALE.target_url, "freshness")].startswith("stale")
    assert by_url[(ELSEWHERE.target_url, "question")].startswith("off-topic")
    assert "not an external adapter source" in by_url[(INTERNAL.target_url, "source")]
    assert by_url[(COPY.target_url, "source")] == "duplicate url"
    assert by_url[(SECOND.target_url, "limit")].startswith("limit")
    assert verified.verdict.kept == 1 and verified.execution_id == "exec-1"
    assert verified.context.stage_timings_ms["verify"] >= 0


def test_the_event_matches_its_published_schema_and_survives_the_wire() -> None:
    verified = verify_collected(collected([GOOD, STALE]), clock=CLOCK)
    schema = json.loads((SCHEMA_DIR / "EvidenceVerified.json").read_text("utf-8"))
    jsonschema.validate(orjson.loads(encode(verified)), schema)
    assert decode(EvidenceVerified, encode(verified), max_bytes=1_048_576) == verified


async def test_nothing_kept_is_concluded_by_the_verifier_and_is_the_answer() -> None:
    verified = verify_collected(collected([STALE, ELSEWHERE]), clock=CLOCK)
    assert verified.kept == [] and verified.conclusion is not None
    assert verified.conclusion.status is AnswerStatus.freshness_guard
    assert {d.contract for d in verified.dropped} == {"freshness", "question"}
    answer = await compose_answer(verified, clock=CLOCK)
    assert answer.status is AnswerStatus.freshness_guard and answer.sources_used == []
    assert answer.answer == verified.conclusion.answer
    assert answer.reason == verified.conclusion.reason


async def test_the_answer_is_composed_only_from_what_the_verifier_kept() -> None:
    verified = verify_collected(collected([GOOD, SECOND]), clock=CLOCK)
    assert verified.kept == [GOOD, SECOND]
    narrowed = verified.model_copy(update={"kept": [SECOND]})
    answer = await compose_answer(narrowed, clock=CLOCK)
    assert answer.status is AnswerStatus.answered
    assert [s.url for s in answer.sources_used] == [SECOND.target_url]
    assert "18至25" not in answer.answer
    assert set(answer.context.stage_timings_ms) >= {"verify", "answer"}
