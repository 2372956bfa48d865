"""Without an SDK, no spans are made, yet PMFlow's trace context still goes on downstream.

Runs in a subprocess: the test session installs an SDK (one per process) for the span tests.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
from pmflow_gateway.tracing import consuming, publishing
parent = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
with consuming(topic="t", partition=0, offset=1, key=b"q", group="g",
               headers=[("traceparent", parent)], stage="plan") as span:
    assert not span.is_recording()
    with publishing("t2", "q") as headers:
        print(dict(headers)["traceparent"].decode())
with consuming(topic="t", partition=0, offset=2, key=b"q", group="g", headers=[],
               stage="plan"):
    with publishing("t2", "q") as headers:
        print(len(headers))
"""


def test_trace_context_passes_through_a_stage_without_an_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    passed_on, without = done.stdout.split()
    assert passed_on.split("-")[1] == "0af7651916cd43dd8448eb211c80319c"  # same trace
    assert without == "0"  # no context in, none made up
