"""A long-lived connection to one MCP server, and the circuit breaker that guards it.

The SDK's `Client` holds anyio task groups, which must be exited by the task that entered
them; questions arrive in many tasks. So one background task owns each connection (enters
the client, waits for `close`, exits it) and every question just sends requests through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable
from typing import Any

from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CONNECTION_CLOSED, CallToolResult

from pmflow_gateway.adapters.mcp_config import McpServerConfig


class McpSession:
    """Started on first use, reused by every question, restarted after a broken connection."""

    def __init__(self, config: McpServerConfig) -> None:
        self._config = config
        self._lock = asyncio.Lock()
        self._client: asyncio.Future[Client] | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self.connects = 0
        """How many times a connection was opened: tests check reuse with it."""

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """One tools/call. The caller bounds it (cancelling is safe: the SDK sends
        notifications/cancelled). Raises on transport failure, after which the next call
        reconnects."""
        client = await self._connected()
        try:
            return await client.call_tool(tool, arguments)
        except (asyncio.CancelledError, TimeoutError):
            raise  # slow is not broken: keep the connection for the next question
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                await self._discard(client)
            raise  # any other code is the server answering: the connection is fine
        except Exception:
            await self._discard(client)
            raise

    async def connect(self) -> None:
        await self._connected()

    async def _discard(self, broken: Client) -> None:
        """Close `broken` unless it was already replaced: with many calls failing on one dead
        connection, a late failure must not close the fresh connection another call opened."""
        async with self._lock:
            current = self._client
            if current is not None and current.done() and not current.exception() \
                    and current.result() is broken:
                await self._stop_owner()

    async def _connected(self) -> Client:
        async with self._lock:
            if not self._alive():
                await self._stop_owner()
                self._start_owner()
            assert self._client is not None
            pending = self._client
        # Shielded: a question that times out while we connect must not kill the connection
        # the next question will use.
        return await asyncio.shield(pending)

    def _alive(self) -> bool:
        # The owner ends on its own when the connection breaks under it.
        if self._client is None or self._owner is None or self._owner.done():
            return False
        return not (self._client.done() and self._client.exception() is not None)

    def _start_owner(self) -> None:
        loop = asyncio.get_running_loop()
        self._client = loop.create_future()
        self._stop = asyncio.Event()
        # A fresh context: the connection outlives the question that opened it, so its
        # handshake spans must not land in that question's trace. Each tools/call span is
        # opened in the calling question's task and joins its trace.
        self._owner = asyncio.create_task(self._own(self._client, self._stop),
                                          name=f"mcp-session-{self._config.name}",
                                          context=contextvars.Context())
        self.connects += 1

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with Client(self._target()) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:  # the caller sees it through `ready`
            if not ready.done():
                failure = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                ready.set_exception(failure)
                ready.exception()  # mark retrieved: nobody may be waiting any more
            if not isinstance(exc, Exception):
                raise

    def _target(self) -> StdioServerParameters | str:
        config = self._config
        if config.transport == "http":
            assert config.url is not None
            return config.url
        assert config.command is not None
        return StdioServerParameters(command=config.command, args=config.args,
                                     env=config.env or None)

    async def reset(self) -> None:
        """Close the current connection; the next call opens a new one."""
        async with self._lock:
            await self._stop_owner()

    async def _stop_owner(self) -> None:
        owner, stop = self._owner, self._stop
        self._client = self._stop = self._owner = None
        if owner is None or stop is None:
            return
        stop.set()
        # The SDK's own shutdown is bounded (stdin close, SIGTERM, SIGKILL); the outer
        # bound covers an HTTP server that never answers the closing DELETE.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(owner), timeout=8)
        if not owner.done():
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner

    async def aclose(self) -> None:
        await self.reset()


class CircuitBreaker:
    """Closed, then open after `failure_threshold` consecutive failures; after `cooldown_s`
    one probe is let through (half-open): success closes, failure opens again."""

    def __init__(self, *, failure_threshold: int, cooldown_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._threshold = max(failure_threshold, 1)
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        if self._probing or self._clock() - self._opened_at >= self._cooldown_s:
            return "half_open"
        return "open"

    def allow(self) -> bool:
        """Whether a call may go out now; in half-open, only the first caller probes."""
        if self._opened_at is None:
            return True
        if self._probing or self._clock() - self._opened_at < self._cooldown_s:
            return False
        self._probing = True
        return True

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._probing = False

    def record_failure(self) -> None:
        self._failures += 1
        if self._probing or self._failures >= self._threshold:
            self._opened_at = self._clock()
        self._probing = False
