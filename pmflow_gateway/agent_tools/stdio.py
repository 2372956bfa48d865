"""The agent tools' stdin, made well-formed before the MCP SDK reads it.

The SDK's stdio transport drops a line it cannot parse without a word, so a request whose
JSON carries half a surrogate pair (`\\ud800`: a question cut inside an emoji) was never
answered. A thread relays the client's lines to the SDK through a pipe put in place of fd 0,
with such escapes read as U+FFFD (`contract.broken_characters`); every other line goes
through untouched, and the client's end of input ends the relay and the session."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from pmflow_gateway.contract.broken_characters import lone_surrogates_replaced


@contextlib.contextmanager
def well_formed_stdin() -> Iterator[None]:
    """While inside, fd 0 is the relay's pipe; afterwards, the client's input again."""
    wire = os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    threading.Thread(target=_relay, args=(os.dup(wire), write_end), daemon=True,
                     name="agent-tools-stdin").start()
    try:
        yield
    finally:
        os.dup2(wire, 0)
        os.close(wire)


def _relay(source: int, sink: int) -> None:
    with open(source, "rb", buffering=0) as client, open(sink, "wb") as sdk:
        for line in client:
            if b"\\ud" in line.lower():
                repaired = lone_surrogates_replaced(line)
                line = repaired + b"\n" if repaired is not None else line
            try:
                sdk.write(line)
                sdk.flush()
            except BrokenPipeError:  # the session ended first
                return
