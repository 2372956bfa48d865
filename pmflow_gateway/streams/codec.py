"""Bytes on the wire <-> events. A record that cannot become its event is poison."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from pmflow_gateway.contract.broken_characters import lone_surrogates_replaced
from pmflow_gateway.contract.judged import Judged
from pmflow_gateway.schemas.events import SCHEMA_VERSION

E = TypeVar("E", bound=BaseModel)


class Poison(ValueError):
    """A record no retry can fix; `reason` says why, for the dead-letter topic."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def record_headers(headers: Iterable[tuple[object, object]] | None) -> list[tuple[str, bytes]]:
    """A record's headers as its producer sent them, minus what is not a (text, bytes) pair (a
    null value): values stay bytes, each reader decodes what it needs without failing, so a
    header can never cost its record, let alone the record's batch."""
    return [(k, v) for k, v in headers or () if isinstance(k, str) and isinstance(v, bytes)]


def output_headers(event: BaseModel, *headers: Iterable[tuple[str, bytes]]
                   ) -> list[tuple[str, bytes]]:
    """The headers every output carries: its event type, then `headers` in order."""
    return [("event_type", type(event).__name__.encode()), *(h for hs in headers for h in hs)]


def encode(event: BaseModel) -> bytes:
    """The event's JSON; the event is kept under it for a stage of this process that reads it
    back (`decode`)."""
    # pydantic's own serializer (Rust) writes the JSON directly: no intermediate dict.
    value = event.__pydantic_serializer__.to_json(event)
    if len(value) <= KEPT_BYTES:
        _KNOWN.keep((value,), event)
    return value


def decode(model: type[E], value: bytes | None, *, max_bytes: int, shared: bool = False) -> E:
    """The event in `value`, or `Poison` with a one-line reason. `shared`: other stages of this
    process read the same topic, so the decoded event is kept for them."""
    if value is None:
        raise Poison("empty record (tombstone)")
    if len(value) > max_bytes:
        raise Poison(f"oversize: {len(value)} bytes > {max_bytes}")
    if len(value) > KEPT_BYTES:
        return _decode(model, value)
    known = _KNOWN.kept((value,))
    if type(known) is model:
        return known
    event = _decode(model, value)
    if shared:
        _KNOWN.keep((value,), event)
    return event


def _decode(model: type[E], value: bytes) -> E:
    duplicate = _duplicate_key(value)
    if duplicate is not None:
        raise Poison(f"duplicate JSON key {duplicate!r}: ambiguous, refused")
    try:
        return model.model_validate_json(value)
    except ValidationError as exc:
        repaired = lone_surrogates_replaced(value) if _surrogate_error(exc) else None
        if repaired is not None:
            return _decode(model, repaired)
        raise Poison(_why(exc, value)) from None


def _surrogate_error(exc: ValidationError) -> bool:
    first = exc.errors(include_url=False, include_input=False)[0]
    return first["type"] == "json_invalid" and (
        "surrogate" in first["msg"] or "hex escape" in first["msg"])


# A question's record is parsed and validated once per process, not once per stage: what a
# stage of this process wrote is what the next stage of this process reads (one event parsed
# back from its own JSON is that event: events are immutable), and a topic two stages read
# (render and memory both read every answer) is decoded by the first. Events are kept under a
# digest of their exact bytes (16 bytes a key, not the record); a record not kept (another
# process wrote it, a backlog pushed it out, it is over KEPT_BYTES) is decoded as any, and a
# refused record raises and is never kept. A backlog puts a fast stage thousands of records
# ahead of a slow one: 4096 events (about 7 KB each, 30 MB, in bench's `cpu` scenario) keep
# 80 % of a 5,000-question backlog's records from being parsed a second time (3.8 -> 3.1 ms
# of CPU a question).
KEPT_BYTES = 64 * 1024
_KNOWN: Judged[BaseModel] = Judged(maxsize=4096)


class _Duplicate(Exception):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return found


_PAIRS = json.JSONDecoder(object_pairs_hook=_refuse_duplicates)


def _duplicate_key(value: bytes) -> str | None:
    """The first key an object of `value` repeats, if any. The JSON parsers that build the
    event keep the last of two equal keys, so two readers of one record could see two
    different events; such a record is refused instead. Not JSON: None (the model says why)."""
    try:
        # Quick, and exact: orjson keeps one of two equal keys, so the JSON it writes back can
        # be the record's own bytes only where the record has none. Compact records, as every
        # stage writes them, come back byte for byte: 3 times quicker than the pass below.
        if orjson.dumps(orjson.loads(value)) == value:
            return None
    except (ValueError, TypeError):
        pass  # not JSON orjson reads or writes (NaN, a lone surrogate, a huge number)
    try:
        # What json.loads does with bytes, minus building a decoder per call.
        _PAIRS.decode(value.decode(json.detect_encoding(value), "surrogatepass"))
    except _Duplicate as duplicate:
        return str(duplicate)
    except (ValueError, RecursionError):
        return None
    return None


def _why(exc: ValidationError, value: bytes) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if errors and errors[0]["type"] == "json_invalid":
        return f"undecodable: not JSON ({errors[0]['msg']})"
    try:
        doc = orjson.loads(value)
    except orjson.JSONDecodeError:
        doc = None
    version = doc.get("schema_version", SCHEMA_VERSION) if isinstance(doc, dict) else SCHEMA_VERSION
    if isinstance(doc, dict) and version != SCHEMA_VERSION:
        return f"unknown schema_version {doc['schema_version']!r} (expected {SCHEMA_VERSION})"
    if isinstance(doc, dict) and not doc.get("tenant_id"):
        return "missing tenant_id"
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in errors[:3]]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "schema violation: " + "; ".join(parts) + more
