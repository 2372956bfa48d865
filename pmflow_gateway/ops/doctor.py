"""`pmflow-gateway doctor`: is everything the workers need there, and if not, what to do.

One line per check, `ok|FAIL name: detail`, and a `fix:` line under each failure. Every
check has its own short timeout, so doctor answers in seconds even when a service hangs or
is down; the exit code is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the parser is built on every CLI start; the runtime imports wait for use
    from pmflow_gateway.schemas import Topics
    from pmflow_gateway.settings import Settings



from pmflow_gateway.ops.checks import Check
from pmflow_gateway.ops.checks import fail as _fail
from pmflow_gateway.ops.checks import ok as _ok
from pmflow_gateway.ops.checks import why as _why
from pmflow_gateway.ops.doctor_sources import PROBE_QUERY, check_mcp_servers, check_sources

__all__ = ["Check", "check_database", "check_guarantee", "check_kafka", "check_mcp_servers",
           "check_model", "check_otlp", "check_sources", "report", "run_doctor"]


# -- Kafka ----------------------------------------------------------------------------------


async def check_kafka(bootstrap: str, topics: Topics, *, timeout_s: float = 5.0,
                      max_lag: int = 1000, min_partitions: int = 3) -> list[Check]:
    """The broker, our topics and their partitions, and the lag of each stage's group."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap,
                                request_timeout_ms=int(timeout_s * 1000))
    try:
        async with asyncio.timeout(timeout_s):
            await admin.start()
            cluster = await admin.describe_cluster()
    except Exception as exc:
        await _quietly(admin.close())
        return [_fail("kafka", f"{bootstrap} unreachable ({_why(exc)})",
                      "start the broker (scripts/local-stack up kafka) or set "
                      "PMFLOW_KAFKA_BOOTSTRAP to a reachable host:port")]
    try:
        checks = [_ok("kafka", f"{bootstrap} reachable ({len(cluster['brokers'])} broker(s), "
                               f"cluster {cluster['cluster_id']})")]
        async with asyncio.timeout(timeout_s):
            described = await admin.describe_topics(topics.all())
            checks.append(_check_topics(described, topics, min_partitions))
            partitions = {d["topic"]: len(d["partitions"]) for d in described
                          if d["error_code"] == 0}
            checks.extend(await _check_lag(admin, bootstrap, topics, max_lag, partitions))
        return checks
    except Exception as exc:
        return [*checks, _fail("kafka.metadata", _why(exc), "check the broker's logs")]
    finally:
        await _quietly(admin.close())


def _check_topics(described: list[dict[str, Any]], topics: Topics, least: int) -> Check:
    missing = [d["topic"] for d in described if d["error_code"] != 0]
    # More partitions than configured is a scaled-out cluster, not a fault.
    short = [f"{d['topic']} has {len(d['partitions'])}" for d in described
             if d["error_code"] == 0 and len(d["partitions"]) < least]
    if missing:
        return _fail("kafka.topics", f"missing {', '.join(missing)}",
                     "pmflow-gateway topics create (the workers also create them at start-up)")
    if short:
        return _fail("kafka.topics", f"expected at least {least} partitions: "
                     + "; ".join(short),
                     f"kafka-topics.sh --alter --partitions {least} (never fewer: keys would "
                     "move), or lower PMFLOW_TOPIC_PARTITIONS")
    counts = sorted({len(d["partitions"]) for d in described})
    return _ok("kafka.topics", f"{len(described)} topics with "
                               f"{'/'.join(map(str, counts))} partitions (prefix "
                               f"{topics.prefix!r})")


async def _check_lag(admin: Any, bootstrap: str, topics: Topics, max_lag: int,
                     partitions: dict[str, int]) -> list[Check]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from pmflow_gateway.streams.stages import STAGES

    groups = {g for g, _ in await admin.list_consumer_groups()}
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    # Let aiokafka's background task begin: a consumer stopped before it ran raises
    # CancelledError from stop() (its no-group coordinator awaits the never-started task).
    await asyncio.sleep(0)
    checks = []
    try:
        for name, stage in STAGES.items():
            group = f"{topics.prefix}gateway-{name}"
            check_name = f"kafka.lag.{name}"
            if group not in groups:
                checks.append(_ok(check_name, f"group {group} not seen yet (workers not "
                                              "started for this stage)"))
                continue
            committed = await admin.list_consumer_group_offsets(group)
            source = stage.source(topics)
            tps = [TopicPartition(source, p) for p in range(partitions.get(source, 0))]
            ends = await consumer.end_offsets(tps)
            starts = await consumer.beginning_offsets(tps)
            # A partition without a commit is read from its start (auto_offset_reset=earliest).
            lag = sum(ends[tp] - (committed[tp].offset if tp in committed else starts[tp])
                      for tp in tps)
            detail = f"group {group} lag {lag} on {source}"
            checks.append(_ok(check_name, detail) if lag <= max_lag else _fail(
                check_name, f"{detail} (> {max_lag})",
                f"run more workers for this stage (pmflow-gateway run --stage {name}) or "
                "look at their logs for a stall"))
    finally:
        await consumer.stop()
    return checks


# -- database -------------------------------------------------------------------------------

KNOWN_TABLES = ("schema_migrations", "qa_records", "query_route_memories")


async def check_database(url: str | None, data_dir: Path, *, timeout_s: float = 5.0) -> Check:
    if not url:
        return _ok("database", f"PMFLOW_DATABASE_URL unset: embedded SQLite under {data_dir}")
    from sqlalchemy import inspect, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    shown = make_url(url).render_as_string(hide_password=True)
    connect_args = {"timeout": timeout_s} if url.startswith("postgresql+asyncpg") else {}
    engine = create_async_engine(url, connect_args=connect_args)
    try:
        async with asyncio.timeout(timeout_s), engine.connect() as conn:
            await conn.execute(text("select 1"))
            tables = await conn.run_sync(
                lambda sync: [t for t in KNOWN_TABLES if inspect(sync).has_table(t)])
            version = (await conn.execute(text("select max(version) from schema_migrations"))
                       ).scalar() if "schema_migrations" in tables else None
    except Exception as exc:
        return _fail("database", f"{shown} unreachable ({_why(exc)[:200]})",
                     "start PostgreSQL (scripts/local-stack up postgres) or fix "
                     "PMFLOW_DATABASE_URL (postgresql+asyncpg://user@host:port/db)")
    finally:
        await engine.dispose()
    found = ", ".join(tables) if tables else "no gateway tables yet (created at first start)"
    detail = f"{shown} answers select 1; {found}"
    expected = _latest_migration()
    if version is not None and expected is not None and version < expected:
        return _fail("database", f"{detail}; schema at version {version}, code expects "
                                 f"{expected}",
                     "start the workers once (they apply the migrations at start-up)")
    return _ok("database", detail + (f"; schema version {version}" if version else ""))


def _latest_migration() -> int | None:
    """The newest migration this code ships, or None where the store has no migrations."""
    try:
        # By name: the store and its migrations may live on another branch for a while.
        migrations = importlib.import_module("pmflow_gateway.adapters.migrations")
        return max(int(m.version) for m in migrations.load_migrations())
    except (ImportError, ValueError):  # no store, or no migration files installed
        return None


# -- model and OTLP -------------------------------------------------------------------------


async def check_model(settings: Settings, *, timeout_s: float = 5.0) -> list[Check]:
    """The planner's and the composer's model endpoints (one check when they are the same)."""
    endpoints: dict[tuple[str, str], list[str]] = {}
    keys: dict[tuple[str, str], str | None] = {}
    for role in ("planner", "composer"):
        endpoint = settings.model_endpoint(role)
        if endpoint is not None:
            where = (endpoint.base_url.rstrip("/"), endpoint.model)
            endpoints.setdefault(where, []).append(role)
            keys[where] = endpoint.api_key.get_secret_value() if endpoint.api_key else None
    if not endpoints:
        return [_ok("model", "PMFLOW_LLM_BASE_URL unset: rules planner, extractive composer")]
    return list(await asyncio.gather(*(
        _check_model(f"model.{'+'.join(roles)}" if len(endpoints) > 1 else "model", base, model,
                     keys[(base, model)], timeout_s)
        for (base, model), roles in endpoints.items())))


async def _check_model(name: str, base: str, model: str, key: str | None,
                       timeout_s: float) -> Check:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    fix = ("check PMFLOW_LLM_BASE_URL (an OpenAI-compatible .../v1) and PMFLOW_LLM_API_KEY, or "
           "their _PLANNER_/_COMPOSER_ variants")
    try:
        import httpx

        async with httpx.AsyncClient(timeout=timeout_s, headers=headers) as client:
            response = await client.get(f"{base}/models")
            if response.status_code == 200:
                return _ok(name, f"{base}/models answers 200 ({model})")
            # Some endpoints have no /models: one tiny completion proves the route works.
            response = await client.post(f"{base}/chat/completions", json={
                "model": model, "max_tokens": 1,
                "messages": [{"role": "user", "content": "ping"}]})
    except Exception as exc:
        return _fail(name, f"{base} unreachable ({_why(exc)})", fix)
    if response.status_code == 200:
        return _ok(name, f"{base}/chat/completions answers 200 ({model})")
    return _fail(name, f"{base} answers HTTP {response.status_code}", fix)


async def check_otlp(env: Mapping[str, str], *, timeout_s: float = 3.0) -> Check:
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        return _ok("otlp", "OTEL_EXPORTER_OTLP_ENDPOINT unset: tracing off")
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 4318)
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(host, port)
        writer.close()
        await writer.wait_closed()
    except Exception as exc:
        return _fail("otlp", f"{endpoint} not reachable by TCP ({_why(exc)})",
                     "start Jaeger (scripts/local-stack up jaeger) or unset "
                     "OTEL_EXPORTER_OTLP_ENDPOINT to run without traces")
    return _ok("otlp", f"{host}:{port} accepts connections")


# -- all together ---------------------------------------------------------------------------


async def _quietly(closing: Awaitable[object]) -> None:
    try:
        await closing
    except Exception:  # closing a client that never connected may raise; nothing to report
        return


async def check_guarantee(settings: Settings, *, timeout_s: float = 5.0) -> Check:
    """The processing guarantee, and for exactly-once whether the broker hands out
    transactional producer ids (it cannot when its transaction log is misconfigured)."""
    name = "processing_guarantee"
    if settings.processing_guarantee == "at_least_once":
        return _ok(name, "at_least_once (after a crash an output may repeat, with the same "
                         "event_id when its content is the same)")
    from pmflow_gateway.streams.partition_producers import (
        TRANSACTIONS_FIX,
        NoTransactions,
        check_transactions,
    )

    try:
        await check_transactions(settings.kafka_bootstrap, settings.topic_prefix,
                                 timeout_s=timeout_s)
    except NoTransactions as exc:
        return _fail(name, f"exactly_once, but no transactional producer within "
                           f"{timeout_s:g} s: {_why(exc.__cause__ or exc)} (a new cluster's "
                           "first one can take longer: run doctor again)", TRANSACTIONS_FIX)
    return _ok(name, "exactly_once (transactions available; read the outputs with "
                     "isolation.level=read_committed)")


async def run_doctor(settings: Settings, *, env: Mapping[str, str] | None = None,
                     timeout_s: float = 5.0, max_lag: int = 1000,
                     query: str = PROBE_QUERY) -> list[Check]:
    """Every check, run side by side; results in a fixed order."""
    from pmflow_gateway.schemas import Topics

    env = os.environ if env is None else env
    topics = Topics(prefix=settings.topic_prefix)
    kafka, database, sources, model, otlp, guarantee = await asyncio.gather(
        check_kafka(settings.kafka_bootstrap, topics, timeout_s=timeout_s, max_lag=max_lag,
                    min_partitions=settings.topic_partitions),
        check_database(settings.database_url, settings.data_dir, timeout_s=timeout_s),
        check_sources(settings, query=query, timeout_s=timeout_s + 3),
        check_model(settings, timeout_s=timeout_s),
        check_otlp(env, timeout_s=min(timeout_s, 3.0)),
        check_guarantee(settings, timeout_s=timeout_s),
    )
    return [*kafka, guarantee, database, *sources, *model, otlp]


def report(checks: list[Check]) -> str:
    failed = [c for c in checks if not c.ok]
    summary = (f"{len(failed)} of {len(checks)} checks failed" if failed
               else f"all {len(checks)} checks ok")
    return "\n".join([line for c in checks for line in c.lines()] + [summary]) + "\n"


def add_doctor_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("doctor", help="check Kafka, the database, the evidence sources "
                                           "(one real search each), the model and OTLP; exit 1 "
                                           "when something is wrong")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per check")
    parser.add_argument("--max-lag", type=int, default=1000,
                        help="consumer lag per stage above which doctor fails")
    parser.add_argument("--json", action="store_true", help="one JSON object a check")
    parser.add_argument("--query", default=PROBE_QUERY,
                        help="what the one real search through each source asks")
    parser.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    # aiokafka logs every refused connection at ERROR; the check line already says it.
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    started = time.perf_counter()
    checks = asyncio.run(run_doctor(settings, timeout_s=args.timeout, max_lag=args.max_lag,
                                    query=args.query))
    if args.json:
        sys.stdout.write("".join(json.dumps(vars(c), ensure_ascii=False) + "\n" for c in checks))
    else:
        sys.stdout.write(report(checks))
    print(f"({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    return 0 if all(c.ok for c in checks) else 1
