"""Nothing lost, nothing doubled: worker processes killed, a broker restarted, a group rebalanced.

At least once, read `read_uncommitted`: a repeated reply must repeat its `event_id` (the
exactly-once runs of the same faults, the default mode, are `test_exactly_once.py`'s). Each
run prints its numbers (questions, kills, rows, duplicates, lost, dead letters).
"""

from __future__ import annotations

import asyncio
import random
import uuid
from pathlib import Path

import pytest

from pmflow_gateway.schemas import Topics
from tests.support.broker import PrivateBroker
from tests.support.chaos import (
    Replies,
    check_run,
    committed_and_ends,
    qa_rows,
    routes,
    worker_env,
)
from tests.support.kafka import collect, produce
from tests.support.workers import Worker

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]
ALO = "at_least_once"


async def test_workers_killed_three_times_lose_and_double_nothing(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"kill{uuid.uuid4().hex[:6]}", 2000
    env = worker_env(kafka_bootstrap, topics, postgres_url, ALO)
    worker = Worker(env, log=tmp_path / "worker.log").start()
    kills = 0
    async with Replies(kafka_bootstrap, topics.reply_rendered) as replies:
        await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
        rng = random.Random(7)
        while kills < 3:
            await asyncio.sleep(rng.uniform(2.0, 4.0))
            worker.kill()
            kills += 1
            worker = Worker(env, log=tmp_path / "worker.log").start()
        await replies.wait_for({f"{tenant}-{i}".encode() for i in range(n)}, timeout_s=240,
                               worker=worker)
        rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
        worker.terminate()
        check_run("kill", replies, n=n, rows=rows, distinct=distinct,
                  log=tmp_path / "worker.log", kills=kills)


async def test_two_workers_one_killed_the_other_takes_over(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"pair{uuid.uuid4().hex[:6]}", 600
    env = worker_env(kafka_bootstrap, topics, postgres_url, ALO)
    first = Worker(env, log=tmp_path / "first.log").start()
    second = Worker(env, log=tmp_path / "second.log").start()
    async with Replies(kafka_bootstrap, topics.reply_rendered) as replies:
        await asyncio.sleep(4)  # both join the groups
        await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
        await asyncio.sleep(1.0)
        first.kill()
        await replies.wait_for({f"{tenant}-{i}".encode() for i in range(n)}, timeout_s=180,
                               worker=second)
        rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
        second.terminate()
        check_run("rebalance", replies, n=n, rows=rows, distinct=distinct,
                  log=tmp_path / "second.log", kills=1)


async def test_sigterm_drains_commits_and_exits(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    tenant, n = f"term{uuid.uuid4().hex[:6]}", 300
    env = worker_env(kafka_bootstrap, topics, postgres_url, ALO)
    worker = Worker(env, log=tmp_path / "worker.log", grace_s=15).start()
    async with Replies(kafka_bootstrap, topics.reply_rendered) as replies:
        await produce(kafka_bootstrap, topics.route_decided, routes(tenant, n))
        await replies.wait_for({f"{tenant}-{i}".encode() for i in range(n)}, timeout_s=120,
                               worker=worker)
        assert worker.terminate(timeout_s=30) == 0, (tmp_path / "worker.log").read_text()[-3000:]
    committed, ends = await committed_and_ends(kafka_bootstrap, f"{topics.prefix}gateway-plan")
    assert committed == ends
    assert len(replies.by_question) == n


@pytest.mark.parametrize("after_s", [0.3, 1.5])
async def test_sigterm_while_the_workers_start_is_a_clean_stop(
        kafka_bootstrap: str, postgres_url: str, topics: Topics, tmp_path: Path,
        after_s: float) -> None:
    """Before the app's own handler is in place a SIGTERM killed the process (exit -15, and a
    restarted worker stopped right away failed the exactly-once SIGTERM test now and then)."""
    worker = Worker(worker_env(kafka_bootstrap, topics, postgres_url, ALO),
                    log=tmp_path / "worker.log").start()
    await asyncio.sleep(after_s)
    assert worker.terminate(timeout_s=60) == 0, (tmp_path / "worker.log").read_text()[-3000:]


async def test_broker_restart_mid_run_loses_nothing(
        postgres_url: str, topics: Topics, tmp_path: Path) -> None:
    broker = PrivateBroker(tmp_path / "kafka")
    broker.start()
    tenant, n = f"brk{uuid.uuid4().hex[:6]}", 400
    worker = Worker(worker_env(broker.bootstrap, topics, postgres_url, ALO),
                    log=tmp_path / "worker.log").start()
    try:
        await produce(broker.bootstrap, topics.route_decided, routes(tenant, n))
        # Mid-run means the worker is answering: on a loaded machine its start-up alone can
        # take longer than a fixed pause, and then this would test start-up instead.
        first = await collect(broker.bootstrap, [topics.reply_rendered],
                              until=lambda records: len(records) > 0, timeout_s=120)
        assert first, (tmp_path / "worker.log").read_text()[-3000:]
        broker.stop()
        await asyncio.sleep(5)
        broker.start()
        async with Replies(broker.bootstrap, topics.reply_rendered) as replies:
            await replies.wait_for({f"{tenant}-{i}".encode() for i in range(n)}, timeout_s=180,
                                   worker=worker)
            rows, distinct = await qa_rows(postgres_url, tenant, expect=n)
            check_run("broker-restart", replies, n=n, rows=rows, distinct=distinct,
                      log=tmp_path / "worker.log", restarts=1)
    finally:
        if worker.alive:
            worker.kill()
        broker.stop()
