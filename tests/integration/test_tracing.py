"""One trace per question, read as a chain, on the real broker (and in the real Jaeger)."""

from __future__ import annotations

import asyncio
import itertools
import os
import uuid
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from opentelemetry.sdk.trace import ReadableSpan

from pmflow_gateway.schemas import Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.support.kafka import collect, produce
from tests.support.processors import running
from tests.support.traces import session_exporter

pytestmark = pytest.mark.kafka
CHAIN = ["route-decided", "plan-created", "evidence-collected", "evidence-verified", "answer-ready"]
SIX_STAGES = {"plan", "evidence", "verify", "answer", "render", "memory"}


@pytest.fixture
async def traced(kafka_bootstrap: str, topics: Topics) -> AsyncIterator[Processor]:
    session_exporter()
    async with running(kafka_bootstrap, topics) as proc:
        yield proc


async def _ask(proc: Processor, bootstrap: str, question_id: str, trace_id: str) -> None:
    parent = f"00-{trace_id}-{'ab' * 8}-01"  # as PMFlow's producer span would send it
    value = orjson.dumps({**ROUTE_DECIDED, "question_id": question_id})
    await produce(bootstrap, proc.topics.route_decided, [(question_id.encode(), value)],
                  headers=[("traceparent", parent.encode())])
    await collect(bootstrap, [proc.topics.reply_rendered], until=lambda rs: len(rs) >= 1)
    await asyncio.sleep(0.3)  # the memory writer may finish after the reply


def _spans_of(trace_id: str) -> list[ReadableSpan]:
    exporter, _ = session_exporter()
    return [s for s in exporter.get_finished_spans()
            if s.context is not None and format(s.context.trace_id, "032x") == trace_id]


async def test_stages_form_a_chain_that_continues_pmflows_trace(
        traced: Processor, kafka_bootstrap: str) -> None:
    trace_id = uuid.uuid4().hex
    await _ask(traced, kafka_bootstrap, "q-trace-1", trace_id)
    spans = _spans_of(trace_id)
    by_id = {s.context.span_id: s for s in spans}  # type: ignore[union-attr]
    process = {s.name.split("query.")[1].removesuffix(".v1"): s for s in spans
               if s.name.startswith("process ")}
    assert set(CHAIN) <= set(process), sorted(process)
    root = process["route-decided"]
    assert root.parent is not None and root.parent.span_id == int("ab" * 8, 16)
    # every later stage's processing span descends from the previous stage's (via its send)
    for before, after in itertools.pairwise(CHAIN):
        send = by_id[process[after].parent.span_id]  # type: ignore[union-attr]
        assert send.name == f"send {traced.topics.prefix}query.{after}.v1"
        assert send.parent.span_id == process[before].context.span_id  # type: ignore[union-attr]
    # a span is named after the topic it reads: the evidence stage reads plan-created
    assert "adapter.attempt" in {e.name for e in process["plan-created"].events}
    verify_span = process["evidence-collected"]
    verdicts = [e for e in verify_span.events if e.name == "verifier.verdict"]
    assert verdicts and verdicts[0].attributes["kept"] == 1  # type: ignore[index]
    assert verify_span.attributes["pmflow.verify.kept"] == 1  # type: ignore[index]
    assert process["evidence-verified"].attributes["pmflow.status"] == "answered"  # type: ignore[index]
    stages = [(s.attributes or {}).get("pmflow.stage") for s in spans
              if s.name.startswith("process ")]
    assert sorted(stages) == sorted(SIX_STAGES)  # one span per stage, verify among them
    [memory] = [s for s in spans if (s.attributes or {}).get("pmflow.stage") == "memory"]
    [db] = [s for s in spans if s.name == "db write qa_records"]
    assert db.parent.span_id == memory.context.span_id  # type: ignore[union-attr]


async def test_model_calls_are_genai_client_spans_without_prompt_content() -> None:
    from pmflow_gateway.adapters.llm import OpenAIChatModel
    from tests.support.openai_server import ScriptedOpenAI

    exporter, _ = session_exporter()
    with ScriptedOpenAI() as server:
        server.replies.append('{"ok": true}')
        model = OpenAIChatModel(base_url=server.base_url, model="plan-model")
        try:
            await model.complete_json([{"role": "user", "content": "秘密问题"}],
                                      schema={"type": "object"}, schema_name="x", timeout_s=5)
        finally:
            await model.aclose()
    [chat] = [s for s in exporter.get_finished_spans() if s.name == "chat plan-model"]
    assert chat.attributes["gen_ai.operation.name"] == "chat"  # type: ignore[index]
    assert chat.attributes["gen_ai.request.model"] == "plan-model"  # type: ignore[index]
    assert "秘密问题" not in str(dict(chat.attributes or {}))


@pytest.mark.jaeger
async def test_jaeger_returns_one_trace_with_every_stage(
        traced: Processor, kafka_bootstrap: str, jaeger_url: str) -> None:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        pytest.skip("jaeger test: set OTEL_EXPORTER_OTLP_ENDPOINT")
    trace_id = uuid.uuid4().hex
    await _ask(traced, kafka_bootstrap, "q-trace-jaeger", trace_id)
    _, provider = session_exporter()
    provider.force_flush()
    wanted = {f"process {traced.topics.prefix}query.{t}.v1" for t in CHAIN}
    wanted |= {f"send {traced.topics.prefix}query.{t}.v1" for t in [*CHAIN[1:], "reply-rendered"]}
    data: list[dict[str, object]] = []
    names: set[str] = set()
    async with httpx.AsyncClient(base_url=jaeger_url) as client:
        for _ in range(100):  # spans reach Jaeger in batches: wait for the whole chain
            response = await client.get(f"/api/traces/{trace_id}")
            if response.status_code == 200:
                data = response.json().get("data") or []
                names = {span["operationName"] for t in data for span in t["spans"]}
                if wanted <= names:
                    break
            await asyncio.sleep(0.2)
    assert len(data) == 1
    assert wanted <= names, sorted(wanted - names)
