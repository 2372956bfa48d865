"""The local corpus: pages with a fixed publication time, an age relative to when they are
served, or no date at all (undated pages exist on the web and must be handled).

A body may carry dates relative to when it is served, `{{date -26h %Y-%m-%d}}` (an offset
in hours, then a strftime format), so a dateline in the text stays as old as the page says
whatever the day the tests run. A corpus written for one day, whose pages print that week's
dates ("Monday 7 December"), says when it is served (`served_at`): its ages count from then,
and whoever asks it questions asks them then (`served_at`)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.urls import canonical_url


@dataclass(frozen=True, kw_only=True)
class Page:
    url: str
    site: str
    lang: str
    title: str
    body: str
    age_hours: float | None = None
    """How old the page is at any moment it is served: test corpora stay valid whatever the
    date. Pages of the demo corpus use `published` instead, so a canned text never looks
    fresh."""
    published: datetime | None = None
    """A fixed publication time; with neither field the page is undated."""

    def body_at(self, now: datetime) -> str:
        """The body as served at `now`, relative dates written out."""
        return _RELATIVE_DATE.sub(lambda m: _written(m, now), self.body)

    def published_at(self, now: datetime) -> datetime | None:
        if self.published is not None:
            return self.published
        if self.age_hours is None:
            return None
        return now - timedelta(hours=self.age_hours)


_RELATIVE_DATE = re.compile(r"\{\{date ([+-]?\d+(?:\.\d+)?)h ([^}]*)\}\}")


def _written(match: re.Match[str], now: datetime) -> str:
    return (now + timedelta(hours=float(match.group(1)))).strftime(match.group(2))


def load_pages(path: Path | None = None) -> list[Page]:
    """The packaged corpus, or another file of the same shape."""
    data = _read(path)
    pages = [_page(p) for p in data["pages"]]
    at = _served_at(data)
    if at is None:
        return pages
    return [p if p.age_hours is None else replace(p, published=at - timedelta(hours=p.age_hours))
            for p in pages]


def served_at(path: Path | None = None) -> datetime | None:
    """When a corpus written for one day is served, or None (whenever it is asked)."""
    return _served_at(_read(path))


def _read(path: Path | None) -> dict[str, Any]:
    if path is None:
        text = resources.files("pmflow_gateway").joinpath("corpus/pages.json").read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _served_at(data: dict[str, Any]) -> datetime | None:
    value = data.get("served_at")
    if value is None:
        return None
    at = datetime.fromisoformat(value)
    if at.tzinfo is None:
        raise ValueError(f"served_at needs its UTC offset: {value}")
    return at


def _page(row: dict[str, Any]) -> Page:
    age = row.get("age_hours")
    published = row.get("published_at")
    return Page(url=row["url"], site=row["site"], lang=row["lang"], title=row["title"],
                body=row["body"], age_hours=None if age is None else float(age),
                published=None if published is None else datetime.fromisoformat(published))


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
            scored.append((-score, _age_key(page), index, page))
    scored.sort(key=lambda row: row[:3])
    return [row[3] for row in scored[:limit]]


def _age_key(page: Page) -> float:
    """Newer first among equal scores; undated and fixed-date pages after relative ones."""
    return page.age_hours if page.age_hours is not None else math.inf


def find_page(pages: list[Page], url: str) -> Page | None:
    wanted = _page_key(url)
    return next((p for p in pages if _page_key(p.url) == wanted), None)


def _page_key(url: str) -> str:
    """The page whatever its scheme: the corpus serves each page once."""
    return canonical_url(url).partition("://")[2]
