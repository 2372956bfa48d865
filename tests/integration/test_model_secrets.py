"""The model path a team configures: the planner and the composer each on their own model
(falling back to the common settings), and the key a secret that reaches the endpoint as
the bearer token and nothing else: not a span, not a log line, not a setting's repr, not
doctor's output. Real local endpoint, the session's tracer provider, every logger at DEBUG."""

from __future__ import annotations

import json
import logging

import pytest

from pmflow_gateway.bootstrap import build_model, build_planner
from pmflow_gateway.handlers.model_composer import ModelComposer
from pmflow_gateway.ops.doctor import check_model
from pmflow_gateway.schemas import ExternalQueryPlan, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.settings import Settings
from tests.fakes import evidence
from tests.support.openai_server import ScriptedOpenAI
from tests.support.traces import session_exporter

PLANNER_KEY = "sk-planner-0123456789abcdefghij"
COMMON_KEY = "sk-common-0123456789abcdefghij"
PLAN = {"query_kind": "weather", "topic": "广州天气", "search_queries": ["广州 天气"],
        "location_hint": "广州", "freshness_required": True}


async def test_each_role_uses_its_own_model_and_key_and_no_key_leaks(
        caplog: pytest.LogCaptureFixture) -> None:
    exporter, _ = session_exporter()
    exporter.clear()
    caplog.set_level(logging.DEBUG)
    with ScriptedOpenAI() as server:
        settings = Settings(llm_base_url=server.base_url, llm_model="common",
                            llm_api_key=COMMON_KEY, llm_planner_model="small-planner",
                            llm_planner_api_key=PLANNER_KEY)
        planner, close = build_planner(settings)
        composer = build_model(settings, "composer")
        assert composer is not None
        server.replies.extend([json.dumps(PLAN, ensure_ascii=False),
                               json.dumps({"answer": "广州多云 [1]", "citations": [1]})])
        try:
            _, info = await planner.plan(RouteDecided.model_validate(ROUTE_DECIDED))
            draft = await ModelComposer(composer).compose(
                "广州天气", ExternalQueryPlan.model_validate(PLAN),
                [evidence("https://weather.example.org/gz", "广州多云")], timeout_s=5)
            doctor = await check_model(settings)
        finally:
            await close()
            await composer.aclose()
    assert info.mode == "model" and info.model == "small-planner"
    assert draft.composer == "model"
    assert [r["model"] for r in server.requests[:2]] == ["small-planner", "common"]
    assert [h["authorization"] for h in server.headers[:2]] == [
        f"Bearer {PLANNER_KEY}", f"Bearer {COMMON_KEY}"]
    assert [c.name for c in doctor] == ["model.planner", "model.composer"]
    spans = exporter.get_finished_spans()
    assert {"chat small-planner", "chat common"} <= {s.name for s in spans}
    seen = " ".join([
        repr(settings), str(settings.model_dump()), settings.model_dump_json(), repr(composer),
        json.dumps([vars(c) for c in doctor]),
        *(str(dict(s.attributes or {})) + str([dict(e.attributes or {}) for e in s.events])
          for s in spans),
        *(f"{r.getMessage()} {r.args}" for r in caplog.records)])
    assert PLANNER_KEY not in seen and COMMON_KEY not in seen


def test_a_role_without_its_own_settings_takes_the_common_ones() -> None:
    common = Settings(llm_base_url="http://models.example/v1", llm_model="m",
                      llm_api_key=COMMON_KEY, llm_composer_base_url="http://big.example/v1")
    planner, composer = common.model_endpoint("planner"), common.model_endpoint("composer")
    assert planner is not None and composer is not None
    assert (planner.base_url, planner.model) == ("http://models.example/v1", "m")
    assert (composer.base_url, composer.model) == ("http://big.example/v1", "m")
    assert composer.api_key is not None and composer.api_key.get_secret_value() == COMMON_KEY
    assert Settings(llm_planner_base_url="http://p.example/v1").model_endpoint("composer") is None
