"""A question whose JSON carries half a surrogate pair (`\\ud800`, as a question cut inside
an emoji has) is answered: on the real broker (before, it got no reply, only a dead letter
saying "unexpected end of hex escape"), and by the agent tools over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import orjson
import pytest

from pmflow_gateway.schemas import AnswerStatus, ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.support.kafka import collect, produce
from tests.support.processors import running

pytestmark = pytest.mark.kafka


async def test_a_lone_surrogate_escape_gets_an_answer(kafka_bootstrap: str,
                                                     topics: Topics) -> None:
    cut = orjson.dumps({**ROUTE_DECIDED, "question_id": "cut-emoji"}).replace(
        b'"question":"', rb'"question":"\ud83d')
    async with running(kafka_bootstrap, topics):
        await produce(kafka_bootstrap, topics.route_decided, [(b"cut-emoji", cut)])
        records = await collect(kafka_bootstrap, [topics.reply_rendered, topics.dead_letter],
                                until=lambda rs: len(rs) >= 1, settle_s=1.0)
    replies = [ReplyRendered.model_validate_json(r.value) for r in records
               if r.topic == topics.reply_rendered]
    print(f"\nlone surrogate: replies={len(replies)}, "
          f"dead_letters={sum(r.topic == topics.dead_letter for r in records)}")
    assert [(r.question_id, r.status) for r in replies] == [("cut-emoji", AnswerStatus.answered)]


async def test_an_agent_tool_request_with_a_lone_surrogate_escape_gets_an_answer(
        tmp_path: Path) -> None:
    """Over stdio the MCP SDK drops a line it cannot parse without a word: the request had no
    reply at all, and its client waited for ever."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "external_search", "arguments": {
                "question": "SURROGATE" + ROUTE_DECIDED["question"], "tenant_id": "acme"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    wire = b"".join(orjson.dumps(line).replace(b"SURROGATE", rb"\ud83d") + b"\n"
                    for line in lines)
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pmflow_gateway.cli", "mcp", "--demo",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PMFLOW_DATA_DIR": str(tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": ""})
    assert server.stdin is not None and server.stdout is not None
    replies: dict[int, dict[str, object]] = {}
    try:
        server.stdin.write(wire)
        await server.stdin.drain()
        async with asyncio.timeout(60):
            while not {2, 3} <= set(replies):
                reply = orjson.loads(await server.stdout.readline())
                replies[reply["id"]] = reply
    except TimeoutError:
        pass
    finally:
        server.stdin.close()
        await server.wait()
    print(f"\nagent tools over stdio: replies to {sorted(replies)} of [1, 2, 3]")
    assert sorted(replies) == [1, 2, 3]
    result = replies[2]["result"]
    assert isinstance(result, dict) and not result.get("isError")
    assert result["structuredContent"]["status"] == "answered"
