"""A misbehaving MCP server for tests, speaking raw JSON-RPC so it can break every rule.

Run it as a script (it imports nothing from this repository):
`python tests/support/hostile_mcp.py` serves stdio, `... --http PORT` streamable HTTP on
127.0.0.1. Its `search` tool answers three fresh hits about Guangzhou's weather, unless its
arguments ask for something hostile (the gateway's config passes extra arguments through
`search_args`):

- `hits: N`: N hits in one result (one JSON line of N x ~200 bytes);
- `server_requests: N`: N `ping` requests to the client before the result;
- `form: K`: one hit whose URL is `PRIVATE_URLS[K]`, otherwise about the question;
- `stderr: [LINE, ...]`: lines written to stderr (forged log lines) before answering.

`stall {seconds}` makes every search answer no earlier than that many seconds from now,
whichever connection asked (a server stuck on its backend).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

# Seventeen spellings of a place a reply must never send a reader to.
PRIVATE_URLS = (
    "http://10.1.2.3/report",
    "http://172.16.5.4/status",
    "http://192.168.1.20/admin",
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://127.0.0.1:5432/",
    "http://localhost:8080/weather",
    "http://printer.local/weather",
    "http://db.corp.internal/weather",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://2130706433/weather",
    "http://0177.0.0.1/weather",
    "http://0x7f.1/weather",
    "http://[::1]:8080/weather",
    "http://[::ffff:169.254.169.254]/latest/",
    "http://[fd00::5]/weather",
    "http://100.64.0.7/weather",
    "http://intranet/weather",
)
TOOLS = [
    {"name": "search", "description": "Search.",
     "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
    {"name": "stall", "description": "Answer no search for a while.",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
]
HIT = ('{"title":"广州天气预报 未来5天 第%d条","url":"https://news%d.example.com/gz/%d",'
       '"snippet":"广州未来5天天气预报：多云转晴，气温22到28度，东南风2级。",'
       '"published_at":"%s"}')


class Hostile:
    def __init__(self) -> None:
        self.stalled_until = 0.0

    async def answer(self, message: dict[str, Any]) -> tuple[list[str], str | None]:
        """(messages the server sends first, then its reply: one JSON text or None)."""
        method, ident = message.get("method"), message.get("id")
        if method is None or ident is None:  # a notification, or the client's own reply
            return [], None
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            return [], _result(ident, {"protocolVersion": version,
                                       "capabilities": {"tools": {}},
                                       "serverInfo": {"name": "hostile", "version": "1"}})
        if method == "tools/list":
            return [], _result(ident, {"tools": TOOLS})
        if method == "ping":
            return [], _result(ident, {})
        if method != "tools/call":
            return [], json.dumps({"jsonrpc": "2.0", "id": ident,
                                   "error": {"code": -32601, "message": "Method not found"}})
        params = message.get("params", {})
        arguments = params.get("arguments", {}) or {}
        if params.get("name") == "stall":
            self.stalled_until = time.monotonic() + float(arguments.get("seconds", 0))
            return [], _result(ident, _content("stalled"))
        return await self.search(ident, arguments)

    async def search(self, ident: Any, arguments: dict[str, Any]) -> tuple[list[str], str]:
        await asyncio.sleep(max(self.stalled_until - time.monotonic(), 0))
        if "stderr" in arguments:
            sys.stderr.write("".join(f"{line}\n" for line in arguments["stderr"]))
            sys.stderr.flush()
        first = [json.dumps({"jsonrpc": "2.0", "id": f"srv-{n}", "method": "ping"})
                 for n in range(int(arguments.get("server_requests", 0)))]
        published = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        if "form" in arguments:
            url = PRIVATE_URLS[int(arguments["form"])]
            hits = json.dumps([{"title": "广州天气预报 未来5天", "url": url,
                                "snippet": "广州未来5天天气预报：多云转晴，气温22到28度。",
                                "published_at": published}], ensure_ascii=False)
        else:
            count = int(arguments.get("hits", 3))
            hits = "[" + ",".join(HIT % (n, n, n, published) for n in range(count)) + "]"
        return first, (f'{{"jsonrpc":"2.0","id":{json.dumps(ident)},"result":'
                       f'{{"content":[{{"type":"text","text":"hits below"}}],'
                       f'"structuredContent":{{"results":{hits}}},"isError":false}}}}')


def _content(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _result(ident: Any, result: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result})


async def serve_stdio(server: Hostile) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    lock = asyncio.Lock()

    async def handle(message: dict[str, Any]) -> None:
        first, reply = await server.answer(message)
        async with lock:
            for line in [*first, *([reply] if reply else [])]:
                writer.write(line.encode() + b"\n")
                await writer.drain()

    tasks = set()
    while line := await reader.readline():
        if line.strip():
            task = asyncio.create_task(handle(json.loads(line)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


def http_app(server: Hostile) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    async def mcp(request: Request) -> Response:
        if request.method == "GET":
            return Response(status_code=405)
        if request.method == "DELETE":
            return Response(status_code=200)
        message = json.loads(await request.body())
        first, reply = await server.answer(message)
        if reply is None:
            return Response(status_code=202)
        headers = {"mcp-session-id": uuid.uuid4().hex} if message["method"] == "initialize" \
            else {}
        if not first:
            return StreamingResponse(_chunks(reply), media_type="application/json",
                                     headers=headers)
        return StreamingResponse(_events([*first, reply]), media_type="text/event-stream",
                                 headers=headers)

    return Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])])


async def _chunks(text: str) -> AsyncIterator[bytes]:
    data = text.encode()
    for start in range(0, len(data), 1 << 16):
        yield data[start:start + (1 << 16)]


async def _events(messages: list[str]) -> AsyncIterator[bytes]:
    for message in messages:
        yield f"event: message\ndata: {message}\n\n".encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    server = Hostile()
    if args.http is None:
        asyncio.run(serve_stdio(server))
        return
    import uvicorn

    uvicorn.run(http_app(server), host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
