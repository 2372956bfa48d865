"""The route memories' rules, as pure functions over a snapshot of the rows they read.

The SQL store and the in-memory test store both read their rows, call these functions and
write back what they return, so one set of rules decides: a late answer changes nothing, a
newer answer moves its question's outcome, a changed vote moves rather than adds, which
domains grounded well-rated answers, and what prior a tenant's similar past questions give
a new question.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.ports import SimilarQuestion

# Feedback that says the answer (or the route that led to it) should not be repeated.
NEGATIVE_FEEDBACK = frozenset({"unhelpful", "wrong_route", "stale", "incorrect"})
# Feedback that says the answer's content was bad: the domains it cited lose credit for it.
# `wrong_route` is about the route, not the sources, so it only withholds the credit.
DISCREDITING_FEEDBACK = frozenset({"unhelpful", "incorrect", "stale"})
# A memory keeps at most this many good domains, most credit first.
MAX_GOOD_DOMAINS = 10

RouteMode = Literal["external", "internal", "uncertain"]
# A suggestion needs this share of the weighted votes; below it the prior says "uncertain".
SUGGEST_SHARE = 0.6
# Weighted samples needed before the prior is fully confident (similarity x hits).
FULL_SUPPORT = 3.0
# Said of a prior none of whose samples PMFlow reported as answered internally: the gateway
# only sees the questions routed to it unless PMFlow publishes its own outcomes.
EXTERNAL_ONLY = ("external outcomes only: PMFlow has reported no internal outcome of a "
                 "similar question (topic query.route-outcome.v1)")


@dataclass(frozen=True, kw_only=True)
class RecordRow:
    """The QA record fields the rules read."""

    question_key: str
    status: str
    answered_at: datetime
    feedback_outcome: str | None = None
    feedback_at: datetime | None = None
    sources_used: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, kw_only=True)
class MemoryRow:
    """The route memory counters the rules move (a new memory starts from the defaults)."""

    hit_count: int = 0
    outcome_counts: Mapping[str, int] = field(default_factory=dict)
    feedback_counts: Mapping[str, int] = field(default_factory=dict)
    feedback_at: datetime | None = None


def answer_is_late(previous: RecordRow | None, answered_at: datetime) -> bool:
    """An answer older than the one already recorded for the question changes nothing."""
    return previous is not None and previous.answered_at > answered_at


def count_answer(memory: MemoryRow, previous: RecordRow | None, *, key: str,
                 status: str) -> dict[str, Any]:
    """The memory's new `hit_count` and `outcome_counts` after an answer to `key`.

    A question already counted under this key moves its outcome instead of adding a hit; a
    question whose key changed counts as a new sample."""
    outcomes = dict(memory.outcome_counts)
    hits = memory.hit_count
    if previous is not None and previous.question_key == key:
        outcomes[previous.status] = outcomes.get(previous.status, 0) - 1
    else:
        hits += 1
    outcomes[status] = outcomes.get(status, 0) + 1
    return {"hit_count": hits, "outcome_counts": _positive(outcomes)}


def feedback_is_late(record: RecordRow, at: datetime) -> bool:
    """Feedback older than the feedback already on the record changes nothing."""
    return record.feedback_at is not None and record.feedback_at > at


def count_feedback(memory: MemoryRow, record: RecordRow, *, outcome: str,
                   at: datetime) -> dict[str, Any]:
    """The memory's new feedback values: a user who changes their mind moves their vote
    (one question, one vote); the memory's latest feedback follows the newest event."""
    counts = dict(memory.feedback_counts)
    if record.feedback_outcome is not None:
        counts[record.feedback_outcome] = counts.get(record.feedback_outcome, 0) - 1
    counts[outcome] = counts.get(outcome, 0) + 1
    values: dict[str, Any] = {"feedback_counts": _positive(counts)}
    if memory.feedback_at is None or memory.feedback_at <= at:
        values |= {"feedback_outcome": outcome, "feedback_at": at}
    return values


def _positive(counts: Mapping[str, int]) -> dict[str, int]:
    return {name: n for name, n in counts.items() if n > 0}



def is_good_answer(status: str, feedback_outcome: str | None) -> bool:
    """Answered, and nobody has said it was wrong: a well-rated sample."""
    return status == "answered" and feedback_outcome not in NEGATIVE_FEEDBACK


def rank_good_domains(records: Iterable[RecordRow]) -> list[str]:
    """Domains that grounded good answers, most net credit first (first seen breaks ties).

    A good answer gives each domain it cited one credit; an answer rated incorrect,
    unhelpful or stale takes one back from each of its domains, so a domain only counts as
    good while its good answers outnumber its discredited ones."""
    credit: Counter[str] = Counter()
    for record in records:
        good = is_good_answer(record.status, record.feedback_outcome)
        if not good and record.feedback_outcome not in DISCREDITING_FEEDBACK:
            continue
        # dict, not set: the order sources were cited in must break ties reproducibly.
        urls = [str(source.get("url", "")) for source in record.sources_used]
        for domain in dict.fromkeys(bare_host(url) for url in urls):
            if domain:
                credit[domain] += 1 if good else -1
    ranked = [domain for domain, n in credit.most_common() if n > 0]
    return ranked[:MAX_GOOD_DOMAINS]


@dataclass(frozen=True, kw_only=True)
class RoutePrior:
    """What a tenant's similar past questions suggest about routing a new one."""

    suggested_route_mode: RouteMode | None
    confidence: float
    samples: int
    outcomes: dict[str, int]
    feedback: dict[str, int]
    good_domains: list[str]
    basis: str
    knows_internal: bool = False
    """Whether any sample is a question PMFlow answered internally (reported outcomes)."""


def route_prior(similar: Sequence[SimilarQuestion]) -> RoutePrior:
    """Each similar past question votes for the route it took, weighted by similarity and
    by how often it was asked; a `wrong_route` vote goes against that route instead (to
    `internal` when it went external: a question sent out that should not have been needed
    private data; otherwise to `uncertain`). Below `SUGGEST_SHARE` of the votes the prior
    says `uncertain`; confidence grows with the weight of evidence up to `FULL_SUPPORT`.
    Samples PMFlow reported as answered internally vote like ours; without any, the basis
    says the prior knows external outcomes only."""
    if not similar:
        return RoutePrior(suggested_route_mode=None, confidence=0.0, samples=0, outcomes={},
                          feedback={}, good_domains=[],
                          basis="no similar past questions for this tenant")
    votes: dict[str, float] = {}
    outcomes: Counter[str] = Counter()
    feedback: Counter[str] = Counter()
    for sample in similar:
        wrong = min(sample.feedback_counts.get("wrong_route", 0), sample.hit_count)
        for mode, n in ((sample.route_mode, sample.hit_count - wrong),
                        (_overturned(sample.route_mode), wrong)):
            votes[mode] = votes.get(mode, 0.0) + sample.similarity * n
        outcomes.update(sample.outcomes)
        feedback.update(sample.feedback_counts)
    total = sum(votes.values())
    mode, top = max(votes.items(), key=lambda vote: vote[1])
    share = top / total if total > 0 else 0.0
    suggested: RouteMode = _route_mode(mode) if share >= SUGGEST_SHARE else "uncertain"
    confidence = round(share * min(1.0, total / FULL_SUPPORT), 3)
    knows_internal = any(sample.route_mode == "internal" for sample in similar)
    basis = f"{len(similar)} similar past question(s), {share:.0%} of weighted votes for {mode}"
    return RoutePrior(
        suggested_route_mode=suggested, confidence=confidence, samples=len(similar),
        outcomes=dict(outcomes), feedback=dict(feedback),
        good_domains=_prior_domains(similar), knows_internal=knows_internal,
        basis=basis if knows_internal else f"{basis}; {EXTERNAL_ONLY}")


def _overturned(mode: str) -> str:
    return "internal" if mode == "external" else "uncertain"


def _route_mode(mode: str) -> RouteMode:
    if mode == "external":
        return "external"
    return "internal" if mode == "internal" else "uncertain"


def _prior_domains(similar: Sequence[SimilarQuestion], limit: int = MAX_GOOD_DOMAINS) -> list[str]:
    """Good domains of the samples whose latest feedback is not negative, the most similar
    samples' domains first."""
    weights: dict[str, float] = {}
    for sample in similar:
        if sample.feedback_outcome in NEGATIVE_FEEDBACK:
            continue
        for domain in sample.good_domains:
            weights[domain] = weights.get(domain, 0.0) + sample.similarity
    return sorted(weights, key=lambda domain: -weights[domain])[:limit]
