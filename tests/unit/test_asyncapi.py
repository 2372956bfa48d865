"""The AsyncAPI document: valid AsyncAPI 3.0, complete, and identical to the committed copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pmflow_gateway.ops.asyncapi import COMMITTED_PATH, build_document, render
from pmflow_gateway.schemas import Topics
from pmflow_gateway.schemas.events import STAGE_OUTPUTS
from pmflow_gateway.streams.stages import STAGES

SPEC_SCHEMA = Path(__file__).parents[1] / "data" / "asyncapi-3.0.0.schema.json"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    # Through JSON, so the test sees exactly what a reader of the file sees.
    return json.loads(render())


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref" and isinstance(v, str)] + [
            r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_committed_copy_matches_the_code() -> None:
    assert COMMITTED_PATH.read_bytes() == render(), (
        "docs/asyncapi.json is stale: run `pmflow-gateway asyncapi --out docs/asyncapi.json`")


def test_document_is_valid_asyncapi_3(document: dict[str, Any]) -> None:
    validator = jsonschema.Draft7Validator(json.loads(SPEC_SCHEMA.read_text()))
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}"
              for e in validator.iter_errors(document)]
    assert not errors, errors


def test_the_validator_does_catch_a_broken_document(document: dict[str, Any]) -> None:
    validator = jsonschema.Draft7Validator(json.loads(SPEC_SCHEMA.read_text()))
    broken = json.loads(json.dumps(document))
    broken["operations"]["plan-receive"]["action"] = "consume"
    assert not validator.is_valid(broken)


def test_every_reference_resolves(document: dict[str, Any]) -> None:
    for ref in _refs(document):
        assert _resolve(document, ref) is not None, ref
    assert not [r for r in _refs(document) if "$defs" in r]


def test_one_channel_per_topic_with_its_event(document: dict[str, Any]) -> None:
    addresses = {c["address"] for c in document["channels"].values()}
    assert addresses == set(Topics().all())
    carried = {m for c in document["channels"].values() for m in c["messages"]}
    assert carried == set(STAGE_OUTPUTS)


def test_every_stage_receives_from_its_topic_in_its_group(document: dict[str, Any]) -> None:
    topics = Topics()
    operations = document["operations"]
    for name, stage in STAGES.items():
        receive = operations[f"{name}-receive"]
        assert receive["action"] == "receive"
        assert _resolve(document, receive["channel"]["$ref"])["address"] == stage.source(topics)
        assert receive["bindings"]["kafka"]["groupId"]["enum"] == [f"pmflow.gateway-{name}"]
        if stage.sink is not None:
            send = operations[f"{name}-send"]
            assert _resolve(document, send["channel"]["$ref"])["address"] == stage.sink(topics)
        assert f"{name}-send-dead-letter" in operations


def test_messages_carry_key_headers_and_the_model_schema(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for name, model in STAGE_OUTPUTS.items():
        message = document["components"]["messages"][name]
        assert "question_id" in message["bindings"]["kafka"]["key"]["description"]
        headers = _resolve(document, message["headers"]["$ref"])
        assert {"event_type", "traceparent"} <= set(headers["properties"])
        payload = _resolve(document, message["payload"]["$ref"])
        assert set(payload["properties"]) == set(model.model_json_schema()["properties"])
    assert {"ExternalQueryPlan", "QuestionContext", "Verdict"} <= set(schemas)


def test_prefix_changes_addresses_and_groups() -> None:
    document = build_document("acme.")
    assert document["channels"]["routeDecided"]["address"] == "acme.query.route-decided.v1"
    group = document["operations"]["plan-receive"]["bindings"]["kafka"]["groupId"]["enum"]
    assert group == ["acme.gateway-plan"]
