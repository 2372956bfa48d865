"""Private and metadata URLs inside MCP results never reach a reply: seventeen spellings,
each the only hit of an otherwise perfect answer, through the real stage cores and a real
MCP server over streamable HTTP."""

from __future__ import annotations

from urllib.parse import urlsplit

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.schemas import AnswerStatus, RouteDecided
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from tests.fakes import fake_deps
from tests.support.hostile_mcp import PRIVATE_URLS
from tests.support.mcp_servers import hostile_http_config, hostile_http_server


def cited(url: str, texts: list[str]) -> bool:
    host = urlsplit(url).netloc
    return any(url in text or host in text for text in texts)


async def test_no_private_url_from_an_mcp_result_is_cited() -> None:
    reached: list[str] = []
    with hostile_http_server() as server:
        for form, url in enumerate(PRIVATE_URLS):
            mcp = McpAdapter(hostile_http_config(server, search_args={"query": "{query}",
                                                                      "form": form}))
            deps = fake_deps(clock=SystemClock(), adapters=[mcp])
            route = RouteDecided.model_validate({**ROUTE_DECIDED, "question_id": f"q-{form}"})
            try:
                outcome = await ask_in_process(route, deps)
            finally:
                await mcp.aclose()
            assert outcome.answer is not None and outcome.reply is not None
            texts = [s.url for s in outcome.answer.sources_used] + [outcome.reply.text]
            if cited(url, texts):
                reached.append(url)
            else:
                assert outcome.answer.status is not AnswerStatus.answered
    print(f"\nprivate URLs cited: {len(reached)} of {len(PRIVATE_URLS)} forms")
    assert reached == []
