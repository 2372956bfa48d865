"""A long-lived connection to one MCP server, and the circuit breaker that guards it.

The SDK's `Client` holds anyio task groups, which must be exited by the task that entered
them; questions arrive in many tasks. So one background task owns each connection (enters
the client, waits for `stop`, exits it) and every question just sends requests through it.
A connection is never closed under calls in flight unless it broke: one that is replaced
(`retire`) closes when its last call ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult

from pmflow_gateway.adapters.mcp_config import McpServerConfig
from pmflow_gateway.adapters.mcp_transport import Connection, open_transport

# The SDK's own shutdown of a stdio server is bounded (stdin, SIGTERM, SIGKILL); this covers
# an HTTP server that never answers the closing DELETE.
STOP_BOUND_S = 8.0


@dataclass(eq=False)
class _Live:
    """One opened connection and the calls it carries."""

    client: asyncio.Future[Client]
    stop: asyncio.Event
    owner: asyncio.Task[None]
    wire: Connection
    calls: int = 0
    retired: bool = field(default=False)

    def usable(self) -> bool:
        if self.owner.done() or self.wire.closed or self.wire.exhausted:
            return False
        return not (self.client.done() and self.client.exception() is not None)


class McpSession:
    """Started on first use, reused by every question, replaced after a broken connection."""

    def __init__(self, config: McpServerConfig) -> None:
        self._config = config
        self._current: _Live | None = None
        self._retired: set[_Live] = set()
        self._stopping: set[asyncio.Task[None]] = set()
        self.connects = 0
        """How many times a connection was opened: tests check reuse with it."""

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """One tools/call. The caller bounds it (cancelling is safe: the SDK sends
        notifications/cancelled). Raises on transport failure, after which the next call
        opens a new connection."""
        live = self._take()
        try:
            # Shielded: a question that times out while we connect must not kill the
            # connection the next question will use.
            client = await asyncio.shield(live.client)
            return await client.call_tool(tool, arguments)
        except (asyncio.CancelledError, TimeoutError):
            raise  # slow is not broken: keep the connection for the next question
        except MCPError as exc:
            # CONNECTION_CLOSED on a wire still open is one HTTP response that broke; any
            # other code is the server answering.
            if exc.code == CONNECTION_CLOSED and live.wire.closed:
                self._retire(live)
            raise
        except Exception:
            self._retire(live)
            raise
        finally:
            self._release(live)

    async def connect(self) -> None:
        live = self._take()
        try:
            await asyncio.shield(live.client)
        finally:
            self._release(live)

    def retire(self) -> None:
        """Send the next calls to a new connection; the current one closes once the calls
        it carries have ended (a stuck server is not asked again, nothing is cut short)."""
        if self._current is not None:
            self._retire(self._current)

    async def aclose(self) -> None:
        for live in [*self._retired, *([self._current] if self._current else [])]:
            self._stop_later(live)
        self._current = None
        self._retired.clear()
        await asyncio.gather(*self._stopping, return_exceptions=True)

    def _take(self) -> _Live:
        if self._current is None or not self._current.usable():
            if self._current is not None:
                self._retire(self._current)
            self._current = self._open()
        self._current.calls += 1
        return self._current

    def _release(self, live: _Live) -> None:
        live.calls -= 1
        if live.retired and live.calls == 0:
            self._stop_later(live)

    def _retire(self, live: _Live) -> None:
        if live is self._current:
            self._current = None
        if live.retired:
            return
        live.retired = True
        if live.calls == 0:
            self._stop_later(live)
        else:
            self._retired.add(live)

    def _open(self) -> _Live:
        client: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        stop, wire = asyncio.Event(), Connection()
        # A fresh context: the connection outlives the question that opened it, so its
        # handshake spans must not land in that question's trace. Each tools/call span is
        # opened in the calling question's task and joins its trace.
        owner = asyncio.create_task(self._own(client, stop, wire),
                                    name=f"mcp-session-{self._config.name}",
                                    context=contextvars.Context())
        self.connects += 1
        return _Live(client=client, stop=stop, owner=owner, wire=wire)

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event,
                   wire: Connection) -> None:
        try:
            async with Client(open_transport(self._config, wire)) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:  # the caller sees it through `ready`
            if not ready.done():
                failure = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                ready.set_exception(failure)
                ready.exception()  # mark retrieved: nobody may be waiting any more
            if not isinstance(exc, Exception):
                raise
        finally:
            wire.closed = True

    def _stop_later(self, live: _Live) -> None:
        self._retired.discard(live)
        task = asyncio.create_task(_stop(live))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)


async def _stop(live: _Live) -> None:
    live.stop.set()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(live.owner), timeout=STOP_BOUND_S)
    if not live.owner.done():
        live.owner.cancel()
        with contextlib.suppress(BaseException):
            await live.owner


class CircuitBreaker:
    """Closed until `failure_threshold` consecutive failures, then open: new calls are
    refused except one probe every `cooldown_s`. Opening never touches calls in flight, and
    any success (a probe's, or a call that started before) closes it."""

    def __init__(self, *, failure_threshold: int, cooldown_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._threshold = max(failure_threshold, 1)
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened = False
        self._next_probe = 0.0

    @property
    def state(self) -> str:
        if not self._opened:
            return "closed"
        return "half_open" if self._clock() >= self._next_probe else "open"

    def refusing(self) -> bool:
        """Whether a call would be refused now (asks without taking the probe)."""
        return self.state == "open"

    def allow(self) -> bool:
        """Whether a call may go out now; while open, the first caller after each
        `cooldown_s` goes out as the probe."""
        if not self._opened:
            return True
        now = self._clock()
        if now < self._next_probe:
            return False
        self._next_probe = now + self._cooldown_s
        return True

    def record_success(self) -> None:
        self._failures = 0
        self._opened = False

    def record_failure(self) -> bool:
        """Count a failure; True when it is the one that opened the circuit."""
        self._failures += 1
        if self._opened or self._failures < self._threshold:
            return False
        self._opened = True
        self._next_probe = self._clock() + self._cooldown_s
        return True
