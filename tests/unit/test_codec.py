"""Decoding: the documented RouteDecided is accepted as is; poison gets a clear reason."""

from __future__ import annotations

import json

import orjson
import pytest

from pmflow_gateway.contract.judged import Judged
from pmflow_gateway.schemas import PlanCreated, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.codec import KEPT_BYTES, Poison, decode, encode

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


def test_headers_keep_bytes_and_drop_null_values() -> None:
    from pmflow_gateway.streams.codec import record_headers

    raw = [("x-note", b"\xff\xfe"), ("traceparent", None), ("ok", b"v")]
    assert record_headers(raw) == [("x-note", b"\xff\xfe"), ("ok", b"v")]
    assert record_headers(None) == []


def test_a_list_past_its_bound_is_poison_with_the_reason() -> None:
    value = orjson.dumps({**ROUTE_DECIDED, "sources": [{}] * 330_000})
    assert len(value) < MAX
    with pytest.raises(Poison, match="sources"):
        decode(RouteDecided, value, max_bytes=MAX)


def test_producer_errors_no_retry_can_fix_are_told_apart() -> None:
    from aiokafka.errors import (
        KafkaConnectionError,
        KafkaTimeoutError,
        KafkaUnavailableError,
        MessageSizeTooLargeError,
        NotLeaderForPartitionError,
        OutOfOrderSequenceNumber,
        RecordTooLargeError,
        TopicAuthorizationFailedError,
    )

    from pmflow_gateway.streams.delivery import can_succeed_later

    assert all(can_succeed_later(e()) for e in (KafkaTimeoutError, KafkaConnectionError,
                                                NotLeaderForPartitionError, KafkaUnavailableError,
                                                OutOfOrderSequenceNumber))
    assert not any(can_succeed_later(e()) for e in (MessageSizeTooLargeError, RecordTooLargeError,
                                                    TopicAuthorizationFailedError))


@pytest.mark.parametrize(("change", "reason"), [
    ({"tenant_id": "   "}, "tenant_id"),
    ({"tenant_id": "acme\x00"}, "tenant_id"),
    ({"question_id": "q\x00"}, "question_id"),
    ({"occurred_at": "9999-12-31T23:59:59+00:00"}, "occurred_at"),
])
def test_blank_or_nul_ids_and_future_dates_are_poison(change: dict[str, str],
                                                      reason: str) -> None:
    with pytest.raises(Poison, match=reason):
        decode(RouteDecided, orjson.dumps({**ROUTE_DECIDED, **change}), max_bytes=MAX)


def test_duplicate_json_keys_are_poison_at_any_depth() -> None:
    body = orjson.dumps(ROUTE_DECIDED)
    twice = body.replace(b'"tenant_id":"acme"', b'"tenant_id":"acme","tenant_id":"other"')
    nested = body.replace(b'"needs_freshness":true',
                          b'"needs_freshness":true,"needs_freshness":false')
    spaced = json.dumps({**ROUTE_DECIDED, "tenant_id": "acme"}, indent=1).replace(
        '"tenant_id": "acme"', '"tenant_id": "acme", "tenant_id": "other"').encode()
    for value in (twice, nested, spaced):
        with pytest.raises(Poison, match="duplicate JSON key"):
            decode(RouteDecided, value, max_bytes=MAX)
    # A record with no duplicate decodes whether or not it is written compactly.
    assert decode(RouteDecided, body, max_bytes=MAX).tenant_id == "acme"
    assert decode(RouteDecided, json.dumps(ROUTE_DECIDED, indent=1).encode(),
                  max_bytes=MAX).tenant_id == "acme"
    deep = b"[" * 100_000 + b"]" * 100_000  # too deep for the scan: the model still says why
    with pytest.raises(Poison, match=r"schema violation|not JSON"):
        decode(RouteDecided, deep, max_bytes=MAX)


def test_key_partitioner_chooses_what_the_default_partitioner_chooses() -> None:
    from aiokafka.partitioner import DefaultPartitioner

    from pmflow_gateway.streams.delivery import key_partitioner

    keys = [f"q-{i:06d}".encode() for i in range(500)] + [b"x" * 300, "问题-1".encode()]
    for count in (1, 3, 6, 7):
        partitions = list(range(count))
        for key in keys:
            twice = [key_partitioner(key, partitions, partitions) for _ in range(2)]
            assert twice == [DefaultPartitioner()(key, partitions, partitions)] * 2
    assert key_partitioner(None, [0, 1, 2], [1]) == 1  # no key: an available partition


def test_a_shared_record_is_decoded_once_and_poison_is_refused_every_time() -> None:
    body = orjson.dumps({**ROUTE_DECIDED, "question": "shared once"})
    alone = decode(RouteDecided, body, max_bytes=MAX)
    # A topic only one stage reads is not kept: its records would push the shared ones out.
    assert decode(RouteDecided, body, max_bytes=MAX) is not alone
    first = decode(RouteDecided, body, max_bytes=MAX, shared=True)
    assert decode(RouteDecided, body, max_bytes=MAX) is first
    bad = orjson.dumps({**ROUTE_DECIDED, "tenant_id": ""})
    for _ in range(2):
        with pytest.raises(Poison):
            decode(RouteDecided, bad, max_bytes=MAX, shared=True)


def test_what_this_process_wrote_is_read_back_without_parsing_it_again() -> None:
    event = RouteDecided.model_validate({**ROUTE_DECIDED, "question": "written here"})
    value = encode(event)
    assert decode(RouteDecided, value, max_bytes=MAX) is event
    # Only those exact bytes, as that model, and never past the size bound.
    assert decode(RouteDecided, value + b" ", max_bytes=MAX) is not event
    assert decode(RouteDecided, value + b" ", max_bytes=MAX) == event
    with pytest.raises(Poison, match="oversize"):
        decode(RouteDecided, value, max_bytes=len(value) - 1)
    with pytest.raises(Poison):
        decode(PlanCreated, value, max_bytes=MAX)


def test_the_kept_events_are_bounded_oldest_first() -> None:
    known: Judged[RouteDecided] = Judged(maxsize=2)
    events = [RouteDecided.model_validate({**ROUTE_DECIDED, "question": f"q{i}"})
              for i in range(3)]
    for i, event in enumerate(events):
        known.keep((f"v{i}".encode(),), event)
    assert [known.kept((f"v{i}".encode(),)) for i in range(3)] == [None, events[1], events[2]]
    # Over the size bound: decoded every time, never kept.
    big = orjson.dumps({**ROUTE_DECIDED, "question": "x" * 100}) + b" " * KEPT_BYTES
    assert decode(RouteDecided, big, max_bytes=2 * KEPT_BYTES, shared=True) is not decode(
        RouteDecided, big, max_bytes=2 * KEPT_BYTES, shared=True)


@pytest.mark.parametrize("escape", [rb"\ud800", rb"\udfff", rb"\ud83d\ud83d", rb"x\ud800"])
def test_a_lone_surrogate_escape_becomes_a_replacement_character(escape: bytes) -> None:
    """JSON's grammar allows half a surrogate pair (a question cut inside an emoji); no text
    can hold one, so it is read as U+FFFD and the question is answered."""
    value = orjson.dumps(ROUTE_DECIDED).replace(b'"question":"', b'"question":"' + escape)
    event = decode(RouteDecided, value, max_bytes=MAX)
    assert event.question.endswith(ROUTE_DECIDED["question"])
    assert "\ufffd" in event.question
    assert decode(RouteDecided, encode(event), max_bytes=MAX) == event


def test_keys_that_differ_only_in_broken_characters_are_refused() -> None:
    value = orjson.dumps(ROUTE_DECIDED).replace(
        b'"probe_snapshot":{}', rb'"probe_snapshot":{"\ud800":1,"\udc00":2}')
    with pytest.raises(Poison, match="undecodable"):
        decode(RouteDecided, value, max_bytes=MAX)
