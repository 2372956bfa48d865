"""Which records past a partition's committed offset are already done, as commit metadata.

In exactly-once mode a record that finished behind a slow one does not wait for it: its
outputs commit in a transaction whose offset commit stays at the slow record (the first one
not finished) and whose metadata lists the finished offsets beyond it. Both land in the same
transaction, so whoever resumes the partition reads the offset and the list together and
skips the listed records: their outputs are already out. (Confluent's Parallel Consumer
keeps its incomplete offsets in the commit metadata the same way.)

The list is a bitset over the offsets after the committed one, base64, behind a version tag.
It covers at most `SPAN` offsets, so it stays far below the broker's limit on commit metadata
(`offset.metadata.max.bytes`, 4096 by default); a record finished further out waits for the
committed offset to come closer.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable

SPAN = 8192  # offsets a map covers: 1 KiB, 1,366 characters of metadata
_TAG = "done1:"


def encode(committed: int, done: Iterable[int]) -> str:
    """The metadata that says `done` (offsets after `committed`) are finished; "" for none."""
    bits = bytearray(SPAN // 8)
    last = -1
    for offset in done:
        i = offset - committed - 1
        if not 0 <= i < SPAN:
            raise ValueError(f"offset {offset} is outside the map after {committed}")
        bits[i // 8] |= 1 << (i % 8)
        last = max(last, i)
    if last < 0:
        return ""
    return _TAG + base64.urlsafe_b64encode(bytes(bits[: last // 8 + 1])).decode()


def decode(committed: int, metadata: str | None) -> set[int]:
    """The finished offsets after `committed` that `metadata` lists; none when it lists
    nothing or was not written by `encode` (another tool's commit)."""
    if not metadata or not metadata.startswith(_TAG):
        return set()
    try:
        bits = base64.urlsafe_b64decode(metadata.removeprefix(_TAG))
    except (binascii.Error, ValueError):
        return set()
    return {committed + 1 + i * 8 + b for i, byte in enumerate(bits[: SPAN // 8])
            for b in range(8) if byte >> b & 1}
