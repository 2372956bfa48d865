"""The contracts every stage relies on: the plan, the evidence, and the statuses an answer can
end in."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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


class ExternalQueryPlan(Frozen):
    """What to search for: the planner's only output (13 fields)."""

    plan_version: str = "v1"
    query_kind: QueryKind = QueryKind.unknown
    answer_contract: AnswerContract = AnswerContract.summary_with_sources
    freshness_required: bool = False
    topic: str = ""
    subject_entities: list[str] = Field(default_factory=list)
    location_hint: str | None = None
    time_range_hint: str | None = None
    preferred_domains: list[str] = Field(default_factory=list)
    search_queries: list[str] = Field(default_factory=list)
    result_limit: int = Field(default=3, ge=1, le=10)
    requires_multi_source: bool = False
    clarify_on_ambiguity: bool = False


class ExternalEvidence(Frozen):
    """One piece of external evidence as every adapter must return it (10 fields)."""

    source_type: str  # "url" for fetched pages, "mcp_search" for MCP results
    source_label: str
    title: str
    target_url: str
    snippet: str
    retrieved_at: datetime
    freshness_score: float = Field(default=0.0, ge=0.0, le=1.0)
    authority_score: float = Field(default=0.0, ge=0.0, le=1.0)
    grounded_fields: list[str] = Field(default_factory=list)
    raw_metadata: dict[str, Any] = Field(default_factory=dict)


class ExternalEvidenceBundle(Frozen):
    """All evidence of one external execution; the only thing upper layers read."""

    execution_id: str
    items: list[ExternalEvidence] = Field(default_factory=list)


class AdapterAttempt(Frozen):
    """One try of one adapter, recorded whatever its outcome."""

    adapter: str
    server: str | None = None
    tool: str | None = None
    outcome: str  # ok | empty | error | timeout | refused | circuit_open | skipped
    latency_ms: float = 0.0
    evidence_count: int = 0
    error: str | None = None


class PlannerInfo(Frozen):
    """Which planner produced the plan, and why a fallback happened if it did."""

    mode: str  # rules | model | fallback
    model: str | None = None
    latency_ms: float = 0.0
    reason: str | None = None


class Citation(Frozen):
    """An `[n]` marker of the answer and the evidence item it points to."""

    n: int = Field(ge=1)
    target_url: str
    title: str


class SourceUsed(Frozen):
    """One line of the sources summary: numbered, external, of this execution."""

    n: int = Field(ge=1)
    title: str
    site: str
    url: str
    published_at: datetime | None = None
    freshness: float | None = Field(default=None, ge=0.0, le=1.0)


class Verdict(Frozen):
    """What the verifier decided, before and after composition."""

    passed: bool
    kept: int = 0
    dropped: int = 0
    dropped_reasons: list[str] = Field(default_factory=list)
    freshness_ok: bool = True
    multi_source_ok: bool = True
    violations: list[str] = Field(default_factory=list)
