"""The benchmark harness still runs against the real broker and reports what it promises.
Structure only: timings are the benchmark's business (`python -m bench`), never a test's."""

from __future__ import annotations

import pytest

from bench.scenarios import cpu, hop

pytestmark = pytest.mark.kafka


async def test_hop_reports_both_paths_and_their_ratio(kafka_bootstrap: str) -> None:
    result = await hop.measure(kafka_bootstrap, n=5, warmup=1)
    assert set(result) == {"parameters", "results", "target"}
    for path in ("raw_ms", "ours_ms"):
        assert result["results"][path]["n"] == 5
        assert set(result["results"][path]) == {"n", "p50", "p95", "p99", "max"}
    assert set(result["results"]["ratio"]) == {"p50", "p95"}
    assert isinstance(result["target"]["met"], bool)


async def test_cpu_worker_processes_every_question_and_reports_its_cpu(
        kafka_bootstrap: str) -> None:
    result = await cpu.measure(kafka_bootstrap, 10, otel=False)
    assert result["questions"] == 10
    assert result["all_replied_and_committed"] is True
    assert {name: counts["processed"] + counts["skipped"]
            for name, counts in result["stage_counts"].items()} == dict.fromkeys(cpu.ALL_STAGES, 10)
    assert result["cpu_ms_per_question"] > 0
    assert result["spans_exported"] is None
