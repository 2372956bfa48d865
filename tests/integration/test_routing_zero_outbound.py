"""A route decision the routing table keeps from external sources causes no outbound request,
on the real broker through every stage: every internal or private combination of PMFlow's
routing fields (and values the table does not know) is sent, and the calls are counted at the
adapters' transports: MCP `tools/call` to our corpus server over stdio, HTTP requests of the
live search to a local site playing the search engine, and the planner's model."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import orjson
import pytest

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_session import McpSession
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.handlers.planners.model import ModelPlanner
from pmflow_gateway.schemas import ReplyRendered, Topics
from pmflow_gateway.schemas.examples import ROUTE_DECIDED
from pmflow_gateway.streams.app import Processor
from tests.fakes import ScriptedModel
from tests.support.counting import CountingSession
from tests.support.kafka import collect, produce
from tests.support.mcp_servers import stdio_config
from tests.support.processors import running
from tests.support.web_site import LocalSite

pytestmark = pytest.mark.kafka

# A question that names an internal project: its name must reach no one outside.
INTERNAL = "Nightjar 项目第三季度的里程碑进度如何，上周评审的结论是什么"
MODES = ["external", "uncertain", "internal"]
POLICIES = ["external_only", "external_first", "internal_only", "mixed", ""]
CONTRACTS = ["external_realtime", "clarification", "internal_answer", ""]


def may_go_out(mode: str, policy: str, private: bool, contract: str) -> bool:
    return (mode != "internal" and policy in ("external_only", "external_first")
            and not private and contract in ("external_realtime", "clarification"))


# Every combination that must not reach an external source (unknown and missing values too).
HELD_BACK = [c for c in itertools.product(MODES, POLICIES, [False, True], CONTRACTS)
             if not may_go_out(*c)]


def route(n: int, mode: str, policy: str, private: bool, contract: str) -> tuple[bytes, bytes]:
    question_id = f"held-{n}"
    doc = {**ROUTE_DECIDED, "question_id": question_id, "event_id": f"ev-held-{n}",
           "question": INTERNAL, "route_mode": mode, "effective_source_policy": policy,
           "reply_contract": contract, "sources": [],
           "query_profile": {"needs_private_context": private, "needs_freshness": True,
                             "referenced_objects": ["Nightjar"]}}
    return question_id.encode(), orjson.dumps(doc)


@dataclass
class Outside:
    """The counted transports of everything the gateway could send a question to."""

    mcp: CountingSession
    site: LocalSite
    model: ScriptedModel

    def calls(self) -> dict[str, int]:
        return {"mcp": len(self.mcp.calls), "web": len(self.site.requests),
                "model": len(self.model.calls)}


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        local.routes["/search"] = (200, {"Content-Type": "application/json"},
                                   orjson.dumps({"results": []}).decode())
        yield local


@pytest.fixture
async def outside(site: LocalSite) -> AsyncIterator[tuple[Outside, list[object]]]:
    config = stdio_config()
    session = CountingSession(McpSession(config))
    mcp = McpAdapter(config, session=session)
    web = LiveSearchAdapter(engine=SearxngJson(site.url("/")),
                            allow_hosts=[f"127.0.0.1:{site.port}", f"localhost:{site.port}"])
    # Not a plan: the rules planner stands in, after the model was asked.
    model = ScriptedModel(["{}"])
    yield Outside(mcp=session, site=site, model=model), [mcp, web]
    await mcp.aclose()


@pytest.fixture
async def processor(kafka_bootstrap: str, topics: Topics,
                    outside: tuple[Outside, list[object]]) -> AsyncIterator[Processor]:
    counted, adapters = outside
    async with running(kafka_bootstrap, topics, adapters=adapters,  # type: ignore[arg-type]
                       planner=ModelPlanner(model=counted.model, timeout_s=5)) as proc:
        yield proc


async def test_no_internal_or_private_question_causes_an_outbound_call(
        processor: Processor, outside: tuple[Outside, list[object]],
        kafka_bootstrap: str) -> None:
    counted, _ = outside
    topics = processor.topics
    sent = [route(n, *combination) for n, combination in enumerate(HELD_BACK)]
    replied = {key for (key, _), (mode, *_rest) in zip(sent, HELD_BACK, strict=True)
               if mode != "internal"}
    await produce(kafka_bootstrap, topics.route_decided, sent)
    records = await collect(kafka_bootstrap, [topics.reply_rendered],
                            until=lambda rs: {r.key for r in rs} >= replied, timeout_s=90)
    replies = {r.key: ReplyRendered.model_validate_json(r.value) for r in records}
    assert counted.calls() == {"mcp": 0, "web": 0, "model": 0}, (len(HELD_BACK), counted.calls())
    assert set(replies) == replied  # internal routes stay PMFlow's: no reply from here
    assert {str(reply.status) for reply in replies.values()} <= {"refused", "clarify"}
    assert all(reply.sources == [] for reply in replies.values())
    plan_stage = next(r for r in processor.runners if r.stage.name == "plan")
    evidence_stage = next(r for r in processor.runners if r.stage.name == "evidence")
    assert sum(plan_stage.counts.values()) == len(sent)
    assert evidence_stage.counts["processed"] == 0

    # The same transports count: an external question after them is searched.
    control = {**ROUTE_DECIDED, "question_id": "control", "event_id": "ev-control"}
    unknown = {**control, "question_id": "control-web", "event_id": "ev-control-web",
               "question": "Zorblax Quantum 的最新股价是多少"}
    await produce(kafka_bootstrap, topics.route_decided,
                  [(b"control", orjson.dumps(control)), (b"control-web", orjson.dumps(unknown))])
    await collect(kafka_bootstrap, [topics.reply_rendered], timeout_s=90,
                  until=lambda rs: {r.key for r in rs} >= {b"control", b"control-web"})
    calls = counted.calls()
    assert calls["mcp"] > 0 and calls["web"] > 0 and calls["model"] > 0, calls
