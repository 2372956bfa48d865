"""The local corpus: dated pages whose publication time is relative to when they are served."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path

from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.urls import canonical_url


@dataclass(frozen=True, kw_only=True)
class Page:
    url: str
    site: str
    lang: str
    title: str
    body: str
    age_hours: float
    """How old the page is at any moment it is served: tests stay valid whatever the date."""

    def published_at(self, now: datetime) -> datetime:
        return now - timedelta(hours=self.age_hours)


def load_pages(path: Path | None = None) -> list[Page]:
    """The packaged corpus, or another file of the same shape."""
    if path is None:
        text = resources.files("pmflow_gateway").joinpath("corpus/pages.json").read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    return [
        Page(url=p["url"], site=p["site"], lang=p["lang"], title=p["title"], body=p["body"],
             age_hours=float(p["age_hours"]))
        for p in json.loads(text)["pages"]
    ]


# Question words carry no topic; without this "What is the weather in London this week?"
# ranks a what's-on page above the forecasts because "this" and "week" are rare.
STOPWORDS = frozenset({
    "a", "an", "and", "are", "at", "be", "by", "can", "do", "does", "for", "how", "i", "in",
    "is", "it", "me", "of", "on", "or", "please", "show", "tell", "the", "this", "to", "what",
    "what's", "when", "where", "which", "who", "will", "with", "you",
    "的", "了", "吗", "呢", "帮我", "我看", "看看", "如何", "怎么", "什么"})


def search_pages(pages: list[Page], query: str, limit: int) -> list[Page]:
    """Best weighted term overlap first. Rare terms weigh more (idf), so "广州" decides over
    "天气"; the title counts double because it says what the page is about."""
    page_terms = [(terms(p.title), terms(p.body)) for p in pages]
    query_terms = terms(query) - STOPWORDS
    weight = {t: math.log(1 + len(pages) / (1 + sum(t in a or t in b for a, b in page_terms)))
              for t in query_terms}
    total = sum(weight.values()) or 1.0
    scored = []
    for index, (page, (title_terms, body_terms)) in enumerate(zip(pages, page_terms, strict=True)):
        score = (2 * sum(weight[t] for t in query_terms & title_terms)
                 + sum(weight[t] for t in query_terms & body_terms)) / total
        if score > 0:
            scored.append((-score, page.age_hours, index, page))
    scored.sort(key=lambda row: row[:3])
    return [row[3] for row in scored[:limit]]


def find_page(pages: list[Page], url: str) -> Page | None:
    wanted = _page_key(url)
    return next((p for p in pages if _page_key(p.url) == wanted), None)


def _page_key(url: str) -> str:
    """The page whatever its scheme: the corpus serves each page once."""
    return canonical_url(url).partition("://")[2]
