"""When a fetched page was published, from its markup or, failing that, its visible text.

Sources in order of trust: the publication date in the markup (meta tags, JSON-LD,
`<time datetime>`), a date the text labels as the publication date, the first date inside
`<article>`, then the modification date in the markup, then the first date in the text. A
date the text calls today's (a portal header's "今天是…") is page chrome and never counts.

Every date from any source must be plausible: not before the web, and not later than now plus
`CLOCK_SKEW` (a date without a time of day: not later than that day anywhere on Earth, up to
`DATE_ONLY_SKEW` ahead of UTC). Forecast and event pages print future dates that say nothing
about when the page was written, and a search engine's future date is not a publication date.
A time without a zone is Beijing time on a Chinese page, UTC elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from pmflow_gateway.contract.dates import VISIBLE_DATE, date_from_match
from pmflow_gateway.contract.text import CJK

PUBLISHED_META_KEYS = (
    "article:published_time", "og:published_time", "og:article:published_time",
    "datepublished", "date", "pubdate", "publishdate", "publish_date", "dc.date",
    "dc.date.issued", "dcterms.created", "sailthru.date", "parsely-pub-date",
)
MODIFIED_META_KEYS = ("article:modified_time", "og:updated_time", "last-modified",
                      "dcterms.modified")
PUBLISHED_JSON_LD_KEYS = ("datePublished", "dateCreated", "uploadDate")
MODIFIED_JSON_LD_KEYS = ("dateModified",)
EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(minutes=10)
DATE_ONLY_SKEW = timedelta(hours=14)  # the farthest zone ahead of UTC (UTC+14)
BEIJING = timezone(timedelta(hours=8), "UTC+08:00")

# A date the page calls today's: page chrome, not when the article was written.
TODAY_MARK = re.compile(r"(?:今天是|今天|今日|当前日期|today\s+is|today)[\s:：,，]*$",
                        re.IGNORECASE)
PUBLISHED_MARK = re.compile(r"(?:发布|发表|刊发|时间|日期|published|posted|date)"
                            r"[^\n0-9]{0,6}$", re.IGNORECASE)

def published_at(page_html: str, visible_text: str, now: datetime) -> datetime | None:
    """The page's publication time, or None when nothing on it says."""
    try:
        tree = lxml_html.fromstring(page_html) if page_html.strip() else None
    except (ValueError, etree.ParserError):
        tree = None
    zone = page_zone(tree, visible_text)
    article = _article_text(tree)
    sources: list[Iterator[str]] = []
    if tree is not None:
        sources += [_meta_dates(tree, PUBLISHED_META_KEYS),
                    _json_ld_dates(tree, PUBLISHED_JSON_LD_KEYS), _time_element_dates(tree)]
    for source in sources:
        for text in source:
            if (moment := plausible_date(text, now, zone=zone)) is not None:
                return moment
    labelled = first_visible_date(visible_text, now, zone=zone, labelled_only=True)
    if labelled is not None:
        return labelled
    if article and (in_article := first_visible_date(article, now, zone=zone)) is not None:
        return in_article
    if tree is not None:
        for source in (_meta_dates(tree, MODIFIED_META_KEYS),
                       _json_ld_dates(tree, MODIFIED_JSON_LD_KEYS)):
            for text in source:
                if (moment := plausible_date(text, now, zone=zone)) is not None:
                    return moment
    return first_visible_date(visible_text, now, zone=zone)

def page_zone(tree: Any, text: str) -> timezone:
    """The zone a time without one is read in: Beijing on a Chinese page, else UTC."""
    lang = (tree.get("lang") or "").lower() if tree is not None else ""
    if lang.startswith("zh"):
        return BEIJING
    if lang:
        return UTC
    sample = text[:2000]
    return BEIJING if sample and len(CJK.findall(sample)) * 5 >= len(sample.strip()) else UTC

def first_visible_date(text: str, now: datetime, *, zone: timezone = UTC,
                       labelled_only: bool = False) -> datetime | None:
    """The first plausible date written in the text (2026-12-01, 2026年12月1日, Dec 1, 2026),
    skipping one the text calls today's; `labelled_only`: only one labelled as published."""
    for match in VISIBLE_DATE.finditer(text):
        before = text[max(match.start() - 12, 0):match.start()]
        if TODAY_MARK.search(before) or (labelled_only and not PUBLISHED_MARK.search(before)):
            continue
        moment = date_from_match(match, zone)
        if moment is not None and _plausible(moment, now, date_only=True):
            return moment
    return None

def plausible_date(value: object, now: datetime, *, zone: timezone = UTC) -> datetime | None:
    """A publication date from any source (text, or epoch seconds/milliseconds as a number),
    or None when it is unreadable or implausible."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            stamp = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, ValueError, OSError):
            return None
        return stamp if _plausible(stamp, now, date_only=False) else None
    if not isinstance(value, str):
        return None
    moment = parse_date(value, zone=zone)
    date_only = moment is not None and not re.search(r"\d:\d\d", value)
    return moment if moment is not None and _plausible(moment, now, date_only=date_only) else None

def parse_date(text: str, *, zone: timezone = UTC) -> datetime | None:
    """ISO 8601 and its common relatives (`2026/12/01 08:00`, `20261201`), made aware: a time
    without a zone is in `zone`."""
    cleaned = text.strip()[:64].replace("Z", "+00:00")
    if not cleaned:
        return None
    if re.fullmatch(r"\d{8}", cleaned):
        cleaned = f"{cleaned[:4]}-{cleaned[4:6]}-{cleaned[6:]}"
    cleaned = cleaned.replace("/", "-")
    cleaned = re.sub(r"(\d)\s+(\d{1,2}:\d{2})", r"\1T\2", cleaned, count=1)
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        match = VISIBLE_DATE.search(text[:200])
        return date_from_match(match, zone) if match else None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)

def _plausible(moment: datetime, now: datetime, *, date_only: bool) -> bool:
    return EARLIEST <= moment <= now + (DATE_ONLY_SKEW if date_only else CLOCK_SKEW)

def _meta_dates(tree: Any, keys: tuple[str, ...]) -> Iterator[str]:
    found: dict[str, str] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop")
               or meta.get("http-equiv") or "").strip().lower()
        content = meta.get("content")
        if key in keys and content and key not in found:
            found[key] = content
    yield from (found[k] for k in keys if k in found)

def _json_ld_dates(tree: Any, keys: tuple[str, ...]) -> Iterator[Any]:
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except (ValueError, RecursionError):
            continue
        for node in _json_nodes(data):
            for key in keys:
                if isinstance(node.get(key), str | int | float):
                    yield node[key]

def _article_text(tree: Any) -> str:
    """The text of the page's `<article>`, where its own date is written, if it has one."""
    if tree is None:
        return ""
    for article in tree.iter("article"):
        return " ".join(article.itertext())[:20_000]
    return ""

def _json_nodes(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for item in data:
            yield from _json_nodes(item)
    elif isinstance(data, dict):
        yield data
        yield from _json_nodes(data.get("@graph", []))

def _time_element_dates(tree: Any) -> Iterator[str]:
    for element in tree.iter("time"):
        if element.get("datetime"):
            yield element.get("datetime")
