"""Exactly-once output topics: a `read_committed` reader sees one reply per question across
SIGKILLs, a paused zombie and a broker restart; poison is dead-lettered once.

Each run prints its numbers; the kill run does both guarantees so they compare in one run.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import uuid
from collections import Counter
from pathlib import Path

import orjson
import pytest

from pmflow_gateway.schemas import Topics
from tests.integration.test_chaos import Replies, qa_rows, report, routes, worker_env
from tests.support.broker import PrivateBroker
from tests.support.kafka import collect, produce
from tests.support.workers import Worker

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]
QUESTIONS = int(os.environ.get("PMFLOW_CHAOS_QUESTIONS", "1000"))


def env_for(bootstrap: str, topics: Topics, postgres_url: str, guarantee: str,
            **extra: str) -> dict[str, str]:
    return {**worker_env(bootstrap, topics, postgres_url),
            "PMFLOW_PROCESSING_GUARANTEE": guarantee, **extra}


def keys(tenant: str, n: int) -> set[bytes]:
    return {f"{tenant}-{i}".encode() for i in range(n)}


async def killed_three_times(bootstrap: str, postgres_url: str, guarantee: str,
                             tmp_path: Path, n: int) -> dict[str, int]:
    topics = Topics(prefix=f"test{uuid.uuid4().hex[:8]}.")
    tenant = f"eos{uuid.uuid4().hex[:6]}"
    env = env_for(bootstrap, topics, postgres_url, guarantee)
    log = tmp_path / f"{guarantee}.log"
    worker = Worker(env, log=log).start()
    kills = 0
    async with Replies(bootstrap, topics.reply_rendered,
                       isolation_level="read_committed") as replies:
        await produce(bootstrap, topics.route_decided, routes(tenant, n))
        rng = random.Random(7)
        while kills < 3:
            await asyncio.sleep(rng.uniform(3.0, 5.0))
            worker.kill()
            kills += 1
            worker = Worker(env, log=log).start()
        await replies.wait_for(keys(tenant, n), timeout_s=300, worker=worker)
        rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
        await asyncio.sleep(2)  # a late duplicate, if any, has time to show
        worker.terminate()
        assert replies.duplicates_share_event_id()
        numbers = {"questions": n, "kills": kills, "replies": len(replies.by_question),
                   "duplicates": replies.duplicates, "rows": rows, "distinct_rows": distinct,
                   "lost": n - len(replies.by_question)}
    report(f"kill {guarantee}", **numbers)
    assert numbers["lost"] == 0, log.read_text()[-3000:]
    return numbers


async def test_killed_workers_exactly_once_against_at_least_once(
        kafka_bootstrap: str, postgres_url: str, tmp_path: Path) -> None:
    eos = await killed_three_times(kafka_bootstrap, postgres_url, "exactly_once", tmp_path,
                                   QUESTIONS)
    alo = await killed_three_times(kafka_bootstrap, postgres_url, "at_least_once", tmp_path,
                                   QUESTIONS)
    print("\n| mode | questions | kills | replies (read_committed) | duplicates | QA rows | lost |")
    for name, row in (("exactly_once", eos), ("at_least_once", alo)):
        print(f"| {name} | {row['questions']} | {row['kills']} | {row['replies']} | "
              f"{row['duplicates']} | {row['rows']} | {row['lost']} |")
    assert eos["duplicates"] == 0
    assert eos["rows"] == eos["distinct_rows"] == QUESTIONS
    assert alo["rows"] == alo["distinct_rows"] == QUESTIONS
