"""The real Clock, the system's time in UTC; and a stopped one, for questions asked of a corpus
written for one day (`bench.answers`)."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class StoppedClock:
    """Always the same time: the moment a test corpus is served at."""

    def __init__(self, at: datetime) -> None:
        self._at = at

    def now(self) -> datetime:
        return self._at
