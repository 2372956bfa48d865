"""What a stage's output carries over from the event it was made from."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TypedDict

from pmflow_gateway.schemas import stage_event_id
from pmflow_gateway.schemas.events import Envelope


class Header(TypedDict):
    event_id: str
    question_id: str
    tenant_id: str
    occurred_at: datetime


def header_after(event: Envelope, stage: str, now: datetime) -> Header:
    """The envelope of what `stage` makes from `event`: the same question and tenant, and an
    id that is the same each time the stage sees the same input, so a redelivered input
    yields an output downstream recognises as already seen."""
    return Header(event_id=stage_event_id(event.tenant_id, event.question_id, stage),
                  question_id=event.question_id, tenant_id=event.tenant_id, occurred_at=now)


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started`, a `time.perf_counter()` reading, as stage timings keep them."""
    return round((time.perf_counter() - started) * 1000, 3)
