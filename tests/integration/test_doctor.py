"""`doctor` against the real services, and against services that are not there."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from pmflow_gateway.ops.doctor import (
    Check,
    check_database,
    check_guarantee,
    check_mcp_servers,
    check_model,
    check_otlp,
    report,
    run_doctor,
)
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.app import ensure_topics
from tests.support.kafka import produce
from tests.support.openai_server import ScriptedOpenAI
from tests.support.web_site import LocalSite

DOWN = "127.0.0.1:1"  # nothing listens on port 1: connections are refused at once


def _by_name(checks: list) -> dict:  # type: ignore[type-arg]
    return {c.name: c for c in checks}


@pytest.mark.kafka
@pytest.mark.postgres
async def test_healthy_stack_passes_every_check(kafka_bootstrap: str, postgres_url: str,
                                                topics: Topics) -> None:
    await ensure_topics(kafka_bootstrap, topics)
    results = json.dumps({"results": [{"url": "https://weather.example.org/", "title": "w"}]})
    with LocalSite({"/search": (200, {"Content-Type": "application/json"}, results)}) as searx:
        settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=topics.prefix,
                            database_url=postgres_url, live_search_engine="searxng",
                            live_search_endpoint=searx.url(""))
        checks = await run_doctor(settings, env=os.environ)
    text = report(checks)
    assert all(c.ok for c in checks), text
    names = _by_name(checks)
    assert f"{len(topics.all())} topics with 3 partitions" in names["kafka.topics"].detail
    assert {"kafka", "database", "otlp", "kafka.lag.plan", "kafka.lag.feedback",
            "search.searxng", "search"} <= set(names)
    assert names["search"].detail.startswith("search.searxng would answer first")
    assert text.endswith(f"all {len(checks)} checks ok\n")


@pytest.mark.kafka
async def test_missing_topics_and_lag_fail_with_a_fix(kafka_bootstrap: str,
                                                      topics: Topics) -> None:
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=topics.prefix)
    missing = _by_name(await run_doctor(settings, env={}))["kafka.topics"]
    assert not missing.ok and "pmflow-gateway topics create" in (missing.fix or "")

    await ensure_topics(kafka_bootstrap, topics)
    await produce(kafka_bootstrap, topics.route_decided,
                  [(f"q-{i}".encode(), b"{}") for i in range(5)])
    await _commit_start_of(kafka_bootstrap, topics, "plan")
    lag = _by_name(await run_doctor(settings, env={}, max_lag=2))["kafka.lag.plan"]
    assert not lag.ok and "lag 5 " in lag.detail, lag
    assert "--stage plan" in (lag.fix or "")


@pytest.mark.kafka
def test_topics_create_takes_partitions_and_doctor_counts_lag_on_every_one(
        kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> None:
    env = {**os.environ, "PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap,
           "PMFLOW_DATA_DIR": str(tmp_path), "PMFLOW_TOPIC_PREFIX": topics.prefix}
    created = subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", "topics", "create",
                              "--partitions", "5", "--replication-factor", "1"], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
    assert created.returncode == 0 and created.stdout.count("created ") == len(topics.all())

    async def check() -> dict[str, Check]:
        # Records on every partition, the fifth included; the group committed only the start.
        await produce(kafka_bootstrap, topics.route_decided,
                      [(f"q-{i}".encode(), b"{}") for i in range(40)])
        await _commit_start_of(kafka_bootstrap, topics, "plan", partitions=5)
        return _by_name(await run_doctor(Settings(kafka_bootstrap=kafka_bootstrap,
                                                  topic_prefix=topics.prefix), env={},
                                         max_lag=1000))

    checks = asyncio.run(check())
    assert checks["kafka.topics"].ok, checks["kafka.topics"]  # 5 >= the configured 3
    assert "lag 40 " in checks["kafka.lag.plan"].detail
    short = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=topics.prefix,
                     topic_partitions=6)
    topics_check = _by_name(asyncio.run(run_doctor(short, env={})))["kafka.topics"]
    assert not topics_check.ok and "expected at least 6 partitions" in topics_check.detail


async def _commit_start_of(bootstrap: str, topics: Topics, stage: str,
                           partitions: int = 3) -> None:
    """A consumer group that has committed offset 0 everywhere: all 5 records are lag."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap,
                                group_id=f"{topics.prefix}gateway-{stage}",
                                enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topics.route_decided, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.commit({tp: OffsetAndMetadata(0, "") for tp in tps})
    finally:
        await consumer.stop()


async def test_kafka_down_fails_fast_with_a_fix() -> None:
    started = time.monotonic()
    checks = await run_doctor(Settings(kafka_bootstrap=DOWN), env={}, timeout_s=5)
    assert time.monotonic() - started < 10
    kafka = _by_name(checks)["kafka"]
    assert not kafka.ok and DOWN in kafka.detail
    assert "fix: start the broker" in report(checks)


def test_doctor_exits_non_zero_when_kafka_is_down() -> None:
    # Through a fresh interpreter: the command owns its event loop, as on the command line.
    code = ("import argparse, sys; from pmflow_gateway.ops.doctor import cmd_doctor; "
            "from pmflow_gateway.settings import Settings; "
            "args = argparse.Namespace(timeout=5.0, max_lag=1000, json=False, query='w'); "
            "sys.exit(cmd_doctor(args, Settings()))")
    env = {**os.environ, "PMFLOW_KAFKA_BOOTSTRAP": DOWN}
    env.pop("PMFLOW_DATABASE_URL", None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=30, check=False)
    assert time.monotonic() - started < 10
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(f"FAIL kafka: {DOWN} unreachable")
    assert "     fix: " in done.stdout


def test_doctor_json_is_one_object_a_check(tmp_path: Path) -> None:
    env = {**os.environ, "PMFLOW_KAFKA_BOOTSTRAP": DOWN, "PMFLOW_DATA_DIR": str(tmp_path)}
    env.pop("PMFLOW_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", "doctor", "--json"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    checks = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and checks[0]["name"] == "kafka" and not checks[0]["ok"]
    assert {"name", "ok", "warning", "detail", "fix"} == set(checks[0]) and checks[0]["fix"]


async def test_database_down_fails_with_a_fix() -> None:
    settings = Settings(kafka_bootstrap=DOWN,
                        database_url="postgresql+asyncpg://postgres@127.0.0.1:1/pmflow_test")
    database = _by_name(await run_doctor(settings, env={}, timeout_s=3))["database"]
    assert not database.ok and "unreachable" in database.detail
    assert "PMFLOW_DATABASE_URL" in (database.fix or "")


def _fetch_server(name: str, **tools: str | list[str]) -> str:
    """A `[[servers]]` entry running the reference fetch MCP server as a child process."""
    fields = {"name": name, "transport": "stdio", "command": sys.executable,
              "args": ["-m", "mcp_server_fetch"], **tools}
    return "[[servers]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())


async def test_mcp_servers_are_listed_and_their_tools_checked(tmp_path: Path) -> None:
    config = tmp_path / "mcp.toml"
    config.write_text(
        _fetch_server("fetch", search_tool="", fetch_tool="fetch",
                      fetch_urls=["https://example.org/{location_hint}"])
        + _fetch_server("fetch-wrong-tool", search_tool="search")
        + f'[[servers]]\nname = "nobody-home"\ntransport = "http"\nurl = "http://{DOWN}/mcp"\n',
        encoding="utf-8")
    checks = _by_name(await check_mcp_servers(config, timeout_s=20))
    assert checks["mcp.fetch"].ok, checks["mcp.fetch"]
    assert not checks["mcp.fetch-wrong-tool"].ok
    assert "no tool search (has fetch)" in checks["mcp.fetch-wrong-tool"].detail
    assert not checks["mcp.nobody-home"].ok


async def test_model_endpoint_is_probed() -> None:
    with ScriptedOpenAI() as model:  # answers POST only: doctor falls back from GET /models
        [ok] = await check_model(Settings(llm_base_url=model.base_url))
        assert ok.ok, ok
        assert model.requests and model.requests[0]["max_tokens"] == 1
    [down] = await check_model(Settings(llm_base_url=f"http://{DOWN}/v1"), timeout_s=2)
    assert not down.ok and "PMFLOW_LLM_BASE_URL" in (down.fix or "")


async def test_otlp_endpoint_is_probed_by_tcp() -> None:
    assert (await check_otlp({})).ok
    down = await check_otlp({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{DOWN}"})
    assert not down.ok and "OTEL_EXPORTER_OTLP_ENDPOINT" in (down.fix or "")


async def test_database_behind_the_code_fails_then_passes_once_migrated(tmp_path: Path) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    from pmflow_gateway.adapters.store import SqlMemoryStore

    url = f"sqlite+aiosqlite:///{tmp_path / 'pmflow.db'}"
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("create table schema_migrations (version integer primary key)"))
        await conn.execute(text("insert into schema_migrations values (1)"))
    await engine.dispose()
    behind = await check_database(url, tmp_path)
    assert not behind.ok and "schema at version 1" in behind.detail, behind
    assert "start the workers" in (behind.fix or "")

    current_url = f"sqlite+aiosqlite:///{tmp_path / 'current.db'}"
    store = await SqlMemoryStore.from_url(current_url)  # applies every migration
    await store.aclose()
    current = await check_database(current_url, tmp_path)
    assert current.ok and "schema_migrations" in current.detail, current


async def test_the_demo_corpus_as_only_provider_is_a_warning_with_a_fix() -> None:
    [mcp] = await check_mcp_servers(None, demo=True)
    assert mcp.ok and mcp.warning
    assert mcp.lines()[0].startswith("WARN mcp: demo mode")
    assert "PMFLOW_MCP_CONFIG" in (mcp.fix or "")
    [real] = await check_mcp_servers(None)
    assert real.ok and not real.warning and "live search" in real.detail


async def test_a_config_the_workers_would_refuse_fails_the_check(tmp_path: Path) -> None:
    config = tmp_path / "mcp.toml"
    config.write_text('[[servers]]\nname = "docs"\ncommand = "x"\ntimeout_s = "8"\n', "utf-8")
    [check] = await check_mcp_servers(config)
    assert not check.ok and check.detail == "[[servers]] #1 (docs): timeout_s: Input should be " \
        "a valid number"


@pytest.mark.kafka
async def test_guarantee_is_shown_and_exactly_once_needs_transactions(
        kafka_bootstrap: str) -> None:
    shown = await check_guarantee(Settings(kafka_bootstrap=kafka_bootstrap,
                                           processing_guarantee="at_least_once"))
    assert shown.ok and shown.detail.startswith("at_least_once")
    eos = await check_guarantee(Settings(kafka_bootstrap=kafka_bootstrap))  # the default
    assert eos.ok and eos.detail.startswith("exactly_once") and "read_committed" in eos.detail
    nowhere = await check_guarantee(Settings(kafka_bootstrap="127.0.0.1:1",
                                             processing_guarantee="exactly_once"),
                                    timeout_s=2)
    assert not nowhere.ok and "at_least_once" in (nowhere.fix or "")
