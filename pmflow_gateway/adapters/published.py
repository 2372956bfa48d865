"""When a fetched page was published, from its markup or, failing that, its visible text.

Sources in order of trust: the publication date in the markup (meta tags, JSON-LD,
`<time datetime>`), the date the text gives itself at its top (a dateline, "KINGSTON, Ont.,
Dec. 2 (Wire) —", "新华社北京12月2日电", or a "Published/Updated/发布于/更新时间" line), a date
the text labels as the publication date further down, the first date inside `<article>`, then
the modification date in the markup, then the first date in the text's first lines. Reading
the top first keeps a related story's, an embedded post's or a footer's date from winning over
the article's own: a date further down is about something the article tells. A date the
text calls today's (a portal header's "今天是…") is page chrome and never counts. A dateline
may leave out the year: it is the latest such day that is not in the future.

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

from pmflow_gateway.contract.dates import MONTHS, VISIBLE_DATE, date_from_match
from pmflow_gateway.contract.text import CJK

PUBLISHED_META_KEYS = (
    "article:published_time", "og:published_time", "og:article:published_time",
    "article:published", "datepublished", "date", "pubdate", "publishdate", "publish_date",
    "dc.date", "dc.date.issued", "dcterms.created", "sailthru.date", "parsely-pub-date",
)
MODIFIED_META_KEYS = ("article:modified_time", "article:modified", "og:updated_time",
                      "last-modified", "datemodified", "dcterms.modified")
PUBLISHED_JSON_LD_KEYS = ("datePublished", "dateCreated", "uploadDate")
MODIFIED_JSON_LD_KEYS = ("dateModified",)
EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(minutes=10)
DATE_ONLY_SKEW = timedelta(hours=14)  # the farthest zone ahead of UTC (UTC+14)
BEIJING = timezone(timedelta(hours=8), "UTC+08:00")

# A date the page calls today's: page chrome, not when the article was written.
TODAY_MARK = re.compile(r"(?:今天是|今天|今日|当前日期|today\s+is|today)[\s:：,，]*$",
                        re.IGNORECASE)
# An embedded social post signs off with its author and day: "— Ann Lee (@annlee) Dec 1, 2026".
POST_SIGNATURE = re.compile(r"\(@\w{1,30}\)\s*$")
PUBLISHED_MARK = re.compile(r"(?:发布|发表|刊发|时间|日期|published|posted|date)"
                            r"[^\n0-9]{0,6}$", re.IGNORECASE)
# Where a text gives its own date: its first lines. Further down a date may be a related
# story's or the footer's.
HEAD_LINES = 12
HEAD_CHARS = 3000
_MONTH_NAME = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = (r"(?i:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
            r"(?:day|nesday|rsday|urday)?\.?,?|星期[一二三四五六日天]|周[一二三四五六日天])")
_DAY_OF_MONTH = (rf"(?i:(?P<mon>{_MONTH_NAME})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
                 rf"|(?P<day2>\d{{1,2}})\s+(?P<mon2>{_MONTH_NAME})\.?)(?!\d)")
_YEAR = r"(?P<year>(?:19|20)\d\d)\b"
_PLACE = r"[A-Z][\w.'’-]*(?:(?:\s+|\s*,\s*)[A-Z][\w.'’-]*){0,4}"
_AGENCY = r"\([^()\n]{1,30}\)"
_DASH = r"\s*(?:[—–-]{1,2}|…|\.\.\.)(?=\s|$)"
# "KINGSTON, Ontario, Dec. 2 (Wire) —", "BEIJING, Dec 2 -", "HANOI (Wire), Dec. 2, 2026 —":
# a place, the day the story was filed (the year may be left out), a dash.
_DATELINE = re.compile(
    rf"^[^\w\n]{{0,3}}{_PLACE}(?:\s*{_AGENCY})?\s*,\s*(?:{_WEEKDAY}\s*)?{_DAY_OF_MONTH}"
    rf"(?:,?\s+{_YEAR})?\s*(?:{_AGENCY})?{_DASH}")
# A search snippet's "Dec 2, 2026 — …": no place, so the year must be there (a line
# "June 9 – Tampa, FL" is a tour date, not the page's).
_DATED_LEAD = re.compile(
    rf"^[^\w\n]{{0,3}}(?:{_WEEKDAY}\s*)?{_DAY_OF_MONTH},?\s+{_YEAR}{_DASH}")
# "新华社北京12月2日电", "本报上海2026年12月2日讯".
_ZH_DATELINE = re.compile(r"^[^\n，。！？:：]{0,16}?(?:(?P<year>(?:19|20)\d\d)年)?"
                          r"(?P<mon>\d{1,2})月(?P<day>\d{1,2})日(?:电|讯)")
# "本报讯 12月3日，", "本报讯（记者 林岚）2026年12月3日": the 讯 before the day.
_ZH_DATELINE_AFTER = re.compile(r"^[^\n，。！？:：]{0,8}?讯\s*(?:[（(][^）)\n]{0,16}[）)])?\s*"
                                r"(?:(?P<year>(?:19|20)\d\d)年)?(?P<mon>\d{1,2})月(?P<day>\d{1,2})日"
                                r"(?!\d)")
# "Published 2 December 2026", "UPDATED: Tue., Dec. 2, 2026", "…Bureau | Updated : 2 December
# 2026, 09:01 AM", "发布于 2026年12月2日", "发布时间：2026-12-02 10:15": a label at the start
# of a line or after a separator, then a full date.
_LABEL_START = r"(?:^[^\w\n]{0,3}|[|·•]\s*)"
_DATE_LABEL = re.compile(
    rf"{_LABEL_START}(?:(?:(?:first|last)\s+)?(?:published|updated|posted|modified)"
    r"(?:\s+(?:on|at))?|(?:发布|发表|更新|刊发)(?:于|时间|日期)?|(?:日期|时间)(?=\s*[:：]))",
    re.IGNORECASE)
_AFTER_LABEL = re.compile(rf"[\s:：\[(（【-]*(?:{_WEEKDAY}\s*)?")
# A machine-written timestamp, its zone included: "2026-12-02T05:00:00Z".
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_TIME_OF_DAY = re.compile(r",?\s*(?:at\s+)?(?P<h>\d{1,2}):(?P<m>\d{2})(?::\d{2})?"
                          r"(?:\s*(?P<ap>[ap])\.?m\.?)?(?![\d:])", re.IGNORECASE)

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
    for found in (date_written_in(visible_text, now, zone=zone),
                  first_visible_date(visible_text, now, zone=zone, labelled_only=True)):
        if found is not None:
            return found
    if article and (in_article := first_visible_date(article, now, zone=zone)) is not None:
        return in_article
    if tree is not None:
        for source in (_meta_dates(tree, MODIFIED_META_KEYS),
                       _json_ld_dates(tree, MODIFIED_JSON_LD_KEYS)):
            for text in source:
                if (moment := plausible_date(text, now, zone=zone)) is not None:
                    return moment
    return first_visible_date(_head(visible_text), now, zone=zone)

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
    skipping one the text calls today's and an embedded post's signature date; `labelled_only`:
    only one labelled as published."""
    for match in VISIBLE_DATE.finditer(text):
        before = text[max(match.start() - 12, 0):match.start()]
        if TODAY_MARK.search(before) or (labelled_only and not PUBLISHED_MARK.search(before)):
            continue
        if POST_SIGNATURE.search(text[max(match.start() - 48, 0):match.start()]):
            continue
        moment = date_from_match(match, zone)
        if moment is not None and _plausible(moment, now, date_only=True):
            return moment
    return None

def date_written_in(text: str, now: datetime, *, zone: timezone = UTC) -> datetime | None:
    """The date a text gives itself in its first lines: a dateline or a labelled publication
    or update date, whichever comes first; None when its top says neither."""
    for line in _head(text).splitlines():
        found = _dateline_day(line, now, zone) or _labelled_moment(line, now, zone)
        if found is not None:
            return found
    return None


def _head(text: str) -> str:
    return "\n".join(text[:HEAD_CHARS].splitlines()[:HEAD_LINES])


def _dateline_day(line: str, now: datetime, zone: timezone) -> datetime | None:
    for pattern in (_DATELINE, _DATED_LEAD, _ZH_DATELINE, _ZH_DATELINE_AFTER):
        if (match := pattern.match(line)) is None:
            continue
        found = match.groupdict()
        month_text = found.get("mon") or found.get("mon2") or ""
        month = int(month_text) if month_text.isdigit() else MONTHS[month_text.lower()]
        day = int(found.get("day") or found.get("day2") or 0)
        return _latest_day(month, day, int(found["year"]) if found["year"] else None, now, zone)
    return None


def _latest_day(month: int, day: int, year: int | None, now: datetime,
                zone: timezone) -> datetime | None:
    """The day, in the year given or else the latest year in which it is not yet to come."""
    this_year = now.astimezone(zone).year
    for candidate in ([year] if year else [this_year, this_year - 1]):
        try:
            moment = datetime(candidate, month, day, tzinfo=zone)
        except ValueError:  # "Feb. 30" names no day
            return None
        if _plausible(moment, now, date_only=True):
            return moment
    return None


def _labelled_moment(line: str, now: datetime, zone: timezone) -> datetime | None:
    """The date (and time, when one follows) after a publication or update label."""
    for label in _DATE_LABEL.finditer(line):
        after = _AFTER_LABEL.match(line, label.end())
        start = after.end() if after else label.end()
        if (stamp := _TIMESTAMP.match(line, start)) is not None:
            if (moment := plausible_date(stamp.group(), now, zone=zone)) is not None:
                return moment
            continue
        date = VISIBLE_DATE.match(line, start)
        day = date_from_match(date, zone) if date else None
        if date is None or day is None or not _plausible(day, now, date_only=True):
            continue
        time = _TIME_OF_DAY.match(line, date.end())
        if time is None:
            return day
        hour = int(time["h"])
        if time["ap"]:  # 12-hour clock: 12 a.m. is midnight, 1 p.m. is 13:00
            hour = hour % 12 + (12 if time["ap"].lower() == "p" else 0)
        if hour < 24 and int(time["m"]) < 60:
            moment = day.replace(hour=hour, minute=int(time["m"]))
            if _plausible(moment, now, date_only=False):
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
