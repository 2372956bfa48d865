"""Decoding: the documented RouteDecided is accepted as is; poison gets a clear reason."""

from __future__ import annotations

import orjson
import pytest

from pmflow_gateway.schemas import RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.codec import Poison, decode, encode

MAX = 1_048_576


def test_the_documented_route_decided_is_accepted_and_round_trips() -> None:
    event = decode(RouteDecided, orjson.dumps(ROUTE_DECIDED), max_bytes=MAX)
    assert event.sources[0].source_label == "Feishu history"
    assert decode(RouteDecided, encode(event), max_bytes=MAX) == event


def test_fields_added_later_are_accepted() -> None:
    doc = {**ROUTE_DECIDED, "new_field": {"x": 1}}
    assert decode(RouteDecided, orjson.dumps(doc), max_bytes=MAX).question_id == "q-20261202-0001"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"{not json", "undecodable"),
        (orjson.dumps({**ROUTE_DECIDED, "tenant_id": ""}), "missing tenant_id"),
        (orjson.dumps({k: v for k, v in ROUTE_DECIDED.items() if k != "tenant_id"}),
         "missing tenant_id"),
        (orjson.dumps({**ROUTE_DECIDED, "schema_version": 2}), "unknown schema_version 2"),
        (orjson.dumps({**ROUTE_DECIDED, "route_mode": "sideways"}),
         "schema violation: route_mode"),
        (orjson.dumps({**ROUTE_DECIDED, "occurred_at": "2026-12-02T08:00:00"}),
         "schema violation: occurred_at"),
        (None, "tombstone"),
    ],
)
def test_poison_has_a_reason(value: bytes | None, reason: str) -> None:
    with pytest.raises(Poison) as caught:
        decode(RouteDecided, value, max_bytes=MAX)
    assert reason in caught.value.reason


def test_oversize_is_poison_before_parsing() -> None:
    with pytest.raises(Poison, match="oversize"):
        decode(RouteDecided, b" " * (MAX + 1), max_bytes=MAX)
