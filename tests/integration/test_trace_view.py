"""`trace` against the real Jaeger: one traced question comes back as a chain-shaped tree."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import orjson
import pytest

from pmflow_gateway.ops.trace_view import (
    TraceNotFound,
    build_tree,
    find_trace,
    lookback_seconds,
    render_tree,
)
from pmflow_gateway.schemas import Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.support.kafka import collect, produce
from tests.support.processors import running
from tests.support.traces import session_exporter

pytestmark = [pytest.mark.kafka, pytest.mark.jaeger]
CHAIN = ["route-decided", "plan-created", "evidence-collected", "evidence-verified", "answer-ready"]


@pytest.fixture
async def processor(kafka_bootstrap: str, topics: Topics) -> AsyncIterator[Processor]:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        pytest.skip("jaeger test: set OTEL_EXPORTER_OTLP_ENDPOINT")
    session_exporter()  # the one tracer provider of the session, exporting to Jaeger
    async with running(kafka_bootstrap, topics) as proc:
        yield proc


async def _traced_question(proc: Processor, bootstrap: str) -> str:
    question_id = f"q-trace-view-{uuid.uuid4().hex[:8]}"
    value = orjson.dumps({**ROUTE_DECIDED, "question_id": question_id})
    await produce(bootstrap, proc.topics.route_decided, [(question_id.encode(), value)])
    await collect(bootstrap, [proc.topics.reply_rendered], until=lambda rs: len(rs) >= 1)
    await asyncio.sleep(0.3)  # the memory writer may finish after the reply
    session_exporter()[1].force_flush()
    return question_id


async def _find(jaeger_url: str, question_id: str, want_spans: int) -> dict:  # type: ignore[type-arg]
    """Jaeger indexes what it receives a moment later: poll, briefly."""
    trace: dict = {}  # type: ignore[type-arg]
    for _ in range(50):
        try:
            trace = await find_trace(jaeger_url, question_id)
            if len(trace["spans"]) >= want_spans:
                break
        except TraceNotFound:
            pass
        await asyncio.sleep(0.2)
    return trace


async def test_trace_prints_the_chain_as_a_tree(processor: Processor, kafka_bootstrap: str,
                                                jaeger_url: str) -> None:
    question_id = await _traced_question(processor, kafka_bootstrap)
    # 6 process spans (render and memory both read answer-ready) + 5 sends
    trace = await _find(jaeger_url, question_id, want_spans=11)
    text = render_tree(trace, question_id)
    lines = text.splitlines()
    prefix = processor.topics.prefix

    def line_of(name: str) -> tuple[int, int]:
        index = next(i for i, line in enumerate(lines) if line.strip().startswith(name + "  "))
        return index, len(lines[index]) - len(lines[index].lstrip())

    positions = [line_of(f"process {prefix}query.{topic}.v1") for topic in CHAIN]
    assert [p[0] for p in positions] == sorted(p[0] for p in positions), text
    indents = [p[1] for p in positions]
    assert indents == sorted(indents) and len(set(indents)) == len(indents), text
    assert lines[0].startswith(f"trace {trace['traceID']}  question {question_id}")
    assert "pmflow.planner.mode=rules" in text
    assert "· adapter.attempt (adapter=mcp" in text
    verdict = next(line for line in lines if "· verifier.verdict (" in line)
    assert "passed=True" in verdict and "kept=1" in verdict
    assert "stage=render" in text and "stage=memory" in text and "stage=verify" in text
    assert "pmflow.status=answered" in text
    # the memory writer and the renderer both hang under the answer's send
    answer_send = next(n for n in _walk(build_tree(trace))
                       if n.name == f"send {prefix}query.answer-ready.v1")
    assert {c.name for c in answer_send.children} == {f"process {prefix}query.answer-ready.v1"}
    assert len(answer_send.children) == 2


async def test_unknown_question_is_not_found(jaeger_url: str) -> None:
    with pytest.raises(TraceNotFound):
        await find_trace(jaeger_url, f"q-never-{uuid.uuid4().hex}")


def _walk(nodes: list) -> list:  # type: ignore[type-arg]
    return [n for node in nodes for n in [node, *_walk(node.children)]]


def test_tree_from_jaeger_json_keeps_orphans_as_roots_and_durations() -> None:
    def span(span_id: str, name: str, start: int, parent: str | None = None) -> dict:  # type: ignore[type-arg]
        refs = [{"refType": "CHILD_OF", "traceID": "t", "spanID": parent}] if parent else []
        return {"spanID": span_id, "operationName": name, "startTime": start, "duration": 2500,
                "references": refs, "tags": [{"key": "pmflow.status", "value": "clarify"}],
                "logs": [{"timestamp": start, "fields": [{"key": "event", "value": "retry"},
                                                          {"key": "attempt", "value": 1}]}]}

    trace = {"traceID": "t", "spans": [span("b", "child", 2000, "a"),
                                       span("a", "root", 1000, "pmflow-producer-span")]}
    (root,) = build_tree(trace)
    assert root.name == "root" and [c.name for c in root.children] == ["child"]
    text = render_tree(trace, "q-1")
    assert "  child  2.5 ms  (+1.0)  pmflow.status=clarify" in text
    assert "· retry (attempt=1)" in text


def test_lookback_is_a_short_duration() -> None:
    assert lookback_seconds("2d") == 172_800 and lookback_seconds("90s") == 90
    with pytest.raises(ValueError, match="not a duration"):
        lookback_seconds("1y")
