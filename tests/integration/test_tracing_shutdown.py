"""With the OTLP collector black-holed (it accepts connections and never answers), a process
still stops: the exporter's flush at shutdown is bounded, the spans it could not send are
dropped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

SCRIPT = """
from pmflow_gateway.tracing import configure_tracing, shutdown_tracing, tracer
assert configure_tracing()
for n in range(2000):
    with tracer.start_as_current_span(f"span {n}"):
        pass
shutdown_tracing()
print("stopped")
"""


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A port that accepts every connection and never sends a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


@pytest.mark.slow
def test_a_black_holed_collector_does_not_hold_the_shutdown(black_hole: int) -> None:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{black_hole}"}
    env.pop("OTEL_SDK_DISABLED", None)
    # The bound the shutdown must keep is a few seconds; an unbounded one waits ~30 s.
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stopped"
