"""`pmflow-gateway mcp` as an agent sees it: the SDK's client over stdio and streamable HTTP
against the real command, in process and through the Kafka workers on the real broker.

In process it answers from the packaged demo corpus (`--demo` or PMFLOW_DEMO=1), so the tests
need no network and check that every such answer says it is demo data."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from pmflow_gateway.schemas import Topics
from tests.support.mcp_servers import bearer_client
from tests.support.processes import free_port, stop, wait_for_port
from tests.support.processors import running

QUESTION = "帮我看看未来 5 天的广州天气如何"
REPHRASED = "未来5天广州的天气如何"
COMMAND = [sys.executable, "-m", "pmflow_gateway.cli", "mcp"]
TOKENS = {"acme": "acme-token-5b0c2f4e0d7e4a36", "someone-else": "other-token-9d1e8f3f3a8f"}


def server_env(data_dir: Path, topics: Topics | None = None, **extra: str) -> dict[str, str]:
    tokens = data_dir / "tokens.toml"
    tokens.write_text("".join(f'[[tokens]]\ntenant = "{tenant}"\ntoken = "{token}"\n'
                              for tenant, token in TOKENS.items()), encoding="utf-8")
    # Agent questions are remembered here: the tests read them back through route_prior.
    env = {**os.environ, "PMFLOW_DATA_DIR": str(data_dir), "PMFLOW_AGENT_TENANT": "acme",
           "PMFLOW_AGENT_TOKENS_FILE": str(tokens), "PMFLOW_AGENT_MEMORY_WRITES": "1", **extra}
    for name in ("PMFLOW_DATABASE_URL", "PMFLOW_DEMO", "PMFLOW_MCP_CONFIG"):
        if name not in extra:  # a store and providers of this test's own
            env.pop(name, None)
    if topics is not None:
        env["PMFLOW_TOPIC_PREFIX"] = topics.prefix
    return env


def start_http(port: int, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([*COMMAND, "--http", str(port), *extra], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, timeout_s=60)
    return process


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = start_http(port, server_env(tmp_path, PMFLOW_DEMO="1"))
    yield f"http://127.0.0.1:{port}/mcp"
    stop(process)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def check_both_tools(client: Client, other: Client | None = None) -> None:
    """Both tools as tenant acme; `other`, another tenant's client, sees none of it."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"external_search", "external_probe", "route_prior"}
    search, prior = tools["external_search"], tools["route_prior"]
    assert search.annotations and not search.annotations.read_only_hint  # it remembers
    assert "route memory" in (search.description or "")
    assert search.annotations.open_world_hint
    assert prior.annotations and prior.annotations.read_only_hint
    assert not prior.annotations.open_world_hint
    assert search.output_schema and "sources" in search.output_schema["properties"]

    empty = await call(client, "route_prior", question=QUESTION)
    assert (empty["samples"], empty["suggested_route_mode"]) == (0, None)

    found = await call(client, "external_search", question=QUESTION, locale="zh-CN",
                       thread_id="t-1", deadline_ms=60_000)
    assert found["status"] == "answered", found
    assert found["demo"] is True  # invented pages: an agent must never take them as real
    assert found["citations"] and found["missing"] == []
    assert {s["n"] for s in found["sources"]} >= set(found["citations"])
    for source in found["sources"]:
        assert source["url"].startswith("https://") and source["site"]
        assert source["published_at"] and 0 < source["freshness"] <= 1
    assert found["plan"]["query_kind"] == "weather"

    prior = await call(client, "route_prior", question=REPHRASED)
    assert prior["samples"] == 1 and prior["suggested_route_mode"] == "external"
    assert prior["outcomes"] == {"answered": 1} and prior["confidence"] in (0.25, 0.5, 0.75)
    assert prior["good_domains"] == [s["site"] for s in found["sources"]]
    if other is not None:
        # Naming acme changes nothing: the tenant is the one of the caller's token.
        theirs = await call(other, "route_prior", question=REPHRASED, tenant_id="acme")
        assert theirs["samples"] == 0 and theirs["good_domains"] == []


@pytest.mark.slow
async def test_both_tools_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], "--demo"],
                                   env=server_env(tmp_path))
    async with Client(params) as client:
        await check_both_tools(client)
        bad = await client.call_tool("external_search", {"question": ""})
        assert bad.is_error and "question" in bad.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
async def test_a_deadline_the_sources_cannot_meet_is_a_tool_error(tmp_path: Path) -> None:
    # The only MCP server takes far longer than the deadline, whatever the machine's speed.
    config = tmp_path / "slow.toml"
    config.write_text(
        '[[servers]]\nname = "slow-corpus"\n'
        f'command = "{Path(sys.executable).as_posix()}"\n'
        'args = ["-m", "pmflow_gateway.mcp_server", "--delay-ms", "30000"]\n'
        'timeout_s = 60.0\n', encoding="utf-8")
    params = StdioServerParameters(
        command=COMMAND[0], args=COMMAND[1:],
        env=server_env(tmp_path, PMFLOW_MCP_CONFIG=str(config),
                       PMFLOW_LIVE_SEARCH_ENDPOINT="http://127.0.0.1:9/"))
    async with Client(params) as client:
        expired = await client.call_tool("external_search", {
            "question": QUESTION, "deadline_ms": 100})
    assert expired.is_error and expired.structured_content is None
    text = expired.content[0].text  # type: ignore[union-attr]
    assert "deadline of 100 ms expired" in text and "Traceback" not in text


@pytest.mark.slow
async def test_both_tools_over_streamable_http(http_url: str) -> None:
    async with bearer_client(http_url, TOKENS["acme"]) as client, \
            bearer_client(http_url, TOKENS["someone-else"]) as other:
        await check_both_tools(client, other)


@pytest.mark.kafka
@pytest.mark.slow
async def test_kafka_mode_answers_fifty_concurrent_calls_each_its_own(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    cities = ["广州", "深圳", "北京", "上海", "杭州"]
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process: subprocess.Popen[bytes] | None = None
    try:
        async with running(kafka_bootstrap, topics):
            process = start_http(port, server_env(tmp_path, topics), "--kafka", kafka_bootstrap)
            async with bearer_client(url, TOKENS["acme"]) as client:
                loop = asyncio.get_running_loop()
                started = loop.time()
                questions = [f"{cities[n % 5]}未来5天天气如何（第{n}问）" for n in range(50)]
                latencies: list[float] = []

                async def timed(n: int, question: str) -> dict[str, Any]:
                    found = await call(client, "external_search", question=question,
                                       deadline_ms=60_000)
                    latencies.append(loop.time() - started)
                    return found

                results = await asyncio.gather(*(timed(n, q) for n, q in enumerate(questions)))
                elapsed = loop.time() - started
        # The workers are gone: nobody answers, and the caller is told so at the deadline.
        async with bearer_client(url, TOKENS["acme"]) as client:
            expired = await client.call_tool("external_search", {
                "question": QUESTION, "deadline_ms": 1500})
    finally:
        if process is not None:
            stop(process)
    ids = [r["question_id"] for r in results]
    assert len(set(ids)) == 50
    # Each call got the answer to its own question: the plan names the question's topic.
    for question, result in zip(questions, results, strict=True):
        assert result["status"] in {"answered", "freshness_guard"}, result
        assert question[:2] in result["plan"]["topic"] + " ".join(
            result["plan"]["search_queries"]), (question, result["plan"])
    latencies.sort()
    print(f"\n50 concurrent external_search calls through one server: all answered in "
          f"{elapsed:.2f} s; per call p50 {latencies[24]:.2f} s, max {latencies[-1]:.2f} s")
    assert expired.is_error
    assert "deadline of 1500 ms expired" in expired.content[0].text  # type: ignore[union-attr]
