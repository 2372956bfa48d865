"""Memory writer: AnswerReady -> the QA record and route memory; and the reads other callers
make of the memories (the planner's domain hints, a routing prior).

The store does the idempotent, tenant-scoped writes and applies the memory rules
(`contract.memory_rules`); this module decides which of a tenant's similar past questions
lend what to a new one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from pmflow_gateway.contract.memory_rules import NEGATIVE_FEEDBACK, RoutePrior, route_prior
from pmflow_gateway.ports import MemoryStore, SimilarQuestion, Unavailable, Unstorable
from pmflow_gateway.schemas import AnswerReady

log = logging.getLogger(__name__)

# How many similar past questions a routing prior weighs.
PRIOR_SAMPLES = 10
# The decision origin of a question an agent asked through the MCP tools.
AGENT_TOOL_ORIGIN = "agent_tool"


def is_remembered(event: AnswerReady, *, agent_questions: bool) -> bool:
    """Whether the answer is recorded: every answer, but one to a question an agent asked
    through the MCP tools only when agent questions are remembered."""
    return agent_questions or event.context.routing.decision_origin != AGENT_TOOL_ORIGIN


async def remember_answer(event: AnswerReady, *, store: MemoryStore) -> bool:
    """Persist the answer; False when it was already recorded (a redelivery)."""
    return await store.record_answer(event)


async def prior_for(store: MemoryStore, tenant_id: str, question: str) -> RoutePrior:
    """The routing prior the tenant's own similar past questions give this question."""
    return route_prior(await store.similar(tenant_id, question, limit=PRIOR_SAMPLES))


@dataclass(frozen=True, kw_only=True)
class DomainHintPolicy:
    """How the planner's preferred-domain hints are drawn from the route memories.

    Switched on by the setting `PMFLOW_MEMORY_DOMAIN_HINTS` (default off): the plan stage
    then calls `preferred_domain_hints` and appends the result to the plan's
    `preferred_domains` (which only raises those domains' authority score; it never filters).
    """

    min_similarity: float = 0.4
    """Only questions at least this alike (bigram Jaccard of the keys) lend their domains.
    0.4 keeps rephrasings ("未来5天广州的天气如何" vs "帮我看看未来5天的广州天气如何": 0.41)
    and drops the same question about another city (…深圳天气如何: 0.33)."""
    max_hints: int = 3
    """At most this many domains are suggested."""
    candidates: int = 5
    """How many similar questions are consulted."""
    timeout_s: float = 1.0
    """The longest planning waits for the memories; a store that is away or slower than
    this gives no hints, and the question is planned without them."""


async def preferred_domain_hints(
    store: MemoryStore, tenant_id: str, question: str, policy: DomainHintPolicy | None = None
) -> list[str]:
    """Domains that grounded well-rated answers to this tenant's similar past questions,
    best first. A memory whose latest feedback is negative lends nothing. Hints only raise
    a domain's score, so none (the store away or slow) is an answer too."""
    policy = policy or DomainHintPolicy()
    weights: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for similar in await _similar_or_none(store, tenant_id, question, policy):
        if similar.similarity < policy.min_similarity:
            continue
        if similar.feedback_outcome in NEGATIVE_FEEDBACK:
            continue
        for domain in similar.good_domains:
            weights[domain] = weights.get(domain, 0.0) + similar.similarity
            first_seen.setdefault(domain, len(first_seen))
    ranked = sorted(weights, key=lambda domain: (-weights[domain], first_seen[domain]))
    return ranked[: policy.max_hints]


async def _similar_or_none(store: MemoryStore, tenant_id: str, question: str,
                           policy: DomainHintPolicy) -> list[SimilarQuestion]:
    try:
        async with asyncio.timeout(policy.timeout_s):
            return await store.similar(tenant_id, question, limit=policy.candidates)
    except (Unavailable, Unstorable, TimeoutError) as exc:
        log.warning("planning without domain hints: the route memories did not answer (%s)",
                    exc or f"no answer within {policy.timeout_s:g} s")
        return []
