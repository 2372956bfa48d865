"""The benchmark harness still runs against the real broker and reports what it promises.
Structure only: timings are the benchmark's business (`python -m bench`), never a test's."""

from __future__ import annotations

import pytest

from bench.scenarios import cpu, latency

pytestmark = pytest.mark.kafka


@pytest.mark.parametrize("relay", [False, True], ids=["ours", "relay"])
async def test_cpu_worker_processes_every_question_and_reports_its_cpu(
        kafka_bootstrap: str, relay: bool) -> None:
    result = await cpu.measure(kafka_bootstrap, 10, otel=False, relay=relay, warmup=4)
    assert result["questions"] == 10
    assert result["all_replied_and_committed"] is True
    # The worker counts what it ran, the warm-up's questions with the measured ones.
    assert {name: counts["processed"] + counts["skipped"]
            for name, counts in result["stage_counts"].items()} == dict.fromkeys(cpu.ALL_STAGES, 14)
    assert result["warmup_questions"] == 4
    assert result["cpu_ms_per_question"] > 0
    assert result["warmup_cpu_ms_per_question"] > 0
    assert result["spans_exported"] is None


async def test_latency_answers_every_question_and_reports_each_hop(kafka_bootstrap: str) -> None:
    result = await latency.measure(kafka_bootstrap, relay=False, seconds=0.5, warmup_s=0.0)
    assert result["kept_up"] is True
    assert result["answered"] == result["questions"] > 0
    assert set(result["end_to_end_ms"]) == {"n", "p50", "p95", "p99", "max"}
    assert len(result["hop_ms_from_record_timestamps"]) == 5
    assert set(result["stage_core_ms"]) == {"plan", "evidence", "verify", "answer"}
