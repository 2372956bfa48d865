"""In-memory fakes of the ports, for unit tests of the stage cores."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pmflow_gateway.handlers.ports import AdapterResult
from pmflow_gateway.schemas import AdapterAttempt, ExternalEvidence, ExternalQueryPlan


@dataclass
class FixedClock:
    at: datetime = field(default_factory=lambda: datetime(2026, 12, 2, 8, 0, tzinfo=UTC))

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@dataclass
class FakeAdapter:
    """Returns the evidence it was given, or fails the way it was told to."""

    name: str
    items: list[ExternalEvidence] = field(default_factory=list)
    outcome: str = "ok"
    calls: list[ExternalQueryPlan] = field(default_factory=list)

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls.append(plan)
        items = self.items if self.outcome == "ok" else []
        return AdapterResult(items=items, attempts=[AdapterAttempt(
            adapter=self.name, outcome=self.outcome if items or self.outcome != "ok" else "empty",
            evidence_count=len(items), error=None if self.outcome == "ok" else self.outcome)])


def evidence(url: str, snippet: str, *, fresh: float = 0.9, source_type: str = "mcp_search",
             label: str = "Example", title: str = "A page") -> ExternalEvidence:
    return ExternalEvidence(
        source_type=source_type, source_label=label, title=title, target_url=url,
        snippet=snippet, retrieved_at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC),
        freshness_score=fresh, authority_score=0.5)
