"""How long `similar()` takes when a tenant has 20,000 stored questions, on SQLite and
(when `PMFLOW_TEST_POSTGRES_URL` is set) PostgreSQL: the trigram index finds the candidates,
bigram Jaccard ranks them.

    .venv/bin/python -m bench.similarity [--memories 20000] [--queries 200]

Memories are bulk-inserted (the write path is measured elsewhere), then analysed; the other
tenant's rows are there so the index has to skip them. Prints one JSON object per backend and
saves them to bench/results/similarity.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import create_async_engine

from pmflow_gateway.adapters.store import SqlMemoryStore
from pmflow_gateway.adapters.store_schema import query_route_memories
from pmflow_gateway.contract.similarity import question_key

CITIES = ["广州", "深圳", "北京", "上海", "杭州", "成都", "武汉", "西安", "南京", "重庆",
          "London", "Paris", "Tokyo", "Berlin", "Madrid", "Rome", "Seoul", "Delhi", "Cairo",
          "Lima"]
TOPICS = ["未来{d}天的{c}天气如何", "{c}第{d}号地铁线今天运营吗", "{c}今天的{d}号航班延误了吗",
          "what is the weather in {c} in {d} days", "{c} stock index after {d} days",
          "{c}最近{d}天的油价是多少", "{c} marathon {d} results", "{c}第{d}届展会什么时候开"]


def question(n: int) -> str:
    template = TOPICS[n % len(TOPICS)]
    return template.format(c=CITIES[(n // len(TOPICS)) % len(CITIES)], d=n) + f" #{n}"


def memory_row(tenant: str, n: int, at: datetime) -> dict[str, Any]:
    text = question(n)
    return {"tenant_id": tenant, "question_key": question_key(text), "sample_question": text,
            "route_mode": "external", "query_kind": "weather", "hit_count": 1,
            "outcome_counts": {"answered": 1}, "feedback_counts": {},
            "good_domains": ["weather.com.cn"], "last_question_id": f"q-{n}",
            "created_at": at, "updated_at": at + timedelta(seconds=n)}


async def measure(url: str, options: dict[str, Any], memories: int,
                  queries: int) -> dict[str, Any]:
    async with await SqlMemoryStore.from_url(url, **options) as store:
        at = datetime(2026, 12, 1, tzinfo=UTC)
        for tenant, count in (("bench", memories), ("other", memories // 4)):
            rows = [memory_row(tenant, n, at) for n in range(count)]
            async with store.engine.begin() as conn:
                for start in range(0, len(rows), 2000):
                    await conn.execute(insert(query_route_memories), rows[start:start + 2000])
        async with store.engine.begin() as conn:
            # The statistics autovacuum would have gathered by now: without them the planner
            # guesses every tenant is tiny and a bulk-loaded table is planned like no other.
            await conn.execute(text("ANALYZE query_route_memories"))
        asked = [question(n * (memories // queries)).split(" #")[0] for n in range(queries)]
        await store.similar("bench", asked[0])  # warm the connection pool
        timings, found = [], 0
        for one in asked:
            started = time.perf_counter()
            result = await store.similar("bench", one, limit=5)
            timings.append((time.perf_counter() - started) * 1000)
            found += bool(result) and question_key(one) in question_key(result[0].question)
    timings.sort()
    return {"backend": store.engine.dialect.name, "memories": memories, "queries": queries,
            "p50_ms": round(statistics.median(timings), 2),
            "p95_ms": round(timings[int(len(timings) * 0.95) - 1], 2),
            "max_ms": round(timings[-1], 2), "own_question_ranked_first": found,
            "load_avg_1m": round(os.getloadavg()[0], 2)}


async def postgres_target(url: str) -> tuple[str, dict[str, Any], Any]:
    schema = f"bench_similarity_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(url)
    async with admin.begin() as conn:
        await conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')

    async def drop() -> None:
        async with admin.begin() as conn:
            await conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.dispose()

    return url, {"connect_args": {"server_settings": {"search_path": schema}}}, drop


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.sqlite3'}"
        results.append(await measure(url, {}, args.memories, args.queries))
    pg = os.environ.get("PMFLOW_TEST_POSTGRES_URL")
    if pg:
        pg_url, options, drop = await postgres_target(pg)
        try:
            results.append(await measure(pg_url, options, args.memories, args.queries))
        finally:
            await drop()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    found = asyncio.run(main(parser.parse_args()))
    for result in found:
        print(orjson.dumps(result).decode())
    out = Path(__file__).parent / "results" / "similarity.json"
    out.write_bytes(orjson.dumps(found, option=orjson.OPT_INDENT_2))
