"""How much resident memory a block of code added at its peak (Linux /proc).

Writing 5 to /proc/self/clear_refs resets the process's high-water mark (VmHWM), so the peak
seen after the block is the block's own, not the test session's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Peak:
    added_mb: float = 0.0  # the highest resident size during the block, above where it began


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise LookupError(field)


@contextmanager
def peak_memory() -> Iterator[Peak]:
    peak = Peak()
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_mb("VmRSS")
    try:
        yield peak
    finally:
        peak.added_mb = max(_status_mb("VmHWM") - before, 0.0)
