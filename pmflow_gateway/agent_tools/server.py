"""The MCP server face: `external_search`, `external_probe` and `route_prior`, for PMFlow's
agents and its route gateway.

Every result is structured content described by a pydantic model; a failure is an MCP tool
error (`isError`) with one readable sentence, never a traceback. The tenant is the caller's
(`access`): a `tenant_id` argument an older caller still sends is ignored.
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from pmflow_gateway.agent_tools.access import TenantTokens
from pmflow_gateway.agent_tools.askers import AnswerTimeout, Asker, NotAnswered
from pmflow_gateway.agent_tools.probe_tool import PREVIOUS, QUESTION, add_external_probe
from pmflow_gateway.contract.memory_rules import EXTERNAL_ONLY, RoutePrior
from pmflow_gateway.handlers.evidence import MIN_ATTEMPT_S
from pmflow_gateway.handlers.memory import AGENT_TOOL_ORIGIN, prior_for
from pmflow_gateway.ports import MemoryStore, Unavailable
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, RouteDecided

DEFAULT_DEADLINE_MS = 20_000
# route_prior's confidence comes in these steps only: an exact figure would tell a caller how
# alike a stored question is to each guess it sends.
CONFIDENCE_STEPS = 4


class Source(BaseModel):
    n: int = Field(description="The [n] marker the answer cites it by")
    title: str
    site: str
    url: str
    published_at: datetime | None = Field(description="When the page was published, if known")
    freshness: float | None = Field(description="0..1, how fresh the evidence was judged")


class PlanSummary(BaseModel):
    query_kind: str
    topic: str
    freshness_required: bool
    search_queries: list[str]
    location_hint: str | None
    time_range_hint: str | None


class MemoryWrite(BaseModel):
    written: bool | None = Field(description="True: the answer is in the tenant's memories; "
                                 "false: it could not be written (see error), the answer "
                                 "itself stands; null: the workers write it")
    error: str | None = Field(default=None, description="Why it was not written")


class ExternalSearchResult(BaseModel):
    question_id: str
    status: str = Field(description="answered, freshness_guard, clarify, rejected, refused, "
                        "failed or timed_out")
    answer: str = Field(description="The verified answer (or what the user is told instead)")
    citations: list[int] = Field(description="The [n] markers the answer uses")
    sources: list[Source] = Field(description="External sources of this execution only")
    plan: PlanSummary
    missing: list[str] = Field(description="Why it could not answer, when it did not")
    demo: bool = Field(description="True when the sources are invented demo pages: the answer "
                       "is not real information and must not be presented as such")
    memory: MemoryWrite = Field(default_factory=lambda: MemoryWrite(written=None),
                                description="Whether this answer was remembered")


class RoutePriorResult(BaseModel):
    suggested_route_mode: str | None = Field(
        description="external, internal or uncertain; null when there is no history")
    confidence: float = Field(description="0, 0.25, 0.5, 0.75 or 1; grows with agreeing, "
                              "similar samples")
    samples: int = Field(description="How many similar past questions were weighed")
    outcomes: dict[str, int] = Field(description="Their answer statuses")
    feedback: dict[str, int] = Field(description="Their feedback, including wrong_route")
    good_domains: list[str] = Field(description="Domains that grounded well-rated answers")
    basis: str


EXTERNAL_SEARCH = (
    "Answer a question from fresh PUBLIC web sources (weather, news, prices, schedules, "
    "public facts), with citations. Returns a verified answer whose every [n] marker "
    "resolves to one of the listed external sources; when it cannot answer it says so "
    "(status other than 'answered') and lists what was missing. Never uses private or "
    "internal data: do not call it for questions about the tenant's own documents or chats.")
WRITES_NOTHING = " It writes nothing: the question and its answer are not remembered."
WRITES_MEMORY = (" It records the question, its answer and their sources in your tenant's "
                 "route memory, which route_prior reads.")
ROUTE_PRIOR = (
    "Before deciding whether a question needs private data (internal), fresh public data "
    "(external) or is unclear (uncertain), ask how this tenant's similar past questions "
    "were routed and rated: returns a suggested route mode with a confidence, the number "
    "of similar samples, their outcomes and feedback (wrong_route counts against the route "
    "taken), and the domains that grounded well-rated answers, from your tenant's history "
    "only. Read-only; empty when there is no similar history.")


def build_agent_server(asker: Asker, store: MemoryStore, *, tokens: TenantTokens | None = None,
                       local_tenant: str = "local", remember: bool = False) -> MCPServer:
    """The tools for callers of one tenant each: with `tokens` (HTTP), the tenant their
    bearer token was issued for; without (stdio), `local_tenant`. `remember` says whether
    the workers record agent questions (`is_remembered`), so the annotations tell the truth."""
    auth = None if tokens is None else AuthSettings(
        issuer_url="http://127.0.0.1", resource_server_url=None)  # tokens from a file
    server = MCPServer("pmflow-gateway", version="1", log_level="WARNING",
                       token_verifier=tokens, auth=auth)

    def caller_tenant() -> str:
        access = get_access_token()
        if access is not None:
            return access.client_id
        if tokens is None:
            return local_tenant
        raise ToolError("no credential: this server answers callers with a bearer token")

    @server.tool(description=EXTERNAL_SEARCH + (WRITES_MEMORY if remember else WRITES_NOTHING),
                 annotations=ToolAnnotations(
                     title="External search", read_only_hint=not remember,
                     destructive_hint=False, idempotent_hint=False, open_world_hint=True))
    async def external_search(
        question: QUESTION,
        locale: Annotated[str, Field(max_length=35, description="e.g. zh-CN, en")] = "zh-CN",
        thread_id: Annotated[str | None, Field(max_length=200)] = None,
        deadline_ms: Annotated[int, Field(ge=100, le=600_000,
                                          description="Time budget")] = DEFAULT_DEADLINE_MS,
        previous_question: PREVIOUS = None,
    ) -> ExternalSearchResult:
        route = _route(question, caller_tenant(), locale, thread_id, deadline_ms,
                       previous_question)
        try:
            asked = await asker.ask(route, timeout_s=deadline_ms / 1000)
        except AnswerTimeout as exc:
            raise ToolError(f"deadline of {deadline_ms} ms expired: {exc}") from None
        except NotAnswered as exc:
            raise ToolError(str(exc)) from None
        if ran_out_of_time(asked.answer):
            raise ToolError(f"deadline of {deadline_ms} ms expired before the sources "
                            "answered") from None
        return search_result(asked.answer, MemoryWrite(written=asked.remembered,
                                                       error=asked.memory_error))

    add_external_probe(server, asker, caller_tenant)

    @server.tool(description=ROUTE_PRIOR, annotations=ToolAnnotations(
        title="Route prior", read_only_hint=True, destructive_hint=False,
        idempotent_hint=True, open_world_hint=False))
    async def route_prior(question: QUESTION) -> RoutePriorResult:
        try:
            return prior_result(await prior_for(store, caller_tenant(), question))
        except Unavailable as away:
            raise ToolError(f"the route memories cannot be read now ({away}); try again "
                            "later") from None

    return server


def _route(question: str, tenant_id: str, locale: str, thread_id: str | None,
           deadline_ms: int, previous: str | None) -> RouteDecided:
    try:
        return RouteDecided(
            event_id=str(uuid.uuid4()), question_id=f"agent-{uuid.uuid4().hex}",
            tenant_id=tenant_id, occurred_at=datetime.now(UTC), question=question,
            locale=locale, thread_id=thread_id, route_mode="external",
            effective_source_policy="external_only", decision_origin=AGENT_TOOL_ORIGIN,
            reply_contract="external_realtime", deadline_ms=deadline_ms,
            previous_question=previous)
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ToolError(f"invalid arguments: {reasons}") from None


def ran_out_of_time(answer: AnswerReady) -> bool:
    """Unanswered, and made when too little of the budget was left for another source
    attempt: the caller's deadline is what failed, not the sources."""
    too_late = answer.context.deadline_at - timedelta(seconds=MIN_ATTEMPT_S)
    return answer.status is AnswerStatus.timed_out or (
        answer.status is not AnswerStatus.answered and answer.occurred_at >= too_late)


def search_result(answer: AnswerReady,
                  memory: MemoryWrite | None = None) -> ExternalSearchResult:
    plan = answer.plan
    missing = [] if answer.status is AnswerStatus.answered else [
        reason for reason in [answer.reason, *answer.verdict.violations,
                              *answer.verdict.dropped_reasons] if reason]
    if answer.status is not AnswerStatus.answered and not answer.verdict.freshness_ok:
        missing.append("no fresh external source")
    return ExternalSearchResult(
        question_id=answer.question_id, status=str(answer.status), answer=answer.answer,
        citations=[c.n for c in answer.citations],
        sources=[Source(n=s.n, title=s.title, site=s.site, url=s.url,
                        published_at=s.published_at, freshness=s.freshness)
                 for s in answer.sources_used],
        plan=PlanSummary(query_kind=str(plan.query_kind), topic=plan.topic,
                         freshness_required=plan.freshness_required,
                         search_queries=list(plan.search_queries),
                         location_hint=plan.location_hint, time_range_hint=plan.time_range_hint),
        missing=list(dict.fromkeys(missing))[:10], demo=answer.demo,
        memory=memory or MemoryWrite(written=None))


def prior_result(prior: RoutePrior) -> RoutePriorResult:
    """The prior as a caller sees it: confidence in steps, and no vote shares."""
    basis = prior.basis
    if prior.samples:
        basis = f"{prior.samples} similar past question(s) of your tenant"
        basis += "" if prior.knows_internal else f"; {EXTERNAL_ONLY}"
    return RoutePriorResult(
        suggested_route_mode=prior.suggested_route_mode,
        confidence=coarse_confidence(prior.confidence), samples=prior.samples,
        outcomes=prior.outcomes, feedback=prior.feedback, good_domains=prior.good_domains,
        basis=basis)


def coarse_confidence(confidence: float) -> float:
    """Up to the next step: any evidence at all reads as at least the first step."""
    return math.ceil(min(max(confidence, 0.0), 1.0) * CONFIDENCE_STEPS) / CONFIDENCE_STEPS
