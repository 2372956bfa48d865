"""`external_probe`: what a short look-up of public sources finds before PMFlow decides a
route, as an MCP tool (the probe stage's core, in process or through the workers)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from pmflow_gateway.agent_tools.askers import AnswerTimeout, Asker
from pmflow_gateway.schemas import ProbeCompleted, ProbeMetrics, ProbeRequested
from pmflow_gateway.schemas.events import PROBE_DEADLINE_MS, QueryProfile

QUESTION = Annotated[str, Field(min_length=1, max_length=4000,
                                description="The user's question, in their own words")]
PREVIOUS = Annotated[str | None, Field(max_length=1000, description=(
    "The thread's previous question, for a follow-up such as \"那明天呢\""))]

EXTERNAL_PROBE = (
    "Before deciding how to route a question, measure what a short look-up of PUBLIC web "
    "sources finds, without composing an answer: freshness_required, "
    "trusted_domain_hit_count, answerable_page_hit_count, cross_source_agreement and "
    "external_entity_hit, within deadline_ms (default 3000). The evidence found is kept a "
    "short while, so external_search of the same question reuses it. Nothing is sent out "
    "for a question that needs private context: it is refused.")


class ExternalProbeResult(ProbeMetrics):
    question_id: str
    status: str = Field(description="probed, or refused (nothing was sent out: the question "
                        "needs private context or the source policy is internal-only)")
    reason: str | None = Field(default=None, description="Why it was refused")
    search_queries: list[str] = Field(default_factory=list, description="What was searched")
    elapsed_ms: float = Field(description="How long the probe took")


def add_external_probe(server: MCPServer, asker: Asker,
                       caller_tenant: Callable[[], str]) -> None:
    @server.tool(description=EXTERNAL_PROBE, annotations=ToolAnnotations(
        title="External probe", read_only_hint=True, destructive_hint=False,
        idempotent_hint=False, open_world_hint=True))
    async def external_probe(
        question: QUESTION,
        locale: Annotated[str, Field(max_length=35, description="e.g. zh-CN, en")] = "zh-CN",
        previous_question: PREVIOUS = None,
        needs_freshness: Annotated[bool, Field(description="The question asks for fresh "
                                               "facts")] = False,
        needs_private_context: Annotated[bool, Field(description="The question needs the "
                                                     "tenant's private data: nothing is "
                                                     "probed")] = False,
        deadline_ms: Annotated[int, Field(ge=100, le=10_000, description="Time budget")]
        = PROBE_DEADLINE_MS,
    ) -> ExternalProbeResult:
        request = probe_request(question, caller_tenant(), locale, previous_question,
                                QueryProfile(needs_freshness=needs_freshness,
                                             needs_private_context=needs_private_context),
                                deadline_ms)
        try:
            completed = await asker.probe(request, timeout_s=deadline_ms / 1000)
        except AnswerTimeout:
            raise ToolError(f"deadline of {deadline_ms} ms expired before the probe "
                            "finished") from None
        return probe_result(completed)


def probe_request(question: str, tenant_id: str, locale: str, previous: str | None,
                  profile: QueryProfile, deadline_ms: int) -> ProbeRequested:
    try:
        return ProbeRequested(
            event_id=str(uuid.uuid4()), question_id=f"probe-{uuid.uuid4().hex}",
            tenant_id=tenant_id, occurred_at=datetime.now(UTC), question=question,
            locale=locale, previous_question=previous, query_profile=profile,
            deadline_ms=deadline_ms)
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ToolError(f"invalid arguments: {reasons}") from None


def probe_result(completed: ProbeCompleted) -> ExternalProbeResult:
    metrics = completed.metrics or ProbeMetrics(
        freshness_required=False, trusted_domain_hit_count=0, answerable_page_hit_count=0,
        cross_source_agreement=0.0, external_entity_hit=False)
    return ExternalProbeResult(
        **metrics.model_dump(), question_id=completed.question_id, status=completed.status,
        reason=completed.reason, elapsed_ms=completed.elapsed_ms,
        search_queries=list(completed.plan.search_queries) if completed.plan else [])
