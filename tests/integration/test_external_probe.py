"""The external probe as a service: over MCP stdio (`pmflow-gateway mcp --demo`, the real
command) and as a request/reply pair of topics on the real broker."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client, StdioServerParameters

from pmflow_gateway.adapters.evidence_cache import RecentEvidence
from pmflow_gateway.agent_tools.askers import KafkaAsker
from pmflow_gateway.schemas import ProbeCompleted, ProbeRequested, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import WEATHER, FakeAdapter
from tests.support.kafka import collect, produce
from tests.support.processors import running

QUESTION = ROUTE_DECIDED["question"]
METRICS = {"freshness_required", "trusted_domain_hit_count", "answerable_page_hit_count",
           "cross_source_agreement", "external_entity_hit"}


def server_env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "PMFLOW_DATA_DIR": str(data_dir), "PMFLOW_AGENT_TENANT": "acme"}
    for name in ("PMFLOW_DATABASE_URL", "PMFLOW_DEMO", "PMFLOW_MCP_CONFIG"):
        env.pop(name, None)
    return env


async def probe(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("external_probe", arguments)
    # A probe past its deadline is a tool error: this one answered within it.
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_over_mcp_stdio_the_probe_gives_five_metrics_and_follow_ups_are_planned(
        tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "pmflow_gateway.cli", "mcp", "--demo"],
                                   env=server_env(tmp_path))
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["external_probe"].annotations.open_world_hint  # type: ignore[union-attr]
        found = await probe(client, question=QUESTION, needs_freshness=True, deadline_ms=3000)
        private = await probe(client, question="Nightjar 项目第三季度的里程碑进度如何",
                              needs_private_context=True)
        follow_up = await client.call_tool("external_search", {
            "question": "那明天呢", "previous_question": "广州今天天气如何"})
    print(f"\nexternal_probe over stdio: {found}")
    assert found["status"] == "probed" and set(found) >= METRICS
    assert found["freshness_required"] is True and found["external_entity_hit"] is True
    assert found["answerable_page_hit_count"] >= 1
    assert 0.0 <= found["cross_source_agreement"] <= 1.0
    assert found["trusted_domain_hit_count"] >= 0 and found["search_queries"]
    assert private["status"] == "refused" and private["search_queries"] == []
    assert private["answerable_page_hit_count"] == 0 and "routing policy" in private["reason"]
    searched = follow_up.structured_content
    assert not follow_up.is_error and searched is not None
    assert searched["plan"]["location_hint"] == "广州" and searched["status"] != "clarify"


@pytest.mark.kafka
async def test_a_probe_request_on_the_topic_gets_its_reply_and_the_kafka_asker_reads_it(
        kafka_bootstrap: str, topics: Topics) -> None:
    adapter = FakeAdapter("mcp", items=[WEATHER])
    request = {"event_id": str(uuid.uuid4()), "question_id": "probe-by-hand",
               "tenant_id": "acme", "occurred_at": "2026-12-02T08:00:00+00:00",
               "schema_version": 1, "question": QUESTION, "locale": "zh-CN",
               "query_profile": {"needs_freshness": True}, "deadline_ms": 3000}
    async with running(kafka_bootstrap, topics, adapters=[adapter],
                       evidence_cache=RecentEvidence(ttl_s=60)):
        await produce(kafka_bootstrap, topics.probe_requested,
                      [(b"probe-by-hand", orjson.dumps(request))])
        [record] = await collect(kafka_bootstrap, [topics.probe_completed],
                                 until=lambda rs: len(rs) >= 1, timeout_s=30,
                                 isolation_level="read_committed")
        asker = KafkaAsker(kafka_bootstrap, topics)
        await asker.start()
        try:
            again = await asker.probe(ProbeRequested.model_validate(
                {**request, "event_id": str(uuid.uuid4()), "question_id": "probe-2"}),
                timeout_s=30)
        finally:
            await asker.aclose()
    completed = ProbeCompleted.model_validate_json(record.value)
    assert record.key == b"probe-by-hand"
    assert completed.status == "probed" and completed.metrics is not None
    assert completed.metrics.answerable_page_hit_count == 1
    assert again.question_id == "probe-2" and again.metrics == completed.metrics
    assert len(adapter.calls) == 1  # the second probe of the same plan reused the evidence
