"""The contracts every stage relies on: the plan, the evidence, and the statuses an answer can
end in."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# Every text and list an event carries is bounded, so that no valid input can grow into an
# output the broker refuses. Inputs over a bound are refused with the reason; what the stages
# produce from outside text (pages, search results, model replies) is clipped to the bound.
NAME_CHARS = 200  # identifiers, labels, hints
LINE_CHARS = 1000  # titles, reasons, errors, search queries
URL_CHARS = 2048
PASSAGE_CHARS = 4000  # snippets, questions, comments
ANSWER_CHARS = 20_000
REPLY_CHARS = 200_000  # the answer and its sources summary
MAX_ITEMS = 50  # evidence items, citations, sources, reasons, attempts
MAX_TERMS = 16  # entities, domains, queries, grounded fields, metadata keys


def clipped(limit: int) -> BeforeValidator:
    """Cut a text or a list to `limit` before it is validated. A list's bound is written
    before it (`Annotated[list[X], Field(max_length=N), clipped(N)]`), so pydantic-core
    checks the bound itself; written after, it is a Python function of its own per field.
    A text's bound stays after it, checked in Python: outside text may hold a lone
    surrogate, which pydantic-core cannot read to count its characters, and such a text
    must cost that character downstream, never the event."""
    def clip(value: object) -> object:
        return value[:limit] if isinstance(value, str | list) else value
    return BeforeValidator(clip)


Name = Annotated[str, Field(max_length=NAME_CHARS)]
Line = Annotated[str, Field(max_length=LINE_CHARS)]
Url = Annotated[str, Field(max_length=URL_CHARS)]
Passage = Annotated[str, Field(max_length=PASSAGE_CHARS)]
ClippedName = Annotated[str, clipped(NAME_CHARS), Field(max_length=NAME_CHARS)]
ClippedLine = Annotated[str, clipped(LINE_CHARS), Field(max_length=LINE_CHARS)]
ClippedPassage = Annotated[str, clipped(PASSAGE_CHARS), Field(max_length=PASSAGE_CHARS)]
ClippedAnswer = Annotated[str, clipped(ANSWER_CHARS), Field(max_length=ANSWER_CHARS)]
Terms = Annotated[list[ClippedName], Field(max_length=MAX_TERMS), clipped(MAX_TERMS)]
Lines = Annotated[list[ClippedLine], Field(max_length=MAX_ITEMS), clipped(MAX_ITEMS)]


class Frozen(BaseModel):
    """Base of every contract: immutable, unknown fields ignored (producers may add fields)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class QueryKind(StrEnum):
    weather = "weather"
    news = "news"
    company = "company"
    model = "model"
    market = "market"
    generic_web = "generic_web"
    unknown = "unknown"


class AnswerContract(StrEnum):
    direct_fact = "direct_fact"
    summary_with_sources = "summary_with_sources"
    compare_with_sources = "compare_with_sources"
    clarify = "clarify"


class AnswerStatus(StrEnum):
    answered = "answered"
    clarify = "clarify"
    freshness_guard = "freshness_guard"
    rejected = "rejected"
    failed = "failed"
    # No source was asked: the question's time ran out first (it waited past its bound in a
    # backlog, or planning used the whole budget). Not a verdict on the sources.
    timed_out = "timed_out"
    # The routing policy keeps the question from external sources (an internal-only source
    # policy, private context, an internal reply contract, an unknown routing value): nothing
    # was searched and nothing about it was sent out.
    refused = "refused"


class ExternalQueryPlan(Frozen):
    """What to search for: the planner's only output (13 fields)."""

    plan_version: Name = "v1"
    query_kind: QueryKind = QueryKind.unknown
    answer_contract: AnswerContract = AnswerContract.summary_with_sources
    freshness_required: bool = False
    topic: ClippedLine = ""
    subject_entities: Terms = Field(default_factory=list)
    location_hint: ClippedName | None = None
    time_range_hint: ClippedName | None = None
    preferred_domains: Terms = Field(default_factory=list)
    search_queries: Annotated[list[ClippedLine], Field(max_length=MAX_TERMS),
                              clipped(MAX_TERMS)] = Field(default_factory=list)
    result_limit: int = Field(default=3, ge=1, le=10)
    requires_multi_source: bool = False
    clarify_on_ambiguity: bool = False


class ExternalEvidence(Frozen):
    """One piece of external evidence as every adapter must return it (10 fields)."""

    source_type: Name  # "url" for fetched pages, "mcp_search" for MCP results
    source_label: ClippedName
    title: ClippedLine
    target_url: Url
    snippet: ClippedPassage
    retrieved_at: datetime
    freshness_score: float = Field(default=0.0, ge=0.0, le=1.0)
    authority_score: float = Field(default=0.0, ge=0.0, le=1.0)
    grounded_fields: Terms = Field(default_factory=list)
    raw_metadata: dict[str, Any] = Field(default_factory=dict, max_length=MAX_TERMS)


class ExternalEvidenceBundle(Frozen):
    """All evidence of one external execution; the only thing upper layers read."""

    execution_id: Name
    items: Annotated[list[ExternalEvidence], Field(max_length=MAX_ITEMS),
                     clipped(MAX_ITEMS)] = Field(default_factory=list)


class AdapterAttempt(Frozen):
    """One try of one adapter, recorded whatever its outcome."""

    adapter: Name
    server: ClippedName | None = None
    tool: ClippedName | None = None
    outcome: Name  # ok | empty | insufficient | error | timeout | refused | rate_limited |
    # circuit_open | busy | skipped
    latency_ms: float = 0.0
    evidence_count: int = 0
    error: ClippedLine | None = None


class PlannerInfo(Frozen):
    """Which planner produced the plan, and why a fallback happened if it did."""

    mode: Name  # rules | model | fallback
    model: ClippedName | None = None
    latency_ms: float = 0.0
    reason: ClippedLine | None = None


class Citation(Frozen):
    """An `[n]` marker of the answer and the evidence item it points to."""

    n: int = Field(ge=1)
    target_url: Url
    title: ClippedLine


class SourceUsed(Frozen):
    """One line of the sources summary: numbered, external, of this execution."""

    n: int = Field(ge=1)
    title: ClippedLine
    site: ClippedName
    url: Url
    published_at: datetime | None = None
    freshness: float | None = Field(default=None, ge=0.0, le=1.0)


class Verdict(Frozen):
    """What the verifier decided, before and after composition."""

    passed: bool
    kept: int = 0
    dropped: int = 0
    dropped_reasons: Lines = Field(default_factory=list)
    freshness_ok: bool = True
    multi_source_ok: bool = True
    violations: Lines = Field(default_factory=list)


class ProbeMetrics(Frozen):
    """What a short external look-up found, as PMFlow's route gateway weighs it before it
    decides a route (no answer is composed)."""

    freshness_required: bool = Field(description="The question asks for fresh facts")
    trusted_domain_hit_count: int = Field(ge=0, description=(
        "Pages found on a preferred domain or an official (.gov, .edu, .org over https) site"))
    answerable_page_hit_count: int = Field(ge=0, description=(
        "Pages the verifier would let an answer rest on: external, about what was asked, "
        "fresh enough"))
    cross_source_agreement: float = Field(ge=0.0, le=1.0, description=(
        "1 when two or more independent sites among the answerable pages agree on the key "
        "figures, 0 when they contradict each other or fewer than two sites answer"))
    external_entity_hit: bool = Field(description=(
        "Some page found is about the asked place and subjects (the question contract), "
        "fresh or not"))
