"""How one piece of evidence scores against a plan: freshness, authority, and which of the
plan's asked slots it mentions. Every adapter scores with these, so the answer stage reads one
meaning whichever adapter found the evidence."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import names_a_day
from pmflow_gateway.contract.qualifiers import asks_who_holds
from pmflow_gateway.contract.relevance import names
from pmflow_gateway.contract.slots import Slot, asked_slot
from pmflow_gateway.contract.terms import overlap, terms
from pmflow_gateway.contract.urls import host_of, host_within
from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan, QueryKind

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
# Who holds an office or a role now changes on the scale of months, whatever the kind of
# question: a page older than this naming a CEO or a coach may name the predecessor.
HOLDER_WINDOW = timedelta(days=120)
# Whether a state still holds ("is the ban still on?", "现在还限行吗") is answered by a page
# written since it could have changed: a month at most, whatever the kind of question. A
# numbered release does not change ("does Kafka 4.0 still need ZooKeeper?" asks about 4.0).
PERSISTS_WINDOW = timedelta(days=30)
_ASKS_IF_IT_PERSISTS = CaseBlind(
    r"(?<![a-z])(?:still|anymore|any longer|no longer)(?![a-z])|还[^，,。？?]{0,10}[吗么]"
    r"|仍然?|依然|依旧")
_NUMBERED_RELEASE = CaseBlind(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.%])|(?<![\w.])v\d+(?![\w.])")
# "The latest figure" (最新CPI, the latest inflation rate, 最新吞吐量) is the one of the last
# release: a page older than a quarter has been overtaken by the next one.
LATEST_WINDOW = timedelta(days=90)
_ASKS_LATEST = CaseBlind(r"最新|最近一期|(?<![a-z])(?:latest|most recent|newest)(?![a-z])")
# A price asked for today (今天猪肉多少钱, petrol price today) is this fortnight's at the
# oldest: a price from a page a month old was a month ago's. Not a standard or a count
# (最低工资标准, the population today), which change by the year.
TODAY_WINDOW = timedelta(days=14)
_ASKS_A_PRICE = CaseBlind(r"多少钱|价格|价钱|(?<![a-z])(?:price|prices|cost|costs)(?![a-z])")
_ASKS_TODAY = CaseBlind(r"今天|今日|今晚|(?<![a-z])(?:today|tonight)(?![a-z])")
# The price of a good whose price moves with its market, asked as it is now ("current propane
# price", 现在猪肉多少钱), is this month's at the oldest: last winter's survey is not it. Not
# a fee (a passport, a stamp, 门票), which changes by the year.
NOW_PRICE_WINDOW = timedelta(days=30)
_A_MARKET_GOOD = CaseBlind(
    r"油价|汽油|柴油|液化气|天然气价|猪肉|牛肉|鸡蛋|蔬菜|菜价|大米|黄金|金价|银价|铜价|房价|房租|租金"
    r"|(?<![a-z])(?:gas|gasoline|petrol|diesel|propane|heating oil|fuel|eggs?|milk|beef|pork"
    r"|chicken|rice|gold|silver|copper|bitcoin|rent|rents|mortgage rates?)(?![a-z])")
ASKS_NOW = CaseBlind(r"现在|目前|当前|眼下|(?<![a-z])(?:now|rn|currently|current"
                      r"|at the moment|these days)(?![a-z])")
_FIGURES = (Slot.amount, Slot.quantity, Slot.share)
FRESH_ENOUGH = 0.5  # score of an item published exactly one window ago
GROUNDING_OVERLAP = 0.5  # share of a hint's terms a text must contain to mention it


def freshness_window(plan: ExternalQueryPlan) -> timedelta:
    """How long the answer to this plan's question stays true: its kind's window, and no more
    than `HOLDER_WINDOW` for a question about who holds a role, nor than `PERSISTS_WINDOW`
    for a question whether something still holds, nor than `LATEST_WINDOW` for the latest
    figure, nor than `TODAY_WINDOW` for a price asked for today, nor than `NOW_PRICE_WINDOW`
    for one asked as it is now."""
    window = FRESHNESS_WINDOW[plan.query_kind]
    asked = f"{plan.topic} {' '.join(plan.search_queries[:1])}"
    if asks_who_holds(asked):
        window = min(window, HOLDER_WINDOW)
    if _ASKS_IF_IT_PERSISTS.search(asked) and not _NUMBERED_RELEASE.search(asked):
        window = min(window, PERSISTS_WINDOW)
    if _ASKS_LATEST.search(asked) and asked_slot(asked) in _FIGURES:
        window = min(window, LATEST_WINDOW)
    if _ASKS_TODAY.search(asked) and _ASKS_A_PRICE.search(asked):
        window = min(window, TODAY_WINDOW)
    if ASKS_NOW.search(asked) and _A_MARKET_GOOD.search(asked):
        window = min(window, NOW_PRICE_WINDOW)
    return window


def freshness_score(published_at: datetime | None, plan: ExternalQueryPlan,
                    now: datetime) -> float:
    """1.0 when published now, 0.5 one window ago, halving every window; 0.0 when unknown."""
    if published_at is None:
        return 0.0
    age = max((now - published_at).total_seconds(), 0.0)
    if plan.query_kind is QueryKind.market and age < _TWO_WEEKS_S:
        # Markets do not trade at weekends: on Sunday, Friday's close is the latest price.
        age = max(age - _weekend_seconds(published_at, now), 0.0)
    window = freshness_window(plan).total_seconds()
    return round(math.pow(0.5, age / window), 4)


_TWO_WEEKS_S = 14 * 86_400  # older than that, a quote is stale whatever the weekends


def _weekend_seconds(start: datetime, end: datetime) -> float:
    """How much of [start, end] falls on a Saturday or a Sunday (UTC)."""
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    seconds = 0.0
    day = datetime(start.year, start.month, start.day, tzinfo=UTC)
    while day < end:
        following = day + timedelta(days=1)
        if day.weekday() >= 5:
            seconds += max((min(end, following) - max(start, day)).total_seconds(), 0.0)
        day = following
    return seconds


def published_at(item: ExternalEvidence) -> datetime | None:
    """The publication time an adapter recorded, when it is a readable ISO 8601 time with
    its offset."""
    value = item.raw_metadata.get("published_at")
    if not isinstance(value, str):
        return None
    try:
        published = datetime.fromisoformat(value)
    except ValueError:
        return None
    return published if published.tzinfo is not None else None


def authority_score(url: str, preferred_domains: list[str]) -> float:
    """Preferred or official domains count most; https counts a little."""
    host = host_of(url)
    score = 0.3
    if url.lower().startswith("https:"):
        score += 0.1
    if host_within(host, preferred_domains):
        score += 0.5
    elif host.endswith((".gov", ".gov.cn", ".edu", ".org")):
        score += 0.3
    return round(min(score, 1.0), 4)


def grounded_fields(plan: ExternalQueryPlan, text: str) -> list[str]:
    """Which of the plan's asked slots (`location_hint`, `time_range_hint`,
    `subject_entities`) this evidence text mentions, in that order.

    A slot is mentioned when its value or one of its aliases appears (case and spacing
    aside) or most of its terms do. The time slot is also mentioned by any named day (a date,
    12月3日, a weekday, today): forecasts and reports speak about days, not about "the next 5 days".
    """
    squashed = _squash(text)

    def mentions(hint: str | None) -> bool:
        if not hint or not hint.strip():
            return False
        return (_squash(hint) in squashed or names(hint, text, plan.query_kind)
                or overlap(terms(hint), text) >= GROUNDING_OVERLAP)

    fields = []
    if mentions(plan.location_hint):
        fields.append("location_hint")
    if plan.time_range_hint and plan.time_range_hint.strip() and (
            mentions(plan.time_range_hint) or names_a_day(text)):
        fields.append("time_range_hint")
    if any(mentions(entity) for entity in plan.subject_entities):
        fields.append("subject_entities")
    return fields


def _squash(text: str) -> str:
    return "".join(text.casefold().split())
