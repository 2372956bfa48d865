"""The question contract: is this evidence about what was asked?

One definition, used by every adapter (to score and to decide whether to try the next one),
by the evidence verifier (to drop what is about something else, with the reason) and by the
composer and the answer verifier (to keep only the lines about the asked place, subject and
day). A wrong answer is worse than a refusal, so every rule here errs towards "not about it".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from pmflow_gateway.contract.gazetteer import (
    ALIAS_GROUPS,
    CITIES,
    COUNTRIES,
    EVERYDAY_WORD_COMPANIES,
    TERM_ALIASES,
)
from pmflow_gateway.contract.terms import overlap, terms
from pmflow_gateway.contract.text import CJK, CJK_CHARS
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind

TOPIC_COVERAGE = 0.5  # share of the question's terms a page must carry when it names nothing
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
# A market page quotes a level: "closed at $231.40", "收报3412.56点", "中间价报7.1234".
_QUOTE = re.compile(
    r"(?:(?:closed|closes|trades|traded|trading|opened|priced|quoted|stands?|stood|settled)"
    r"\s+(?:at|near|around)|收报|收于|报价?|价格为|现价|price\s*[:：])\s*[$¥€£]?\s*\d",
    re.IGNORECASE)
_PLACE_SUFFIX = re.compile(r"[市区县省]$")

# The asked day, from the plan's time hint; a period asks for every day the page gives.
_DAY_WORDS: dict[str, re.Pattern[str]] = {
    "after_tomorrow": re.compile(r"后天|day after tomorrow", re.IGNORECASE),
    "tomorrow": re.compile(r"明天|明日|tomorrow", re.IGNORECASE),
    "today": re.compile(r"今天|今日|今晚|today|tonight", re.IGNORECASE),
}
_PERIOD = re.compile(r"未来|几天|\d+\s*天|本周|这周|周末|next\s+\d+|days|week", re.IGNORECASE)


@functools.cache
def _alias_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, set[str]] = {}
    groups: list[tuple[str, ...]] = [*ALIAS_GROUPS, *TERM_ALIASES, *CITIES, *COUNTRIES]
    for group in groups:
        for name in group:
            index.setdefault(name.casefold(), set()).update(group)
    return {key: tuple(sorted(forms)) for key, forms in index.items()}


def name_forms(name: str, kind: QueryKind | None = None) -> tuple[str, ...]:
    """Every spelling of a name that counts as naming it: itself, its aliases in both scripts,
    and a Chinese place without its 市/区/县 suffix. An everyday word that is also a company
    (苹果) stands for the company only in company and market questions."""
    name = name.strip()
    if len(name) > _CACHED_NAME_CHARS:
        return _name_forms(name, kind)
    return _cached_name_forms(name, kind)


def _name_forms(name: str, kind: QueryKind | None) -> tuple[str, ...]:
    if not name:
        return ()
    if kind in (QueryKind.company, QueryKind.market) and name in EVERYDAY_WORD_COMPANIES:
        company = EVERYDAY_WORD_COMPANIES[name]
        return (f"{name}公司", company, *_alias_index().get(company.casefold(), ()))
    forms = {name, _PLACE_SUFFIX.sub("", name) if CJK.search(name) else name}
    forms.update(_alias_index().get(name.casefold(), ()))
    forms.update(_alias_index().get(_PLACE_SUFFIX.sub("", name).casefold(), ()))
    return tuple(sorted(f for f in forms if f))


# Asked about dozens of times per question for the same few names; the cache key is bounded.
_CACHED_NAME_CHARS = 100
_cached_name_forms = functools.lru_cache(maxsize=4096)(_name_forms)


@functools.lru_cache(maxsize=4096)
def _form_pattern(form: str) -> re.Pattern[str]:
    if CJK.search(form):
        return re.compile(re.escape(form))
    # Short all-capital forms (US, EU, BTC) are acronyms: "us" in running text is not one.
    flags = 0 if form.isupper() and len(form) <= 4 else re.IGNORECASE
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", flags)


def names(name: str, text: str, kind: QueryKind | None = None) -> bool:
    """Whether the text names `name` in any of its forms."""
    return any(_form_pattern(form).search(text) for form in name_forms(name, kind))


def asked_names(plan: ExternalQueryPlan) -> list[str]:
    """The place and subjects the question asks about (the place first)."""
    found = [plan.location_hint] if plan.location_hint else []
    return list(dict.fromkeys([*found, *plan.subject_entities]))


def asked_day(plan: ExternalQueryPlan) -> str | None:
    """today, tomorrow, after_tomorrow, period, or None when the question names no day."""
    hint = (plan.time_range_hint or "").strip()
    if not hint:
        return None
    for day, pattern in _DAY_WORDS.items():
        if pattern.search(hint):
            return day
    return "period" if _PERIOD.search(hint) else None


def names_day(text: str, day: str) -> bool:
    """Whether a sentence speaks about `day` (and, for tomorrow, not about the day after)."""
    pattern = _DAY_WORDS.get(day)
    if pattern is None:
        return False
    if day == "tomorrow" and _DAY_WORDS["after_tomorrow"].search(text):
        return bool(pattern.search(_DAY_WORDS["after_tomorrow"].sub("", text)))
    return bool(pattern.search(text))


def off_topic(plan: ExternalQueryPlan, text: str) -> str | None:
    """Why this evidence text is not about what the plan asks, or None when it is.

    The asked place must be named (in any of its forms); every asked subject must be, except
    in a comparison, where one is enough; a year the question names must appear; a single day
    asked (tomorrow, the day after) must be spoken of; and a question that names nothing must
    share most of its terms with the page.
    """
    kind = plan.query_kind
    if plan.location_hint and not names(plan.location_hint, text, kind):
        return f"off-topic: does not mention the asked place {plan.location_hint[:40]}"
    subjects = [s for s in plan.subject_entities if s != plan.location_hint]
    named = [s for s in subjects if names(s, text, kind)]
    compare = plan.answer_contract.value == "compare_with_sources"
    if subjects and (not named if compare else len(named) < len(subjects)):
        missing = [s for s in subjects if s not in named]
        return f"off-topic: does not mention the asked subject {', '.join(missing)[:60]}"
    years = set(_YEAR.findall(" ".join([plan.topic, *plan.search_queries])))
    if missing_years := sorted(y for y in years if y not in text):
        return f"off-topic: not about the asked year {', '.join(missing_years)}"
    if plan.location_hint and (part := _part_of_place(plan, text.split("\n", 1)[0])):
        return f"off-topic: about {part[:20]}, a part of the asked place"
    if kind is QueryKind.market and not _QUOTE.search(text):
        return "off-topic: quotes no price or level of the asked instrument"
    day = asked_day(plan)
    if day in ("tomorrow", "after_tomorrow") and not names_day(text, day):
        return f"off-topic: says nothing about the asked day ({plan.time_range_hint})"
    if not asked_names(plan) and _coverage(plan, text) < TOPIC_COVERAGE:
        return "off-topic: shares too little with the question"
    return None


def quotes_a_level(text: str) -> bool:
    """Whether the text quotes a market level (a price, a close, a rate)."""
    return bool(_QUOTE.search(text))


def _part_of_place(plan: ExternalQueryPlan, title: str) -> str | None:
    """A page titled with a district of the asked city (北京市朝阳区) is about that district,
    unless the question names it."""
    for form in name_forms(plan.location_hint or ""):
        if CJK.search(form):
            part = _district_pattern(form).search(title)
            if part and part.group(1) not in plan.topic:
                return part.group(1)
    return None


def _coverage(plan: ExternalQueryPlan, text: str) -> float:
    wanted = [terms(q) for q in [plan.topic, *plan.search_queries] if q.strip()]
    return max((overlap(t, text) for t in wanted if t), default=0.0)


@functools.lru_cache(maxsize=1024)
def _district_pattern(form: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(form)}市?([{CJK_CHARS}]{{1,4}}[区县])")


@functools.cache
def _known_names() -> tuple[str, ...]:
    return tuple(name for group in [*ALIAS_GROUPS, *CITIES] for name in group)


def names_something_else(plan: ExternalQueryPlan, sentence: str) -> bool:
    """A sentence that names a known place or company that was not asked, and nothing that
    was: a line about another city on a page about several."""
    asked = asked_names(plan)
    if not asked or any(names(a, sentence, plan.query_kind) for a in asked):
        return False
    asked_forms = {f.casefold() for a in asked for f in name_forms(a, plan.query_kind)}
    return any(_form_pattern(n).search(sentence) for n in _known_names()
               if n.casefold() not in asked_forms and len(n) >= 2)


def place_readings(plan: ExternalQueryPlan, texts: Iterable[str]) -> list[str]:
    """The different places the evidence reads the asked place as ("Paris, France" and
    "Paris, Texas"; 北京市朝阳区 and 辽宁省朝阳市), one qualifier per page at most."""
    place = plan.location_hint
    if not place:
        return []
    readings: list[str] = []
    for text in texts:
        for form in name_forms(place):
            if CJK.search(form):
                qualified = re.search(rf"([{CJK_CHARS}]{{2,3}}?)[省市]?{re.escape(form)}[市区县]",
                                      text)
            else:
                qualified = re.search(rf"{re.escape(form)}\s*,\s*([A-Z][A-Za-z.]+)", text,
                                      re.IGNORECASE)
            if qualified and qualified.group(1) not in readings:
                readings.append(qualified.group(1))
                break
            if qualified:
                break
    return readings
