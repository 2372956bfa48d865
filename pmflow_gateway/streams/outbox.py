"""Where a record's sends go in exactly-once mode: into its outbox, for its transaction."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]


_outbox: contextvars.ContextVar[list[Output] | None] = contextvars.ContextVar(
    "pmflow_outbox", default=None)


def held_outputs() -> list[Output] | None:
    """The outbox of the record being processed in exactly-once mode, else None (send now)."""
    return _outbox.get()


@contextlib.contextmanager
def holding() -> Iterator[list[Output]]:
    """Sends made inside go to the outbox this yields instead of the broker."""
    outbox: list[Output] = []
    token = _outbox.set(outbox)
    try:
        yield outbox
    finally:
        _outbox.reset(token)
