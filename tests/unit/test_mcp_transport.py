"""The pure parts of the bounded MCP wire: stdio lines cut at a limit, naming the request an
oversized response answers, and HTTP bodies and event streams cut at the same limit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from pmflow_gateway.adapters.mcp_transport import (
    RESULT_TOO_LARGE,
    CappedTransport,
    Lines,
    Oversized,
)


def test_lines_come_whole_across_chunks_and_none_is_held_past_the_limit() -> None:
    lines = Lines(limit=10)
    out = [*lines.feed(b'{"a":1}\n{"b"'), *lines.feed(b':2}\n'), *lines.feed(b"x" * 50),
           *lines.feed(b"y" * 600), *lines.feed(b"z\nok\n")]
    assert out[:2] == [b'{"a":1}', b'{"b":2}']
    oversized = out[2]
    assert isinstance(oversized, Oversized) and oversized.size == 651
    assert oversized.head.startswith(b"x" * 10) and oversized.tail.endswith(b"yz")
    assert len(oversized.tail) <= 512
    assert out[3] == b"ok"


@pytest.mark.parametrize(("head", "tail", "found"), [
    (b'{"jsonrpc":"2.0","id":7,"result":{"content":[', b"...]}}", 7),
    (b'{"id": "r-1", "jsonrpc": "2.0", "result": {', b"}}", "r-1"),
    (b'{"result":{"structuredContent":{"results":[{"id":99,', b'}]}},"jsonrpc":"2.0","id":4}',
     4),
    (b'{"result":{"x":[', b'{"id":5}]},"jsonrpc":"2.0","id":12}\n', 12),
    (b'{"result":{"x":[{"id":5}', b'{"id":5}]}}', None),  # only nested ids: no request named
])
def test_the_request_an_oversized_response_answers(head: bytes, tail: bytes,
                                                  found: object) -> None:
    assert Oversized(10**8, head, tail).request_id() == found


async def test_an_http_body_past_the_limit_becomes_the_requests_error() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        size = json.loads(request.content)["params"]["size"]
        return httpx2.Response(200, json={"jsonrpc": "2.0", "id": 3, "result": "x" * size})

    transport = CappedTransport(httpx2.MockTransport(handler), limit=1000)
    async with httpx2.AsyncClient(transport=transport) as client:
        small = await client.post("http://mcp.test/mcp", json={"id": 3, "params": {"size": 10}})
        large = await client.post("http://mcp.test/mcp", json={"id": 3,
                                                               "params": {"size": 5000}})
    assert small.json()["result"] == "x" * 10
    error = large.json()
    assert (error["id"], error["error"]["code"]) == (3, RESULT_TOO_LARGE)
    assert "larger than 1000 bytes" in error["error"]["message"]


async def test_an_event_stream_past_the_limit_ends_with_the_requests_error() -> None:
    event = b'event: message\ndata: {"jsonrpc":"2.0","method":"ping","id":"s"}\n\n'

    async def chunks() -> AsyncIterator[bytes]:
        data = event * 100
        for start in range(0, len(data), 100):  # as the network delivers it
            yield data[start:start + 100]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=chunks())

    transport = CappedTransport(httpx2.MockTransport(handler), limit=1000)
    async with httpx2.AsyncClient(transport=transport) as client:
        response = await client.post("http://mcp.test/mcp", json={"id": 9})
    events = [e for e in response.content.split(b"\n\n") if e]
    assert all(e == event.rstrip(b"\n") for e in events[:-1])  # whole events only
    last = json.loads(events[-1].split(b"data: ", 1)[1])
    assert (last["id"], last["error"]["code"]) == (9, RESULT_TOO_LARGE)
    assert len(response.content) < 1000 + 200
