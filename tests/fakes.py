"""In-memory fakes of the ports, for unit tests of the stage cores."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pmflow_gateway.ports import AdapterResult
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


WEATHER = evidence("https://www.weather.com.cn/guangzhou/5d",
                   "广州未来5天以多云为主，气温18至25度。")


@dataclass
class InMemoryStore:
    """The MemoryStore port as two dicts; idempotent by event id like the real one."""

    answers: dict[tuple[str, str], object] = field(default_factory=dict)
    applied: set[str] = field(default_factory=set)
    feedback: dict[tuple[str, str], str] = field(default_factory=dict)

    async def record_answer(self, event: object) -> bool:
        event_id = event.event_id  # type: ignore[attr-defined]
        if event_id in self.applied:
            return False
        self.applied.add(event_id)
        self.answers[(event.tenant_id, event.question_id)] = event  # type: ignore[attr-defined]
        return True

    async def apply_feedback(self, event: object) -> bool:
        from pmflow_gateway.ports import UnknownQuestion

        key = (event.tenant_id, event.question_id)  # type: ignore[attr-defined]
        if key not in self.answers:
            raise UnknownQuestion(f"no question {key[1]} for tenant {key[0]}")
        if event.event_id in self.applied:  # type: ignore[attr-defined]
            return False
        self.applied.add(event.event_id)  # type: ignore[attr-defined]
        self.feedback[key] = event.outcome  # type: ignore[attr-defined]
        return True

    async def similar(self, tenant_id: str, question: str, *, limit: int = 5) -> list[object]:
        return []

    async def aclose(self) -> None:
        return None
