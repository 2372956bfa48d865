"""An agent's tool call is one trace with the stages it runs: in process, and through the
workers on the real broker (the request carries the tool call's trace context)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from opentelemetry.sdk.trace import ReadableSpan

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.agent_tools.askers import Asker, EmbeddedAsker, KafkaAsker
from pmflow_gateway.agent_tools.server import build_agent_server
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import Topics
from tests.fakes import InMemoryStore, fake_deps
from tests.support.processors import running
from tests.support.traces import session_exporter

QUESTION = "帮我看看未来 5 天的广州天气如何"
STAGES = {"plan", "evidence", "verify", "answer", "render", "memory"}


def deps() -> Deps:
    return fake_deps(clock=SystemClock())


async def traced_call(asker: Asker) -> tuple[ReadableSpan, list[ReadableSpan]]:
    """The tool call's server span, and every span of its trace."""
    exporter, _ = session_exporter()
    async with Client(build_agent_server(asker, InMemoryStore())) as client:
        result = await client.call_tool("external_search", {"question": QUESTION,
                                                            "deadline_ms": 30_000})
    assert not result.is_error, result.content
    question_id = result.structured_content["question_id"]  # type: ignore[index]
    spans = exporter.get_finished_spans()
    [tool] = [s for s in spans if s.name == "tools/call external_search"
              and any(_attr(x, "pmflow.question_id") == question_id for x in spans
                      if x.context.trace_id == s.context.trace_id)]  # type: ignore[union-attr]
    trace = [s for s in spans if s.context.trace_id == tool.context.trace_id]  # type: ignore[union-attr]
    return tool, trace


def _attr(span: ReadableSpan, name: str) -> Any:
    return (span.attributes or {}).get(name)


async def test_in_process_the_stages_are_children_of_the_tool_call() -> None:
    tool, trace = await traced_call(EmbeddedAsker(deps()))
    stages = {_attr(s, "pmflow.stage"): s for s in trace if _attr(s, "pmflow.stage")}
    assert set(stages) == STAGES
    assert stages["plan"].parent is not None
    assert stages["plan"].parent.span_id == tool.context.span_id  # type: ignore[union-attr]


@pytest.mark.kafka
async def test_through_the_workers_the_stages_continue_the_tool_call_s_trace(
        kafka_bootstrap: str, topics: Topics) -> None:
    async with running(kafka_bootstrap, topics):
        asker = KafkaAsker(kafka_bootstrap, topics)
        await asker.start()
        try:
            tool, trace = await traced_call(asker)
        finally:
            await asker.aclose()
    stages = {_attr(s, "pmflow.stage") for s in trace if _attr(s, "pmflow.stage")}
    assert {"plan", "evidence", "verify", "answer"} <= stages
    [send] = [s for s in trace if s.name == f"send {topics.route_decided}"]
    assert send.parent is not None
    assert send.parent.span_id == tool.context.span_id  # type: ignore[union-attr]
