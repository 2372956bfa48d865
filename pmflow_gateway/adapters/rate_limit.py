"""Token buckets per host, shared by every question a process handles: a busy worker must not
hammer one search engine or one site, whatever the number of questions in flight.

A request waits for its token only while the caller's deadline allows; otherwise it is not
sent at all and its attempt reads `rate_limited`, which is cheaper than being refused (or
served a block page) by the other side.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up; `rate` 0 means no limit."""

    rate: float
    burst: float
    now: Callable[[], float] = time.monotonic
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        self.burst = max(self.burst, 1.0)
        self.tokens, self.updated = self.burst, self.now()

    def _refill(self) -> None:
        current = self.now()
        self.tokens = min(self.burst, self.tokens + (current - self.updated) * self.rate)
        self.updated = current

    def reserve(self, deadline: float) -> float | None:
        """Seconds to wait before the request may go (its token taken now), or None when
        that wait would end after `deadline` (nothing taken)."""
        if self.rate <= 0:
            return 0.0
        self._refill()
        wait = max(0.0, (1.0 - self.tokens) / self.rate)
        if self.updated + wait > deadline:
            return None
        self.tokens -= 1.0  # may go negative: later callers queue behind this one
        return wait

    def drain(self) -> None:
        """The other side said it is overloaded: spend what was saved up."""
        self._refill()
        self.tokens = min(self.tokens, 0.0)


class HostLimits:
    """One bucket per host, created on first use."""

    def __init__(self, rate: float, burst: float, now: Callable[[], float] = time.monotonic,
                 max_hosts: int = 10_000) -> None:
        self.rate, self.burst, self._now = rate, burst, now
        self._max_hosts = max_hosts
        self._buckets: dict[str, TokenBucket] = {}

    def bucket(self, host: str) -> TokenBucket:
        found = self._buckets.get(host)
        if found is None:
            if len(self._buckets) >= self._max_hosts:  # long-idle hosts are full buckets anyway
                self._buckets.clear()
            found = self._buckets[host] = TokenBucket(self.rate, self.burst, self._now)
        return found

    async def acquire(self, host: str, deadline: float) -> bool:
        """True once the request to `host` may go; False, at once, when it could not before
        `deadline` (a `time.monotonic()` value)."""
        wait = self.bucket(host).reserve(deadline)
        if wait is None:
            return False
        if wait > 0:
            await asyncio.sleep(wait)
        return True
