"""Do independent sites agree on what was asked?

A plan that requires several sources wants two sites (registrable domains) that say the same
thing. What can be compared without understanding the page are its key figures: the level a
market page quotes, or the numbers a page gives for the single day asked (tomorrow's
temperatures). Two sites contradict each other when both give key figures and none of one
site's figures is close to any of the other's; pages with no key figures contradict nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import combinations

from pmflow_gateway.contract.relevance import (
    asked_day,
    names_something_else,
    quoted_levels,
)
from pmflow_gateway.contract.text import split_sentences
from pmflow_gateway.contract.when import speaks_of
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind

CLOSE = 0.01  # figures within 1 % of each other are the same figure rounded or a minute apart
DISAGREE = "sources disagree: "
_NUMBER = re.compile(r"(?<![\d.])\d+(?:,\d{3})*(?:\.\d+)?")


def key_figures(plan: ExternalQueryPlan, text: str) -> set[float]:
    """The figures of a page that answer the plan: a market's quoted level, or the numbers
    of the sentences about the single day asked. Empty when the plan asks for neither."""
    if plan.query_kind is QueryKind.market:
        return set(quoted_levels(text))
    day = asked_day(plan)
    if day not in ("today", "tomorrow", "after_tomorrow"):
        return set()
    return {_number(n) for sentence in split_sentences(text)
            if speaks_of(sentence, day) and not names_something_else(plan, sentence)
            for n in _NUMBER.findall(sentence)}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= CLOSE * max(abs(a), abs(b))


def disagreement(plan: ExternalQueryPlan, pages: Iterable[tuple[str, str]]) -> str | None:
    """Why the sites of these (site, text) pages contradict each other, or None."""
    by_site: dict[str, set[float]] = {}
    for site, text in pages:
        by_site.setdefault(site, set()).update(key_figures(plan, text))
    stated = {site: figures for site, figures in by_site.items() if figures}
    for (site_a, a), (site_b, b) in combinations(stated.items(), 2):
        if not any(_close(x, y) for x in a for y in b):
            return (f"{DISAGREE}{site_a} {_shown(a)} vs {site_b} {_shown(b)}")[:300]
    return None


def _shown(figures: set[float]) -> str:
    return "/".join(f"{f:g}" for f in sorted(figures)[:4])
