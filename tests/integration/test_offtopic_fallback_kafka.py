"""On the real broker: our MCP server answers a Guangzhou question with another city's page,
so the evidence stage records the attempt as insufficient and the live-search fallback over a
local web site finds the right page; the reply cites only that page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.support.kafka import collect, produce
from tests.support.mcp_servers import stdio_config
from tests.support.pages import site_with_pages
from tests.support.processors import running
from tests.support.web_site import LocalSite

pytestmark = pytest.mark.kafka

OTHER_CITY = {"url": "https://weather.example/cn/shenzhen", "site": "示例天气", "lang": "zh",
              "title": "深圳天气预报 未来5天",
              "body": "深圳未来5天天气预报：今天多云，24~29℃；明天小雨，21~25℃；后天阴，20~24℃。",
              "age_hours": 2}


def guangzhou_page() -> str:
    published = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
    return f"""<html><head><title>广州未来5天天气预报</title>
<meta property="article:published_time" content="{published}"></head>
<body><article><h1>广州未来5天天气预报</h1>
<p>广州未来5天天气：今天晴，气温15至24℃；明天多云，气温16至23℃；后天小雨，气温14至20℃。</p>
</article></body></html>"""


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with site_with_pages({"/weather/guangzhou": guangzhou_page()}) as local:
        yield local


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"about": "one page about another city",
                                "pages": [OTHER_CITY]}, ensure_ascii=False), "utf-8")
    return path


async def test_off_topic_mcp_evidence_falls_back_and_the_reply_cites_only_the_fallback_page(
        kafka_bootstrap: str, topics: Topics, site: LocalSite, corpus: Path) -> None:
    mcp = McpAdapter(stdio_config("--corpus", str(corpus)))
    fallback = LiveSearchAdapter(engine=SearxngJson(site.url("", host="localhost")),
                                 allow_hosts=[f"localhost:{site.port}"])
    route = {**ROUTE_DECIDED, "question_id": "q-offtopic", "deadline_ms": 8000}
    try:
        # The server's cold start is not the question's time: it must answer, off-topic.
        assert await mcp.warm_up(60.0) is None
        async with running(kafka_bootstrap, topics, adapters=[mcp, fallback]):
            await produce(kafka_bootstrap, topics.route_decided,
                          [(b"q-offtopic", orjson.dumps(route))])
            records = await collect(kafka_bootstrap,
                                    [topics.answer_ready, topics.reply_rendered],
                                    until=lambda rs: len(rs) >= 2, settle_s=0.5)
    finally:
        await mcp.aclose()
    [answer] = [AnswerReady.model_validate_json(r.value) for r in records
                if r.topic == topics.answer_ready]
    [reply] = [ReplyRendered.model_validate_json(r.value) for r in records
               if r.topic == topics.reply_rendered]
    outcomes = [(a.adapter, a.outcome) for a in answer.attempts]
    # MCP answered (its per-call attempts are ok) but nothing it found was about Guangzhou.
    assert ("mcp", "insufficient") in outcomes and ("live_search", "ok") in outcomes, outcomes
    assert outcomes.index(("mcp", "insufficient")) < outcomes.index(("live_search", "ok"))
    assert answer.status is AnswerStatus.answered, answer.reason
    page = site.url("/weather/guangzhou", host="localhost")
    assert [s.url for s in reply.sources] == [page]
    assert "深圳" not in reply.text and "24~29℃" not in reply.text
    assert "气温16至23℃" in reply.text and "来源摘要" in reply.text
