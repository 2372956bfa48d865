"""The command line as a user runs it: ask (embedded and through Kafka), plan, memory."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pmflow_gateway.bootstrap import build_deps
from pmflow_gateway.schemas import AnswerStatus, Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.app import Processor

QUESTION = "帮我看看未来 5 天的广州天气如何"


def cli(*args: str, data_dir: Path, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    environment.update({"PMFLOW_DATA_DIR": str(data_dir), **(env or {})})
    return subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", *args], env=environment,
                          capture_output=True, text=True, timeout=120, input=stdin)


def test_ask_demo_prints_the_reply_with_its_demo_notice_and_sources(tmp_path: Path) -> None:
    done = cli("ask", "--demo", QUESTION, "--tenant", "acme", data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    head, notice_zh, notice_en = done.stdout.splitlines()[:3]
    assert head == "外部实时查询："
    assert "演示数据" in notice_zh and "Demo data" in notice_en
    assert "来源摘要：" in done.stdout and "https://weather.example/" in done.stdout
    assert "plan: weather" in done.stderr and "evidence:" in done.stderr  # live progress


def test_ask_demo_setting_is_the_same_as_the_flag(tmp_path: Path) -> None:
    done = cli("ask", QUESTION, "--json", data_dir=tmp_path, env={"PMFLOW_DEMO": "1"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer_ready"]["demo"] is True


def test_ask_without_demo_and_without_network_fails_fast_suggesting_demo(
        tmp_path: Path) -> None:
    done = cli("ask", QUESTION, data_dir=tmp_path,
               env={"PMFLOW_LIVE_SEARCH_ENDPOINT": "https://search.invalid/html/"})
    assert done.returncode == 2
    assert "search.invalid" in done.stderr and "--demo" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_ask_json_and_memory_similar_read_the_same_embedded_store(tmp_path: Path) -> None:
    done = cli("ask", "--demo", QUESTION, "--tenant", "acme", "--json", data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)
    assert events["answer_ready"]["status"] == AnswerStatus.answered
    assert events["reply_rendered"]["answer_event_id"] == events["answer_ready"]["event_id"]
    assert all(s["url"].startswith("https://") for s in events["reply_rendered"]["sources"])
    similar = cli("memory", "similar", "广州未来5天天气", "--tenant", "acme", "--json",
                  data_dir=tmp_path)
    assert json.loads(similar.stdout)[0]["question"] == QUESTION
    other = cli("memory", "similar", "广州未来5天天气", "--tenant", "globex", data_dir=tmp_path)
    assert "no similar questions" in other.stdout


def test_ask_previous_plans_a_follow_up_with_the_previous_question_s_subject(
        tmp_path: Path) -> None:
    alone = cli("ask", "--demo", "那明天呢", "--json", data_dir=tmp_path)
    follow_up = cli("ask", "--demo", "那明天呢", "--previous", "广州今天天气如何", "--json",
                    data_dir=tmp_path)
    assert alone.returncode == 0 and follow_up.returncode == 0, follow_up.stderr
    assert json.loads(alone.stdout)["answer_ready"]["status"] == AnswerStatus.clarify
    answer = json.loads(follow_up.stdout)["answer_ready"]
    assert answer["plan"]["location_hint"] == "广州" and answer["plan"]["time_range_hint"]
    assert answer["status"] != AnswerStatus.clarify


def test_plan_single_and_batch(tmp_path: Path) -> None:
    single = json.loads(cli("plan", QUESTION, data_dir=tmp_path).stdout)
    assert (single["query_kind"], single["location_hint"]) == ("weather", "广州")
    batch_file = tmp_path / "questions.txt"
    batch_file.write_text(f"{QUESTION}\n\nWhat's the weather in London tomorrow?\n", "utf-8")
    lines = cli("plan", "--batch", str(batch_file), data_dir=tmp_path).stdout.splitlines()
    assert [json.loads(line)["location_hint"] for line in lines] == ["广州", "London"]


def test_bad_input_gets_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    missing = cli("plan", "--batch", str(tmp_path / "nope.txt"), data_dir=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad_stage = cli("run", "--stage", "nope", data_dir=tmp_path,
                    env={"PMFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:1"})
    assert bad_stage.returncode == 2 and "invalid choice: 'nope'" in bad_stage.stderr
    assert "(choose from 'plan', 'evidence'" in bad_stage.stderr
    bad_env = cli("plan", QUESTION, data_dir=tmp_path, env={"PMFLOW_DEADLINE_MS": "soon"})
    assert bad_env.returncode == 2 and "PMFLOW_DEADLINE_MS" in bad_env.stderr
    assert "Traceback" not in missing.stderr + bad_stage.stderr + bad_env.stderr


@pytest.fixture
async def workers(kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> AsyncIterator[Processor]:
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=topics.prefix,
                        data_dir=tmp_path, http_port=0, demo=True)
    proc = Processor(settings, grace_s=5, deps=lambda: build_deps(settings))
    await proc.start()
    yield proc
    await proc.stop()


@pytest.mark.kafka
async def test_a_started_worker_keeps_its_start_up_objects_out_of_the_collector(
        workers: Processor) -> None:
    assert workers.ready()
    assert gc.get_freeze_count() > 0


@pytest.mark.kafka
async def test_ask_through_kafka_waits_for_the_workers_reply(
        workers: Processor, kafka_bootstrap: str, tmp_path: Path) -> None:
    done = await asyncio.to_thread(
        cli, "ask", QUESTION, "--kafka", kafka_bootstrap, "--timeout", "60", data_dir=tmp_path,
        env={"PMFLOW_TOPIC_PREFIX": workers.topics.prefix})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("外部实时查询：") and "https://" in done.stdout
