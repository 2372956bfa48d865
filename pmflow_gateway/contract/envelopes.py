"""What a stage's output carries over from the event it was made from, and the id that names it.

An event id names one content. A stage may see the same input twice (a crash, a rebalance, a
paused worker) and need not make the same output twice: the providers may answer otherwise,
the clock moved on. So an output's id is a digest of its content, not of its input: a
redelivered input whose output comes out the same gets the same id (a consumer that dedupes
by id drops the copy), one whose output differs gets another id (no consumer drops a
different answer as a copy of the first). Making outputs deterministic instead cannot work:
the evidence stage reports what the outside world said at one moment.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, TypedDict, TypeVar

from pydantic import TypeAdapter

from pmflow_gateway.schemas import ExternalEvidence, content_id, stage_event_id
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope

E = TypeVar("E", bound=Frozen)


class Header(TypedDict):
    event_id: str
    question_id: str
    tenant_id: str
    occurred_at: datetime


def header_after(event: Envelope, stage: str, now: datetime) -> Header:
    """The envelope of what `stage` makes from `event`: the same question and tenant. Its
    event id is provisional: the stage runtime names the finished output by its content
    (`identified`) before anything reads it."""
    return Header(event_id=stage_event_id(event.tenant_id, event.question_id, stage),
                  question_id=event.question_id, tenant_id=event.tenant_id, occurred_at=now)


# What two copies of one content may differ in: when each was made, and how long its work
# took. Everything else is content.
_NOT_CONTENT: dict[str, Any] = {
    "event_id": True, "occurred_at": True,
    "context": {"deadline_at": True, "expires_at": True, "stage_timings_ms": True},
    "planner": {"latency_ms": True},
    "attempts": {"__all__": {"latency_ms": True}},
    "bundle": {"items": {"__all__": {"retrieved_at": True}}},
    "kept": {"__all__": {"retrieved_at": True}},
    "dropped": {"__all__": {"item": {"retrieved_at": True}}},
}
_ITEMS: TypeAdapter[list[ExternalEvidence]] = TypeAdapter(list[ExternalEvidence])


def identified(event: E) -> E:
    """`event` under the id of its content (see the module's docstring)."""
    content = event.__pydantic_serializer__.to_json(event, exclude=_NOT_CONTENT)
    return event.model_copy(update={"event_id": content_id(type(event).__name__, content)})


def execution_id(tenant_id: str, question_id: str, items: list[ExternalEvidence]) -> str:
    """The id of one execution's evidence: the same items, the same execution."""
    content = _ITEMS.dump_json(items, exclude={"__all__": {"retrieved_at": True}})
    return content_id("execution", f"{tenant_id}\x1f{question_id}\x1f".encode() + content)


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started`, a `time.perf_counter()` reading, as stage timings keep them."""
    return round((time.perf_counter() - started) * 1000, 3)
