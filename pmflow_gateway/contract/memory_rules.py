"""Which answers count as good and which domains grounded them: the memory rules that the
real store and the in-memory one both apply to their rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pmflow_gateway.contract.urls import bare_host
from pmflow_gateway.schemas import AnswerStatus

# Feedback that says the answer (or the route that led to it) should not be repeated.
NEGATIVE_FEEDBACK = frozenset({"unhelpful", "wrong_route", "stale", "incorrect"})

# A memory keeps at most this many good domains, most frequent first.
MAX_GOOD_DOMAINS = 10


def is_good_answer(status: str, feedback_outcome: str | None) -> bool:
    """Answered, and nobody has said it was wrong: what a later question may learn from."""
    return status == AnswerStatus.answered and feedback_outcome not in NEGATIVE_FEEDBACK


def rank_good_domains(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Domains that grounded good answers, most answers first (first seen breaks ties).

    Each record is a QA record row: `status`, `feedback_outcome` and `sources_used`
    (dumped `SourceUsed` dicts). A domain counts once per answer, however often it is cited.
    """
    counts: Counter[str] = Counter()
    for record in records:
        if not is_good_answer(record["status"], record["feedback_outcome"]):
            continue
        # dict, not set: the order sources were cited in must break ties reproducibly.
        urls = [str(source.get("url", "")) for source in record["sources_used"]]
        domains = dict.fromkeys(bare_host(url) for url in urls)
        counts.update(domain for domain in domains if domain)
    return [domain for domain, _ in counts.most_common(MAX_GOOD_DOMAINS)]
