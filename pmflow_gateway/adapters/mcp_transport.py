"""The wire to one MCP server, stdio or streamable HTTP, with every input bounded.

The SDK's transports read each message whole before parsing it (a stdio line of any length,
an HTTP body of any size), answer every request a server sends, and let a stdio server write
straight onto our stderr, our JSON log. Here, on the SDK's public stream interface:

- no message larger than `max_result_bytes` is ever held: a stdio line is read in chunks and,
  past the limit, only its first and last bytes are kept, enough to name the request it
  answers, which then fails with "result larger than ..."; an HTTP body or event stream
  is cut at the same size and answered the same way;
- at most `max_server_messages` requests and notifications from the server per session
  reach the session; later ones are dropped unanswered and the connection is retired (calls
  in flight finish on it, the next call opens a new one);
- a stdio server's stderr becomes our log records, its text quoted as data.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from subprocess import PIPE
from typing import Any

import anyio
import httpx2
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp.types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    jsonrpc_message_adapter,
)

from pmflow_gateway.adapters.mcp_config import McpServerConfig

log = logging.getLogger(__name__)

# JSON-RPC leaves -32000..-32099 to implementations: ours for a result refused unread.
RESULT_TOO_LARGE = -32090
STDERR_LINE_CHARS = 1000
EDGE_BYTES = 512  # what is kept of each end of an oversized stdio line
STOP_GRACE_S = 2.0  # after stdin closes, then again after SIGTERM, before SIGKILL

_ID = rb'(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")'
# The top-level "id" sits at the start or at the end of a response, beside "jsonrpc".
_ID_AT_START = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID)
_ID_AT_END = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')


@dataclass
class Connection:
    """What the session needs to know of the wire under it."""

    closed: bool = False
    """The server's side ended (or was ended): a failed call means a broken connection."""
    exhausted: bool = False
    """The server sent more requests and notifications than a session may: new calls go to
    a new connection."""


def open_transport(config: McpServerConfig, connection: Connection,
                   ) -> AbstractAsyncContextManager[TransportStreams]:
    """The bounded transport for `config`; `connection.closed` turns true when it ends."""
    inner = _http(config, connection) if config.transport == "http" else _stdio(config)
    return _guarded(inner, config, connection)


def refused(request_id: Any, why: str) -> JSONRPCError:
    """The answer a request gets when its response was refused unread."""
    return JSONRPCError.model_validate({"jsonrpc": "2.0", "id": request_id,
                                        "error": {"code": RESULT_TOO_LARGE, "message": why}})


def too_large(request_id: Any, limit: int) -> JSONRPCError:
    return refused(request_id, f"result larger than {limit} bytes")


# -- what reaches the session -------------------------------------------------------------


@asynccontextmanager
async def _guarded(inner: AbstractAsyncContextManager[TransportStreams], config: McpServerConfig,
                   connection: Connection) -> AsyncIterator[TransportStreams]:
    """Between a transport and the session: counts what the server starts itself."""
    async with inner as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_forward, read, send, config, connection)
            try:
                yield receive, write
            finally:
                tasks.cancel_scope.cancel()


async def _forward(read: Any, send: MemoryObjectSendStream[SessionMessage | Exception],
                   config: McpServerConfig, connection: Connection) -> None:
    started = 0
    async with send:
        try:
            async for item in read:
                if isinstance(item, SessionMessage) and isinstance(
                        item.message, JSONRPCRequest | JSONRPCNotification):
                    started += 1
                    if started > config.max_server_messages:
                        if not connection.exhausted:
                            connection.exhausted = True
                            log.warning("MCP server %s sent more than %d requests and "
                                        "notifications in one session: the rest are dropped "
                                        "and the connection is replaced", config.name,
                                        config.max_server_messages)
                        continue
                await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            connection.closed = True  # before the session sees the end of the stream


# -- stdio --------------------------------------------------------------------------------


@asynccontextmanager
async def _stdio(config: McpServerConfig) -> AsyncIterator[TransportStreams]:
    assert config.command is not None
    process = await anyio.open_process(
        [config.command, *config.args], stdin=PIPE, stdout=PIPE, stderr=PIPE,
        env=get_default_environment() | config.env, start_new_session=True)
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tasks:
            assert process.stdout and process.stdin and process.stderr
            tasks.start_soon(_read_stdout, process.stdout, to_session, config.max_result_bytes)
            tasks.start_soon(_write_stdin, process.stdin, from_session)
            tasks.start_soon(_log_stderr, process.stderr, config.name)
            try:
                yield from_server, to_server
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)


async def _read_stdout(stdout: ByteReceiveStream,
                       send: MemoryObjectSendStream[SessionMessage | Exception],
                       limit: int) -> None:
    lines = Lines(limit)
    async with send:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError, OSError):
            async for chunk in stdout:
                for line in lines.feed(chunk):
                    if isinstance(line, Oversized):
                        request_id = line.request_id()
                        if request_id is None:
                            log.warning("an MCP server sent a message of %d bytes (over %d) "
                                        "answering no request we can name: connection closed",
                                        line.size, limit)
                            return
                        await send.send(SessionMessage(too_large(request_id, limit)))
                    elif line.strip():
                        await send.send(_parse(line))


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        log.info("unreadable message from an MCP server: %s", str(exc)[:200])
        return exc


async def _write_stdin(stdin: ByteSendStream,
                       receive: MemoryObjectReceiveStream[SessionMessage]) -> None:
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with receive:
            async for message in receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdin.send(data.encode() + b"\n")


async def _log_stderr(stderr: ByteReceiveStream, name: str) -> None:
    """Each line the server writes on stderr, as the text of one of our records: a line that
    looks like our log is data inside a record, never a record of its own."""
    lines = Lines(STDERR_LINE_CHARS * 4)
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                             anyio.BrokenResourceError, OSError):
        async for chunk in stderr:
            for line in lines.feed(chunk):
                text = (line.head if isinstance(line, Oversized) else line).decode(
                    "utf-8", "replace").rstrip()
                if text:
                    log.info("MCP server %s stderr: %s", name, text[:STDERR_LINE_CHARS])


async def _stop(process: Process) -> None:
    """Close stdin and give the server time to exit, then SIGTERM, then SIGKILL: the whole
    process group, since a server may run children."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    for next_signal in (signal.SIGTERM, signal.SIGKILL, None):
        with anyio.move_on_after(STOP_GRACE_S):
            await process.wait()
        if process.returncode is not None or next_signal is None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, next_signal)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()


@dataclass(frozen=True)
class Oversized:
    """A line longer than the limit, of which only the two ends were kept."""

    size: int
    head: bytes
    tail: bytes

    def request_id(self) -> Any:
        """The id of the request this message answers, from its first or last bytes."""
        found = _ID_AT_START.match(self.head) or _ID_AT_END.search(self.tail)
        return json.loads(found.group(1)) if found else None


class Lines:
    """Newline-delimited messages from chunks of bytes; none is held past `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._line = bytearray()
        self._size = 0
        self._head = b""

    def feed(self, chunk: bytes) -> Iterator[bytes | Oversized]:
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._add(chunk[start:end])
            yield self._finish()
            start = end + 1
        self._add(chunk[start:])

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        self._line += piece
        if self._size > self._limit:
            if not self._head:
                self._head = bytes(self._line[:EDGE_BYTES])
            del self._line[:-EDGE_BYTES]  # the tail is all that is kept from here on

    def _finish(self) -> bytes | Oversized:
        line: bytes | Oversized
        if self._size > self._limit:
            line = Oversized(self._size, self._head, bytes(self._line))
        else:
            line = bytes(self._line)
        self._line, self._size, self._head = bytearray(), 0, b""
        return line


# -- streamable HTTP ----------------------------------------------------------------------


def _http(config: McpServerConfig,
          connection: Connection) -> AbstractAsyncContextManager[TransportStreams]:
    assert config.url is not None
    client = httpx2.AsyncClient(
        transport=CappedTransport(httpx2.AsyncHTTPTransport(), config.max_result_bytes,
                                  connection),
        timeout=httpx2.Timeout(30.0, read=300.0))
    return _closing(client, streamable_http_client(
        config.url, http_client=client, max_sse_event_size=config.max_result_bytes))


@asynccontextmanager
async def _closing(client: httpx2.AsyncClient,
                   inner: AbstractAsyncContextManager[TransportStreams],
                   ) -> AsyncIterator[TransportStreams]:
    async with client, inner as streams:
        yield streams


class CappedTransport(httpx2.AsyncBaseTransport):
    """No response body past `limit` bytes: a JSON body over it is replaced by the JSON-RPC
    error "result larger than ..." for the request it answers; an event stream ends with
    that error as its last event, or as soon as the server has sent more messages than a
    session may. Bodies come uncompressed, so bytes read are bytes held."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int,
                 connection: Connection | None = None) -> None:
        self._inner = inner
        self._limit = limit
        self._connection = connection or Connection()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        request_id = _request_id(request)
        kind = response.headers.get("content-type", "").lower()
        coding = response.headers.get("content-encoding", "identity").lower()
        if coding not in ("identity", ""):
            await response.aclose()
            return _json_response(request, refused(request_id,
                                                    f"compressed response ({coding}) refused"))
        if kind.startswith("application/json"):
            body = await self._read(response)
            if body is None:
                return _json_response(request, too_large(request_id, self._limit))
            return httpx2.Response(response.status_code, headers=response.headers,
                                   content=body, request=request)
        if kind.startswith("text/event-stream"):
            response.stream = _CappedEvents(response.stream, self._limit, request_id,
                                            self._connection)
        return response

    async def _read(self, response: httpx2.Response) -> bytes | None:
        body = bytearray()
        try:
            async for chunk in response.stream:  # type: ignore[union-attr]
                body += chunk
                if len(body) > self._limit:
                    return None
        finally:
            await response.aclose()
        return bytes(body)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_id(request: httpx2.Request) -> Any:
    try:
        return json.loads(request.content).get("id")
    except (ValueError, AttributeError, httpx2.RequestNotRead):
        return None


def _json_response(request: httpx2.Request, error: JSONRPCError) -> httpx2.Response:
    return httpx2.Response(200, json=error.model_dump(by_alias=True, mode="json"),
                           request=request)


class _CappedEvents(httpx2.AsyncByteStream):
    """An event stream passed on whole events at a time until `limit` bytes or until the
    connection is exhausted; then the request's error as one last event, and the end."""

    def __init__(self, inner: Any, limit: int, request_id: Any,
                 connection: Connection) -> None:
        self._inner, self._limit, self._request_id = inner, limit, request_id
        self._connection = connection

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending, total = bytearray(), 0
        async for chunk in self._inner:
            total += len(chunk)
            why = (f"result larger than {self._limit} bytes" if total > self._limit else
                   "too many server messages" if self._connection.exhausted else None)
            if why is not None:
                if self._request_id is not None:
                    error = refused(self._request_id, why).model_dump_json(by_alias=True)
                    yield f"event: message\ndata: {error}\n\n".encode()
                return
            pending += chunk
            if (boundary := _after_last_event(pending)) > 0:
                yield bytes(pending[:boundary])
                del pending[:boundary]
        if pending:
            yield bytes(pending)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _after_last_event(data: bytearray) -> int:
    """Where the last complete event ends (0: none has yet)."""
    ends = [(found + len(blank)) for blank in (b"\n\n", b"\r\n\r\n", b"\r\r")
            if (found := data.rfind(blank)) != -1]
    return max(ends, default=0)
