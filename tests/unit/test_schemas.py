"""The committed JSON Schemas match the models; the contracts hold their seed-000 shape."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from bench.answers import route_event
from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan
from pmflow_gateway.schemas.envelope import replaying_at
from pmflow_gateway.schemas.export import SCHEMA_DIR, rendered


def test_committed_json_schemas_match_the_models() -> None:
    expected = rendered()
    on_disk = {p.name: p.read_bytes() for p in SCHEMA_DIR.glob("*.json")}
    drifted = sorted(n for n in expected if on_disk.get(n) != expected[n])
    assert not drifted, f"run `python -m pmflow_gateway.schemas.export`: {drifted} drifted"
    assert set(on_disk) == set(expected)


def test_plan_has_the_13_fields_of_seed_000() -> None:
    assert list(ExternalQueryPlan.model_fields) == [
        "plan_version", "query_kind", "answer_contract", "freshness_required", "topic",
        "subject_entities", "location_hint", "time_range_hint", "preferred_domains",
        "search_queries", "result_limit", "requires_multi_source", "clarify_on_ambiguity"]


def test_evidence_has_the_10_fields_of_seed_000() -> None:
    assert list(ExternalEvidence.model_fields) == [
        "source_type", "source_label", "title", "target_url", "snippet", "retrieved_at",
        "freshness_score", "authority_score", "grounded_fields", "raw_metadata"]


def test_probe_snapshot_keeps_numbers_and_drops_text() -> None:
    from pmflow_gateway.schemas import RouteDecided
    from pmflow_gateway.schemas.examples import ROUTE_DECIDED as example

    probe = {"hits": 3, "score": 0.82, "top_snippet": "内部周报：下周发布", "flag": True,
             "nested": {"snippet": "internal"}, "items": [{"snippet": "internal"}],
             "nan": float("nan")}
    route = RouteDecided.model_validate({**example, "probe_snapshot": probe})
    assert route.probe_snapshot == {"hits": 3, "score": 0.82}
    assert route.routing().probe_snapshot == {"hits": 3, "score": 0.82}
    assert "内部" not in route.routing().model_dump_json()


def test_stage_event_ids_are_the_name_based_uuid5_of_tenant_question_and_stage() -> None:
    import uuid

    from pmflow_gateway.schemas.envelope import _EVENT_NAMESPACE, stage_event_id

    for tenant, question, stage in [("acme", "q-1", "answer"), ("租户", "问题-🙂", "plan"),
                                    ("t", "x" * 200, "memory")]:
        expected = uuid.uuid5(_EVENT_NAMESPACE, f"{tenant}\x1f{question}\x1f{stage}")
        assert stage_event_id(tenant, question, stage) == str(expected)
    assert stage_event_id("a", "q", "plan") != stage_event_id("b", "q", "plan")


def test_a_lists_bound_is_checked_by_its_validator_not_by_a_python_function() -> None:
    # A bound written after a validator in `Annotated` costs a Python call per field per
    # event; written before it, pydantic-core checks it (`clipped`'s docstring).
    from pydantic import TypeAdapter

    from pmflow_gateway.schemas.contracts import Lines, Terms
    from pmflow_gateway.schemas.events import Attempts, Citations, EvidenceItems, SourcesUsed

    for bounded in (Terms, Lines, Attempts, Citations, SourcesUsed, EvidenceItems):
        schema = TypeAdapter(bounded).core_schema
        assert schema["type"] == "function-before", schema["type"]  # the clip, then
        assert schema["schema"]["type"] == "list" and "max_length" in schema["schema"]


def test_a_clipped_text_may_hold_a_lone_surrogate() -> None:
    # Outside text can (a page decoded leniently, an adapter's error): it costs that
    # character where it is stored, never the event (pydantic-core cannot count it).
    from pmflow_gateway.schemas import AdapterAttempt

    attempt = AdapterAttempt(adapter="mcp", outcome="error", error="boom: a\x00b\ud800c")
    assert attempt.error == "boom: a\x00b\ud800c"
    assert ExternalEvidence.model_validate({
        "source_type": "mcp_search", "source_label": "x", "title": "t\ud800",
        "target_url": "https://example.com/a", "snippet": "s\udfff" * 3000,
        "retrieved_at": "2026-12-06T00:00:00Z"}).snippet.startswith("s\udfff")


def test_clipped_fields_are_cut_and_their_bounds_still_refuse() -> None:
    import pytest
    from pydantic import ValidationError

    from pmflow_gateway.schemas.contracts import MAX_TERMS, NAME_CHARS

    base = {"query_kind": "news", "answer_contract": "direct_fact", "topic": "t"}
    plan = ExternalQueryPlan.model_validate(
        {**base, "subject_entities": ["x" * 500] * 40})
    assert len(plan.subject_entities) == MAX_TERMS
    assert {len(s) for s in plan.subject_entities} == {NAME_CHARS}
    with pytest.raises(ValidationError, match="at most 16 items"):
        # Only a list or a text is cut: anything else is refused over the bound.
        ExternalQueryPlan.model_validate({**base, "subject_entities": ("x",) * 40})


def test_an_event_from_the_future_is_refused_unless_a_replay_of_that_moment() -> None:
    label = {"question": "weather tomorrow in lantern bay maine", "locale": "en-US"}
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    with pytest.raises(ValidationError, match="in the future"):
        route_event(label, tomorrow)
    with replaying_at(tomorrow):  # bench.answers on a corpus served tomorrow
        assert route_event(label, tomorrow).occurred_at == tomorrow
    with pytest.raises(ValidationError, match="in the future"):
        route_event(label, tomorrow)
