"""When a fetched page was published, from its markup or, failing that, its visible text.

Sources in order of trust: meta tags, JSON-LD, `<time datetime>`, then the first date
written in the text. A date after `now` (plus a day of timezone slack) is skipped: forecast
and event pages print future dates that say nothing about when the page was written.
Times without a zone are taken as UTC.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from pmflow_gateway.contract.text import VISIBLE_DATE, date_from_match

META_DATE_KEYS = (
    "article:published_time", "og:published_time", "og:article:published_time",
    "article:modified_time", "og:updated_time", "datepublished", "date", "pubdate",
    "publishdate", "publish_date", "dc.date", "dc.date.issued", "dcterms.created",
    "sailthru.date", "parsely-pub-date", "last-modified",
)
JSON_LD_KEYS = ("datePublished", "dateCreated", "dateModified", "uploadDate")
EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)



def published_at(page_html: str, visible_text: str, now: datetime) -> datetime | None:
    """The page's publication time, or None when nothing on it says."""
    try:
        tree = lxml_html.fromstring(page_html) if page_html.strip() else None
    except (ValueError, etree.ParserError):
        tree = None
    candidates: list[Iterator[str]] = []
    if tree is not None:
        candidates += [_meta_dates(tree), _json_ld_dates(tree), _time_element_dates(tree)]
    for source in candidates:
        for text in source:
            moment = parse_date(text)
            if moment is not None and _plausible(moment, now):
                return moment
    return first_visible_date(visible_text, now)


def first_visible_date(text: str, now: datetime) -> datetime | None:
    """The first plausible date written in the text (2026-12-01, 2026年12月1日, Dec 1, 2026)."""
    for match in VISIBLE_DATE.finditer(text):
        moment = date_from_match(match)
        if moment is not None and _plausible(moment, now):
            return moment
    return None


def parse_date(text: str) -> datetime | None:
    """ISO 8601 and its common relatives (`2026/12/01 08:00`, `20261201`), made UTC-aware."""
    cleaned = text.strip()
    if not cleaned:
        return None
    if re.fullmatch(r"\d{8}", cleaned):
        cleaned = f"{cleaned[:4]}-{cleaned[4:6]}-{cleaned[6:]}"
    cleaned = cleaned.replace("/", "-")
    cleaned = re.sub(r"(\d)\s+(\d{1,2}:\d{2})", r"\1T\2", cleaned, count=1)
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        match = VISIBLE_DATE.search(text)
        return date_from_match(match) if match else None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _plausible(moment: datetime, now: datetime) -> bool:
    return EARLIEST <= moment <= now + FUTURE_SLACK


def _meta_dates(tree: Any) -> Iterator[str]:
    found: dict[str, str] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop")
               or meta.get("http-equiv") or "").strip().lower()
        content = meta.get("content")
        if key in META_DATE_KEYS and content and key not in found:
            found[key] = content
    yield from (found[k] for k in META_DATE_KEYS if k in found)


def _json_ld_dates(tree: Any) -> Iterator[str]:
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        for node in _json_nodes(data):
            for key in JSON_LD_KEYS:
                if isinstance(node.get(key), str):
                    yield node[key]


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
