"""What every event carries: the envelope (ids, tenant, time, schema version), how ids are
made, and the bounds on what PMFlow's own fields may hold."""

from __future__ import annotations

import hashlib
import math
import unicodedata
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field

from pmflow_gateway.schemas.contracts import Frozen

SCHEMA_VERSION: Literal[1] = 1
_EVENT_NAMESPACE = uuid.UUID("6f1c6d2e-3a8b-4c1e-9a55-2b1f0c7d9e10")
_NAMESPACE_BYTES = _EVENT_NAMESPACE.bytes


def stage_event_id(tenant_id: str, question_id: str, stage: str) -> str:
    """The same id for the same (tenant, question, stage); two tenants' equal question ids
    never share one."""
    return _uuid5(f"{tenant_id}\x1f{question_id}\x1f{stage}".encode())


def content_id(kind: str, content: bytes) -> str:
    """The same id for the same content of one kind, and a different one for any other."""
    return _uuid5(kind.encode() + b"\x1f" + content)


def _uuid5(name: bytes) -> str:
    # uuid.uuid5 spelled out: the same bytes and bits, without building a UUID object per id.
    raw = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name, usedforsecurity=False).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


MAX_PROBE_FIELDS = 32


def _numbers_only(value: object) -> object:
    """The probe's numbers (hit counts, scores) and nothing else: its text fields are internal
    snippets, and the snapshot travels on to the answer topic and the QA record."""
    if not isinstance(value, dict):
        return value
    numbers = {k: v for k, v in value.items()
               if isinstance(k, str) and len(k) <= 64 and isinstance(v, int | float)
               and not isinstance(v, bool) and math.isfinite(v)}
    return dict(list(numbers.items())[:MAX_PROBE_FIELDS])


ProbeSnapshot = Annotated[dict[str, int | float], Field(max_length=MAX_PROBE_FIELDS),
                          BeforeValidator(_numbers_only)]


# How far a producer's clock may run ahead of ours. An event dated later than that is refused:
# a QA record dated in year 9999 would outrank every later feedback on its question.
CLOCK_SKEW = timedelta(minutes=5)


def _an_identifier(value: str) -> str:
    if not value.strip():
        raise ValueError("blank (whitespace only)")
    # Printable text has no Cc or Cf character: the per-character look-up is for the rest.
    if not value.isprintable() and any(unicodedata.category(c) in ("Cc", "Cf") for c in value):
        raise ValueError("contains a control or invisible character (NUL, ...)")
    return value


# A replay of a recorded moment (`bench.answers` on a corpus served later than today) reads that
# moment as now where it is later than the wall clock; nothing else sets it.
_REPLAYED_AT: ContextVar[datetime | None] = ContextVar("replayed_at", default=None)


@contextmanager
def replaying_at(moment: datetime) -> Iterator[None]:
    token = _REPLAYED_AT.set(moment)
    try:
        yield
    finally:
        _REPLAYED_AT.reset(token)


def _not_in_the_future(value: datetime) -> datetime:
    if value <= datetime.now(UTC) + CLOCK_SKEW:
        return value
    if (replayed := _REPLAYED_AT.get()) is None or value > replayed + CLOCK_SKEW:
        raise ValueError(f"in the future (more than {CLOCK_SKEW} ahead of this clock)")
    return value


Identifier = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_an_identifier)]
OccurredAt = Annotated[AwareDatetime, AfterValidator(_not_in_the_future)]


class Envelope(Frozen):
    event_id: Identifier
    question_id: Identifier
    tenant_id: Identifier
    occurred_at: OccurredAt
    schema_version: Literal[1] = SCHEMA_VERSION
