"""The memory stage's reads and writes: which domains it lends the planner, what it stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pmflow_gateway.handlers.feedback import remember_feedback
from pmflow_gateway.handlers.memory import (
    DomainHintPolicy,
    preferred_domain_hints,
    remember_answer,
)
from pmflow_gateway.ports import SimilarQuestion
from pmflow_gateway.schemas import AnswerReady, FeedbackGiven
from tests.support.pg import answer_ready, feedback_given


@dataclass
class ScriptedSimilar:
    """A MemoryStore whose similar() answers what the test scripted; writes are recorded."""

    found: list[SimilarQuestion] = field(default_factory=list)
    written: list[Any] = field(default_factory=list)
    asked: list[tuple[str, str, int]] = field(default_factory=list)

    async def record_answer(self, event: AnswerReady) -> bool:
        self.written.append(event)
        return True

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        self.written.append(event)
        return False

    async def similar(
        self, tenant_id: str, question: str, *, limit: int = 5
    ) -> list[SimilarQuestion]:
        self.asked.append((tenant_id, question, limit))
        return self.found[:limit]


def past(question: str, similarity: float, domains: list[str],
         feedback: str | None = None) -> SimilarQuestion:
    return SimilarQuestion(question=question, query_kind="weather", route_mode="external",
                           hit_count=1, outcomes={"answered": 1},
                           feedback_counts={feedback: 1} if feedback else {},
                           feedback_outcome=feedback, good_domains=domains,
                           similarity=similarity)


async def test_hints_weigh_domains_by_similarity_and_skip_weak_or_rejected_samples() -> None:
    store = ScriptedSimilar(found=[
        past("帮我看看未来5天的广州天气如何", 0.9, ["weather.com.cn", "tianqi.example"]),
        past("未来5天广州天气", 0.7, ["tianqi.example", "nmc.cn"]),
        past("未来5天广州天气怎样", 0.8, ["spam.example"], feedback="wrong_route"),
        past("广州交通", 0.3, ["traffic.example"]),
    ])
    hints = await preferred_domain_hints(store, "acme", "未来5天广州天气如何")

    assert hints == ["tianqi.example", "weather.com.cn", "nmc.cn"]
    assert store.asked == [("acme", "未来5天广州天气如何", DomainHintPolicy().candidates)]


async def test_hints_respect_the_policy() -> None:
    store = ScriptedSimilar(found=[past("q", 0.6, ["a.example", "b.example", "c.example"])])
    assert await preferred_domain_hints(
        store, "acme", "q", DomainHintPolicy(max_hints=2)) == ["a.example", "b.example"]
    assert await preferred_domain_hints(
        store, "acme", "q", DomainHintPolicy(min_similarity=0.7)) == []


async def test_remember_passes_events_to_the_store_and_its_verdict_back() -> None:
    store = ScriptedSimilar()
    answer, feedback = answer_ready(), feedback_given("helpful")
    assert await remember_answer(answer, store=store) is True
    assert await remember_feedback(feedback, store=store) is False
    assert store.written == [answer, feedback]
