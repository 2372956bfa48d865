"""A CPU hog: one process busy-looping on one core for as long as the `with` block lasts."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

LOOP = "while True: pass"


@contextmanager
def cpu_hog() -> Iterator[int]:
    """Started here and stopped here: pinned to core 0 where the machine allows it."""
    proc = subprocess.Popen([sys.executable, "-c", LOOP])
    try:
        # Not Linux, or core 0 not ours: any one core will do.
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setaffinity(proc.pid, {0})
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(10)
