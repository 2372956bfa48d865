"""The project's own reply readers on the real broker: `ask --kafka` and `mcp --kafka` (the
real commands) publish with the caller's trace context and read replies `read_committed`. The
test plays the workers: for each question it writes a reply in a transaction it aborts, then
the real one; a reader that took the first would show the aborted text."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer, ConsumerRecord
from mcp import Client, StdioServerParameters

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.handlers.failure import failed_answer
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.schemas import RouteDecided, Topics
from pmflow_gateway.streams.app import ensure_topics
from pmflow_gateway.streams.codec import encode
from tests.support.kafka import collect

pytestmark = pytest.mark.kafka
QUESTION = "帮我看看未来 5 天的广州天气如何"
# An OTLP endpoint nobody answers: spans are dropped, the trace headers are still made.
NOBODY = "http://127.0.0.1:9"


def environment(topics: Topics, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMFLOW_", "OTEL_"))}
    return {**env, "PMFLOW_TOPIC_PREFIX": topics.prefix, "PMFLOW_DATA_DIR": str(data_dir),
            "OTEL_EXPORTER_OTLP_ENDPOINT": NOBODY, "OTEL_BSP_EXPORT_TIMEOUT": "500"}


async def the_question(bootstrap: str, topics: Topics) -> ConsumerRecord:
    [record] = await collect(bootstrap, [topics.route_decided], until=lambda rs: bool(rs),
                             timeout_s=60)
    return record


async def reply_twice(bootstrap: str, topic: str, key: bytes, aborted: bytes,
                      committed: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap,
                                transactional_id=f"test-{uuid.uuid4().hex}")
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait(topic, aborted, key=key)
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send_and_wait(topic, committed, key=key)
    finally:
        await producer.stop()


def sampled_trace(record: ConsumerRecord) -> str:
    header = dict(record.headers).get("traceparent", b"")
    match = re.fullmatch(rb"00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})", header)
    assert match and int(match[2], 16) & 1, record.headers
    return match[1].decode()


async def test_mcp_kafka_sends_traceparent_and_reads_only_committed_answers(
        kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> None:
    await ensure_topics(kafka_bootstrap, topics)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pmflow_gateway.cli", "mcp", "--kafka", kafka_bootstrap],
        env=environment(topics, tmp_path))
    async with Client(params) as client:
        call = asyncio.create_task(client.call_tool("external_search", {
            "question": QUESTION, "deadline_ms": 30_000}))
        record = await the_question(kafka_bootstrap, topics)
        sampled_trace(record)
        route = RouteDecided.model_validate_json(record.value)
        answer = failed_answer(route, "played by the test", clock=SystemClock())
        await reply_twice(kafka_bootstrap, topics.answer_ready, record.key,
                          encode(answer.model_copy(update={"answer": "ABORTED"})),
                          encode(answer.model_copy(update={"answer": "COMMITTED"})))
        result = await call
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["answer"] == "COMMITTED"


async def test_ask_kafka_reads_only_committed_replies(kafka_bootstrap: str, topics: Topics,
                                                      tmp_path: Path) -> None:
    await ensure_topics(kafka_bootstrap, topics)
    ask = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pmflow_gateway.cli", "ask", QUESTION, "--kafka", kafka_bootstrap,
        "--timeout", "30", env=environment(topics, tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    record = await the_question(kafka_bootstrap, topics)
    sampled_trace(record)
    route = RouteDecided.model_validate_json(record.value)
    reply = render_reply(failed_answer(route, "played by the test", clock=SystemClock()),
                         clock=SystemClock())
    await reply_twice(kafka_bootstrap, topics.reply_rendered, record.key,
                      encode(reply.model_copy(update={"text": "ABORTED"})),
                      encode(reply.model_copy(update={"text": "COMMITTED"})))
    out, err = await asyncio.wait_for(ask.communicate(), timeout=60)
    assert ask.returncode == 0, err.decode()
    assert out.decode().strip() == "COMMITTED"
