"""What a caller gets while the database is away or locked: the answer it asked for, with the
memory write's failure said beside it (`ask`, the MCP tool), and questions planned without
memory hints rather than failed (the workers with PMFLOW_MEMORY_DOMAIN_HINTS on)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, Topics
from tests.support.chaos import report, routes
from tests.support.kafka import collect, produce
from tests.support.pg import own_database
from tests.support.processors import running
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

QUESTION = "帮我看看未来 5 天的广州天气如何"


@pytest.fixture
async def database(postgres_url: str) -> AsyncIterator[str]:
    async with own_database(postgres_url) as url:
        await (await SqlMemoryStore.from_url(url)).aclose()
        yield url


def gateway_env(tmp_path: Path, database: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    return {**env, "PMFLOW_DATA_DIR": str(tmp_path), "PMFLOW_DATABASE_URL": database,
            "PMFLOW_DEMO": "1", **extra}


async def test_ask_prints_the_reply_and_says_the_answer_was_not_remembered(
        database: str, tmp_path: Path) -> None:
    """qa_records is locked for longer than the store waits: the reply still comes."""
    engine = create_async_engine(database)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("LOCK TABLE qa_records IN ACCESS EXCLUSIVE MODE"))
            done = await asyncio.to_thread(subprocess.run, [
                sys.executable, "-m", "pmflow_gateway.cli", "ask", QUESTION, "--json"],
                env=gateway_env(tmp_path, database, PMFLOW_DATABASE_TIMEOUT_S="2"),
                capture_output=True, text=True, timeout=60)
    finally:
        await engine.dispose()
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["answer_ready"]["status"] == "answered"
    assert out["reply_rendered"]["text"]
    assert out["memory"]["written"] is False and "database" in out["memory"]["error"]
    assert "warning: the answer was not remembered" in done.stderr
    assert "Traceback" not in done.stderr


async def test_external_search_returns_its_answer_while_the_database_is_away(
        database: str, tmp_path: Path) -> None:
    proxy = await TcpProxy.in_front_of(database).start()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pmflow_gateway.cli", "mcp"],
        env=gateway_env(tmp_path, proxy.url(database), PMFLOW_DATABASE_TIMEOUT_S="3",
                        PMFLOW_AGENT_MEMORY_WRITES="1"))
    try:
        async with Client(params) as client:
            await proxy.refuse()
            away = await client.call_tool("external_search", {"question": QUESTION})
            prior = await client.call_tool("route_prior", {"question": QUESTION})
            await proxy.restore()
            back = await client.call_tool("external_search", {"question": QUESTION})
    finally:
        await proxy.aclose()
    assert not away.is_error, away.content
    assert away.structured_content is not None
    assert away.structured_content["status"] == "answered"
    memory = away.structured_content["memory"]
    assert memory["written"] is False and "database" in memory["error"]
    assert prior.is_error and "database unavailable" in prior.content[0].text  # type: ignore[union-attr]
    assert not back.is_error and back.structured_content is not None
    assert back.structured_content["memory"] == {"written": True, "error": None}


@pytest.mark.kafka
async def test_with_memory_hints_a_database_outage_fails_no_question(
        kafka_bootstrap: str, database: str, topics: Topics) -> None:
    proxy = await TcpProxy.in_front_of(database).start()
    store = await SqlMemoryStore.from_url(proxy.url(database), timeout_s=3)
    tenant, n = f"hints{uuid.uuid4().hex[:6]}", 30
    try:
        async with running(kafka_bootstrap, topics, store=store, memory_domain_hints=True):
            await proxy.refuse()
            await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
            records = await collect(
                kafka_bootstrap, [topics.answer_ready], timeout_s=120,
                until=lambda rs: len({r.key for r in rs}) >= n)
    finally:
        await proxy.aclose()
    statuses = [AnswerReady.model_validate_json(r.value).status for r in records]
    failed = statuses.count(AnswerStatus.failed)
    report("postgres refused, memory hints on", questions=n, answers=len(statuses),
           failed=failed)
    assert len(statuses) == n and failed == 0
