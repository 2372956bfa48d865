"""Expected failures end in a short message and the right exit code, never a traceback:
2 when the command or the configuration must change, 1 when something outside failed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pmflow_gateway.cli import STAGE_NAMES

DOWN = "127.0.0.1:1"  # a privileged port nothing listens on: a refused connection, at once


def cli(*args: str, tmp_path: Path, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    environment.update({"PMFLOW_DATA_DIR": str(tmp_path), **(env or {})})
    return subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", *args], env=environment,
                          capture_output=True, text=True, timeout=120)


CASES = {
    "topics create, Kafka down": (["topics", "create"], {"PMFLOW_KAFKA_BOOTSTRAP": DOWN}, 1,
                                  "KafkaConnectionError"),
    "ask --kafka, Kafka down": (["ask", "hello", "--kafka", DOWN], {}, 1, "KafkaConnectionError"),
    "memory similar, database down": (
        ["memory", "similar", "hello", "--tenant", "acme"],
        {"PMFLOW_DATABASE_URL": "postgresql+asyncpg://u:p@127.0.0.1:1/db"}, 1,
        "PMFLOW_DATABASE_URL"),
    "ask, MCP config missing": (["ask", "hello"], {"PMFLOW_MCP_CONFIG": "/no/such/mcp.toml"}, 2,
                                "/no/such/mcp.toml"),
    "ask, empty question": (["ask", ""], {}, 2, "QUESTION: String should have at least 1"),
    "ask, question too long": (["ask", "x" * 4001], {}, 2, "QUESTION: String should have at most"),
    "ask, empty tenant": (["ask", "hello", "--tenant", ""], {}, 2, "--tenant:"),
    "bad setting": (["plan", "hello"], {"PMFLOW_DEADLINE_MS": "soon"}, 2, "PMFLOW_DEADLINE_MS"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_expected_failure_is_a_short_message_with_its_exit_code(case: str,
                                                                    tmp_path: Path) -> None:
    args, env, code, says = CASES[case]
    done = cli(*args, tmp_path=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (code, ""), done.stderr
    lines = done.stderr.splitlines()
    assert 1 <= len(lines) <= 3 and lines[0].startswith("error: "), lines
    assert says in done.stderr and "Traceback" not in done.stderr


def test_plan_batch_reports_a_bad_line_and_plans_the_rest(tmp_path: Path) -> None:
    batch = tmp_path / "questions.txt"
    batch.write_text("weather in London tomorrow\n\n" + "y" * 4001 + "\nnews today\n", "utf-8")
    done = cli("plan", "--batch", str(batch), tmp_path=tmp_path)
    assert done.returncode == 2
    assert [json.loads(line)["topic"] != "" for line in done.stdout.splitlines()] == [True] * 2
    assert f"error: {batch}:3: QUESTION: String should have at most" in done.stderr
    assert "1 of 3 line(s) rejected" in done.stderr and "Traceback" not in done.stderr


def test_version_and_help_list_the_stages_and_defaults(tmp_path: Path) -> None:
    version = cli("--version", tmp_path=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("pmflow-gateway ")
    run_help = cli("run", "--help", tmp_path=tmp_path).stdout
    assert "{" + ",".join(STAGE_NAMES) + "}" in run_help and "(default: 10.0)" in run_help


def test_the_stage_choices_are_the_stage_table() -> None:
    from pmflow_gateway.streams.stages import STAGES

    assert list(STAGE_NAMES) == list(STAGES)


def test_help_loads_no_models_clients_or_tracing() -> None:
    probe = ("import sys; from pmflow_gateway.cli import build_parser; build_parser(); "
             "print(sorted(m for m in ('pydantic', 'aiokafka', 'httpx', 'opentelemetry', "
             "'sqlalchemy', 'faststream', 'mcp') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_worker_that_cannot_start_says_so_in_one_json_error_line(tmp_path: Path) -> None:
    done = cli("run", "--stage", "plan", tmp_path=tmp_path,
               env={"PMFLOW_KAFKA_BOOTSTRAP": DOWN, "PMFLOW_HTTP_PORT": "0"})
    assert done.returncode == 1 and done.stdout == ""
    lines = _json_lines(done.stderr)  # every line, not just the last, is JSON
    errors = [line for line in lines if line["logger"] == "pmflow_gateway"
              and line["level"] == "ERROR"]
    assert len(errors) == 1 and "KafkaConnectionError" in str(errors[0]["msg"])
    assert "Unclosed" not in done.stderr  # what it opened before failing is closed again


@pytest.mark.kafka
def test_a_worker_whose_database_is_down_names_the_database(kafka_bootstrap: str,
                                                            tmp_path: Path) -> None:
    done = cli("run", "--stage", "memory", tmp_path=tmp_path, env={
        "PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap, "PMFLOW_HTTP_PORT": "0",
        "PMFLOW_TOPIC_PREFIX": f"dbdown{time.time_ns()}.",
        "PMFLOW_DATABASE_URL": "postgresql+asyncpg://u:p@127.0.0.1:1/db"})
    assert done.returncode == 1
    [error] = [line for line in _json_lines(done.stderr) if line["level"] == "ERROR"
               and line["logger"] == "pmflow_gateway"]
    assert "database" in str(error["msg"]) and "PMFLOW_DATABASE_URL" in str(error["msg"])
    assert "Kafka" not in str(error["msg"])


def test_a_bad_setting_stops_a_worker_with_one_json_line(tmp_path: Path) -> None:
    done = cli("run", tmp_path=tmp_path, env={"PMFLOW_LOG_LEVEL": "LOUD"})
    assert done.returncode == 2
    (line,) = _json_lines(done.stderr)
    assert line["level"] == "ERROR" and "PMFLOW_LOG_LEVEL" in str(line["msg"])


@pytest.mark.kafka
@pytest.mark.parametrize("event_loop", [None, "asyncio"])
def test_a_running_worker_logs_json_from_first_to_last_line(kafka_bootstrap: str,
                                                            tmp_path: Path,
                                                            event_loop: str | None) -> None:
    """By default on uvloop; PMFLOW_EVENT_LOOP=asyncio runs it on the standard loop."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    if event_loop:
        environment["PMFLOW_EVENT_LOOP"] = event_loop
    environment.update({"PMFLOW_DATA_DIR": str(tmp_path), "PMFLOW_HTTP_PORT": "0",
                        "PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap,
                        "PMFLOW_TOPIC_PREFIX": f"logs{time.time_ns()}."})
    worker = subprocess.Popen([sys.executable, "-m", "pmflow_gateway.cli", "run", "--stage",
                               "plan", "--grace", "1"], env=environment, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert worker.stderr is not None
    seen = []
    for line in worker.stderr:  # until the app says it runs: then every start-up line is in
        seen.append(line)
        if "started" in line:
            break
    worker.send_signal(signal.SIGTERM)
    out, rest = worker.communicate(timeout=60)
    lines = _json_lines("".join(seen) + rest)
    assert out == "" and worker.returncode == 0
    assert lines[0]["msg"] == (f"stages plan on {kafka_bootstrap} "
                               f"(event loop: {event_loop or 'uvloop'})")
    # The start and the graceful stop, each said once, in the same JSON.
    assert {"workers started: plan; SIGTERM or CTRL+C stops them", "workers stopped"} <= {
        str(line["msg"]) for line in lines if line["logger"] == "pmflow_gateway.app"}


@pytest.mark.kafka
async def test_ask_kafka_starts_the_trace_at_the_publish(kafka_bootstrap: str,
                                                         tmp_path: Path) -> None:
    from pmflow_gateway.schemas import Topics
    from tests.support.kafka import collect

    topics = Topics(prefix=f"trace{time.time_ns()}.")
    # No workers: the reply never comes, but the published question carries its trace. The
    # exporter's endpoint answers nothing; spans are dropped, the headers are still made.
    done = await asyncio.to_thread(
        cli, "ask", "hello", "--kafka", kafka_bootstrap, "--timeout", "1", tmp_path=tmp_path,
        env={"PMFLOW_TOPIC_PREFIX": topics.prefix,
             "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{DOWN}", "OTEL_BSP_EXPORT_TIMEOUT": "500"})
    assert done.returncode == 1 and "no reply" in done.stderr
    [record] = await collect(kafka_bootstrap, [topics.route_decided], until=lambda r: bool(r))
    headers = dict(record.headers)
    match = re.fullmatch(rb"00-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})", headers["traceparent"])
    assert match and int(match[1], 16) & 1  # sampled: the workers continue it
