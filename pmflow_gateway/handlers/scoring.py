"""Freshness and authority of one piece of evidence, and the freshness window of each kind."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from pmflow_gateway.schemas import QueryKind

# How long a fact of each kind stays fresh: weather and markets in hours, news in days,
# companies and models in months.
FRESHNESS_WINDOW: dict[QueryKind, timedelta] = {
    QueryKind.weather: timedelta(hours=36),
    QueryKind.market: timedelta(hours=36),
    QueryKind.news: timedelta(days=7),
    QueryKind.company: timedelta(days=120),
    QueryKind.model: timedelta(days=120),
    QueryKind.generic_web: timedelta(days=365),
    QueryKind.unknown: timedelta(days=365),
}
FRESH_ENOUGH = 0.5  # score of an item published exactly one window ago


def freshness_score(published_at: datetime | None, kind: QueryKind, now: datetime) -> float:
    """1.0 when published now, 0.5 one window ago, halving every window; 0.0 when unknown."""
    if published_at is None:
        return 0.0
    age = max((now - published_at).total_seconds(), 0.0)
    window = FRESHNESS_WINDOW[kind].total_seconds()
    return round(math.pow(0.5, age / window), 4)


def authority_score(url: str, preferred_domains: list[str]) -> float:
    """Preferred or official domains count most; https counts a little."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    score = 0.3
    if parts.scheme == "https":
        score += 0.1
    if any(host == d or host.endswith("." + d) for d in preferred_domains):
        score += 0.5
    elif host.endswith((".gov", ".gov.cn", ".edu", ".org")):
        score += 0.3
    return round(min(score, 1.0), 4)
