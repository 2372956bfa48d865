"""Time expressions: which day or period a question asks about, and which a sentence speaks of.

One normaliser for the planner (the question's time hint) and for relevance and the composer
(picking the lines about the asked day). Users write days many ways: 明儿, 明日, 次日, tmrw,
a misspelt "tomorow"; evidence writes them formally. Every form maps to one canonical day:
yesterday, today, tonight, tomorrow, after_tomorrow, in_3_days, weekend, a weekday (mon..sun),
or period (several days). A question whose time words are not understood asks no day, so
nothing here ever guesses a day the user did not write.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import MONTHS
from pmflow_gateway.contract.text import CJK_CHARS

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_ZH_WEEKDAY = {"一": "mon", "二": "tue", "三": "wed", "四": "thu", "五": "fri", "六": "sat",
               "日": "sun", "天": "sun"}
EN_WEEKDAYS = {"monday": "mon", "tuesday": "tue", "wednesday": "wed", "thursday": "thu",
               "friday": "fri", "saturday": "sat", "sunday": "sun"}
# A weekday of next week (下周三): next_wed, never this week's Wednesday.
NEXT_WEEK = "next_"
NEXT_WEEKDAYS = frozenset(NEXT_WEEK + d for d in WEEKDAYS)

# Longest forms first inside each day, and days whose forms contain another day's form
# (大后天 holds 后天, "day after tomorrow" holds "tomorrow") before that day.
_ZH_FORMS: tuple[tuple[str, str], ...] = (
    ("in_3_days", "大后天|大后儿个?|大后日"),
    ("after_tomorrow", "后天|后儿个?|后日"),
    ("tonight", "今晚|今夜|今天晚上|今天夜[里间]|今儿晚上|今儿个晚上|今日夜间|今天傍晚"),
    ("tomorrow", "明天|明日|明儿个?|明早|明晚|明天早上|明天晚上|次日|翌日|第二天|隔天"),
    ("yesterday", "昨天|昨日|昨儿个?|昨晚|昨夜|前一天"),
    ("today", "今天|今日|今儿个?|当天|本日|今早|今天白天|今天上午|今天下午"),
)
_EN_FORMS: tuple[tuple[str, str], ...] = (
    ("after_tomorrow", r"(?:the )?day after tomorrow|overmorrow|day after tmrw"),
    ("tonight", r"tonight|tonite|2nite|this evening"),
    ("tomorrow", r"tomorrow|tmrw|tmrow|tmr|tmw|2moro|2morrow|tomoz|next day"),
    ("yesterday", r"yesterday|yday|yest"),
    ("today", r"today|todays|2day|tdy|this (?:morning|afternoon)"),
)
_PERIOD = CaseBlind(
    r"未来\s*[0-9一二三四五六七八九十两几]+\s*(?:个)?\s*(?:天|日|周|星期|小时)|这几天|近几天|最近几天|接下来几天"
    r"|本周(?!末)|这周(?!末)|这个星期|下周(?![一二三四五六日末]|天(?![气津水门台]))|下个?星期(?![一二三四五六日]|天(?![气津水门台]))"
    r"|(?<![a-z])(?:next|coming)\s+(?:\d+|few|several)\s+(?:days|weeks)(?![a-z])"
    r"|(?<![a-z])(?:this|next|the coming) week(?![a-z])|(?<![a-z])coming days(?![a-z])")
_WEEKEND = CaseBlind(
    r"(?:本|这个?|下个?)?周末|(?<![a-z])(?:this |next |the |on the )?weekend(?![a-z])")
# 周天 is Sunday, but 下周天气 is next week's weather and 下周天津 next week in 天津.
_ZH_DAY_OF_WEEK = re.compile(
    r"(下个?|这个?|本)?(?:周|星期|礼拜)([一二三四五六日]|天(?![气津水门台]))")
_EN_DAY_OF_WEEK = CaseBlind(
    r"(?<![a-z])(?:(?:next|this|on|coming) )?(monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)s?(?![a-z])")
# Only the words users misspell: short words would meet too many real words at distance 1.
_FUZZY_WORDS = {"tomorrow": "tomorrow", "yesterday": "yesterday", "tonight": "tonight",
                "weekend": "weekend", **{w: d for w, d in EN_WEEKDAYS.items()}}
_WORD = CaseBlind(r"[a-z0-9]+")

# How each single day is written back into a plan, per language.
CANONICAL_ZH = {"yesterday": "昨天", "today": "今天", "tonight": "今晚", "tomorrow": "明天",
                "after_tomorrow": "后天", "in_3_days": "大后天", "weekend": "周末"}
CANONICAL_EN = {"yesterday": "yesterday", "today": "today", "tonight": "tonight",
                "tomorrow": "tomorrow", "after_tomorrow": "day after tomorrow",
                "in_3_days": "in 3 days", "weekend": "this weekend"}


@dataclass(frozen=True)
class When:
    """One time expression: its canonical day and where it stands in the text."""

    day: str
    start: int
    end: int


@functools.cache
def _day_pattern() -> re.Pattern[str]:
    zh = "|".join(f"(?P<{day}_zh>{forms})" for day, forms in _ZH_FORMS)
    en = "|".join(f"(?P<{day}_en>{forms})" for day, forms in _EN_FORMS)
    return re.compile(rf"{zh}|(?<![a-z0-9])(?:{en})(?![a-z0-9])", re.IGNORECASE)


def find_all(text: str, *, fuzzy: bool = False) -> list[When]:
    """Every time expression in the text, in reading order, overlaps resolved to the first
    and longest. `fuzzy` also reads misspelt English day words (questions, not evidence)."""
    found = [When((NEXT_WEEK if (m.group(1) or "").startswith("下") else "")
                  + _ZH_WEEKDAY[m.group(2)], m.start(), m.end())
             for m in _ZH_DAY_OF_WEEK.finditer(text)]
    found += [When(EN_WEEKDAYS[m.group(1).lower()], m.start(), m.end())
              for m in _EN_DAY_OF_WEEK.finditer(text)]
    found += [When("period", m.start(), m.end()) for m in _PERIOD.finditer(text)]
    found += [When("weekend", m.start(), m.end()) for m in _WEEKEND.finditer(text)]
    for m in _day_pattern().finditer(text):
        group = next(name for name, value in m.groupdict().items() if value is not None)
        found.append(When(group.rsplit("_", 1)[0], m.start(), m.end()))
    if fuzzy:
        found += _misspelt(text)
    kept: list[When] = []
    for w in sorted(found, key=lambda w: (w.start, -(w.end - w.start))):
        if not kept or w.start >= kept[-1].end:
            kept.append(w)
    return kept


def _misspelt(text: str) -> list[When]:
    found = []
    for m in _WORD.finditer(text):
        word = m.group().lower()
        if len(word) < 5 or word in _FUZZY_WORDS:
            continue
        limit = 2 if len(word) >= 8 else 1
        near = [(distance(word, w), d) for w, d in _FUZZY_WORDS.items()
                if abs(len(w) - len(word)) <= limit]
        near = sorted(n for n in near if n[0] <= limit)
        # Two day words equally near ("thursday"/"tuesday") is a guess: read neither.
        if near and (len(near) == 1 or near[0][0] < near[1][0] or near[0][1] == near[1][1]):
            found.append(When(near[0][1], m.start(), m.end()))
    return found


def distance(a: str, b: str) -> int:
    """Edit distance, an adjacent swap counting as one edit ("tomorow", "tommorow", "tmorrow")."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, start=1):
        row = [i]
        for j, cb in enumerate(b, start=1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1]


def asked(text: str) -> When | None:
    """The day or period a question asks about: its first time expression, or None."""
    found = find_all(text, fuzzy=True)
    if not found:
        return None
    if len({w.day for w in found}) > 1 and all(w.day != "period" for w in found):
        # "明天和后天", "Saturday or Sunday": several days asked is a period.
        return When("period", found[0].start, found[-1].end)
    return found[0]


def days_spoken_of(text: str) -> set[str]:
    """The days a sentence of evidence speaks of; a weekend speaks of Saturday and Sunday."""
    days = {w.day for w in find_all(text)}
    if days & {"sat", "sun"}:
        days.add("weekend")
    if "weekend" in days:
        days |= {"sat", "sun"}
    return days


# The night of a day: a line about today speaks of tonight only when it speaks of the night.
_NIGHT = CaseBlind(r"夜|晚|最低|(?<![a-z])(?:night|overnight|evening|lows?|min)(?![a-z])")


def speaks_of(text: str, day: str) -> bool:
    """Whether a sentence speaks of the asked day; tonight is also spoken of as today's
    night, never as today's daytime."""
    spoken = days_spoken_of(text)
    return day in spoken or (day == "tonight" and "today" in spoken and speaks_of_night(text))


def speaks_of_night(text: str) -> bool:
    """Whether a sentence speaks of the night (夜间, overnight, the low)."""
    return bool(_NIGHT.search(text))


def names_another_day(text: str, day: str | None) -> bool:
    """Whether a sentence speaks only of days other than the asked one (a today question
    must not be answered by yesterday's line)."""
    spoken = days_spoken_of(text) - {"period"}
    if not spoken:
        return False
    wanted = {day or "today"} | ({"today"} if day == "tonight" else set())
    return not spoken & wanted


def canonical_hint(text: str, when: When) -> str:
    """How the time hint is written into a plan: a single day in its canonical form in the
    question's language ("明儿" is searched as 明天, "tmrw" as tomorrow), anything else as the
    user wrote it."""
    chinese = bool(re.search(f"[{CJK_CHARS}]", text))
    table = CANONICAL_ZH if chinese else CANONICAL_EN
    if when.day in table:
        return table[when.day]
    hint = " ".join(text[when.start:when.end].split())
    return re.sub(rf"(?<=[{CJK_CHARS}]) | (?=[{CJK_CHARS}])", "", hint)


# --- days by the calendar ----------------------------------------------------------------

# How many days after today each single day is.
_OFFSETS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1, "after_tomorrow": 2,
            "in_3_days": 3}
# Written with its capital, as pages print a month: "may" in running text is a verb.
_MONTH_NAME = "|".join(sorted({f(m) for m in MONTHS for f in (str.capitalize, str.upper)},
                              key=len, reverse=True))
# A day printed by month and day, as forecast pages label their lines: 12月7日, Dec 7,
# December 7th, 7 Dec. A year after it is read by the freshness checks, not here.
_PRINTED_DAY = re.compile(
    r"(?P<zm>\d{1,2})\s*月\s*(?P<zd>\d{1,2})\s*[日号]"
    rf"|(?<![A-Za-z])(?P<em>{_MONTH_NAME})\.?\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)"
    rf"|(?<![\d.:])(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<dm>{_MONTH_NAME})(?![A-Za-z])")


def day_offset(day: str | None, today: date) -> int | None:
    """How many days after `today` the asked day is (no day asked: today); None for a
    weekend or a period."""
    if day is None:
        return 0
    if day in _OFFSETS:
        return _OFFSETS[day]
    if day in WEEKDAYS:
        return (WEEKDAYS.index(day) - today.weekday()) % 7
    if day in NEXT_WEEKDAYS:
        return _next_week(day, today.weekday())
    return None


def _next_week(day: str, weekday: int) -> int:
    """How many days after a day of weekday `weekday` next week's `day` (next_wed) is: 下周三
    said on a Tuesday is eight days on, not tomorrow."""
    return 7 - weekday + WEEKDAYS.index(day.removeprefix(NEXT_WEEK))


def names_calendar_days(text: str) -> bool:
    """Whether a text names days by the calendar (a weekday, or a month and day), which only
    today's date can read as the asked day or not."""
    return bool(_PRINTED_DAY.search(text)) or bool(
        days_spoken_of(text) & {*WEEKDAYS, *NEXT_WEEKDAYS})


def days_printed(text: str, today: date) -> set[date]:
    """The calendar days a line prints by month and day, each in the year that puts it
    nearest `today` (a December page read in January)."""
    days: set[date] = set()
    if not any(map(str.isdigit, text)):
        return days  # most lines print no day: no digit, no pattern search
    for m in _PRINTED_DAY.finditer(text):
        month_text = m.group("zm") or m.group("em") or m.group("dm")
        month = int(month_text) if month_text.isdigit() else MONTHS[month_text.lower()]
        day = int(m.group("zd") or m.group("ed") or m.group("dd"))
        near = []
        # The year printed with it, if any: "Jan. 1, 2026", 2026年1月1日.
        printed_year = (_YEAR_AFTER.match(text, m.end()) if m.group("zd") is None
                        else _YEAR_BEFORE.search(text, max(m.start() - 8, 0), m.start()))
        years = ([int(printed_year.group(1))] if printed_year
                 else [today.year - 1, today.year, today.year + 1])
        for year in years:
            try:
                near.append(date(year, month, day))
            except ValueError:  # 2月30日
                continue
        if near:
            days.add(min(near, key=lambda d: abs((d - today).days)))
    for m in _BARE_DAY.finditer(text):
        # "6日夜间至7日早晨", "8日晴": a day of the month nearest today.
        day = int(m.group(1))
        near = [d for month in (-1, 0, 1) if (d := _day_of_month(today, month, day))]
        if near:
            days.add(min(near, key=lambda d: abs((d - today).days)))
    return days


# Not a count of days: 第3日, 近7日, 30日内, 3日游.
# Not "Dec. 7, 2000 customers" nor "2,000"; "July 1, 2027, the wage" is a year.
_YEAR_AFTER = re.compile(r",?\s*((?:19|20)\d\d)(?!\d|,\d|\s+[a-z])")
_YEAR_BEFORE = re.compile(r"((?:19|20)\d\d)\s*年\s*$")
_BARE_DAY = re.compile(r"(?<![月\d第近前每数几连多内余共])(?<![\d月共]\s)([1-9]|[12]\d|3[01])\s*日"
                       r"(?![\d内游以之后左均年])")


def _day_of_month(today: date, months_on: int, day: int) -> date | None:
    year, month = divmod(today.year * 12 + today.month - 1 + months_on, 12)
    try:
        return date(year, month + 1, day)
    except ValueError:
        return None


def offsets_spoken_of(text: str, today: date, written_days_ago: int, *,
                      past: bool = False) -> set[int]:
    """The days a line of a page written `written_days_ago` days before `today` speaks of,
    as days after today. By the days it prints when it prints any: "Tomorrow (Sun, Dec 6)"
    on yesterday's page is today, and "from Friday 4 December until Monday 7 December" every
    day between. Else by its words for days, which count from the day the page was written:
    its "明天" is today. A weekday is the next one, and with `past` (a line that reports what
    happened) also the last one: "beat Lindow Forge 3-1 on Saturday", said on Sunday."""
    printed = days_printed(text, today)
    if printed:
        first, last = min(printed), max(printed)
        if len(printed) >= 2 and (last - first).days <= MAX_RANGE_DAYS and _RANGE.search(text):
            return set(range((first - today).days, (last - today).days + 1))
        if len(printed) == 1 and last >= today and _UNTIL_A_DAY.search(text):
            # "Through Jan. 31, the clinic will be open Sundays from 9 a.m.": every day from
            # when the page was written until then.
            return set(range(-written_days_ago, (last - today).days + 1))
        return {(d - today).days for d in printed}
    spoken = {w.day for w in find_all(text)}  # "On Saturdays" is not about Sunday
    if "weekend" in spoken:
        spoken |= {"sat", "sun"}
    offsets = {offset - written_days_ago for day, offset in _OFFSETS.items() if day in spoken}
    offsets |= {(WEEKDAYS.index(d) - today.weekday()) % 7 for d in spoken if d in WEEKDAYS}
    written_on = (today.weekday() - written_days_ago) % 7
    offsets |= {_next_week(d, written_on) - written_days_ago for d in spoken
                if d in NEXT_WEEKDAYS}
    if past:
        written = today.weekday() - written_days_ago
        offsets |= {-written_days_ago - (written - WEEKDAYS.index(d)) % 7 for d in spoken
                    if d in WEEKDAYS}
    return offsets


# One printed day that ends a span begun when the page was written.
_UNTIL_A_DAY = CaseBlind(
    rf"(?<![A-Za-z])(?:through|thru|until|till)\s+(?:[A-Z][a-z]+,?\s+)?(?:{_MONTH_NAME})\.?\s+\d"
    r"|(?:截至|直至|直到)\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号]")


def holds_until_a_day(text: str) -> bool:
    """Whether the line says what holds until a day it prints ("Current fares remain in
    effect through Jan. 3, 2027"): so until then, now too."""
    return bool(_UNTIL_A_DAY.search(text))


# Two printed days joined as a span: "from 4 December until 7 December", 12月4日至12月7日.
_RANGE = CaseBlind(r"(?<![A-Za-z])(?:until|till|to|through|thru)(?![A-Za-z])|[至到~～–—-]")
MAX_RANGE_DAYS = 31


def day_offsets(day: str | None, today: date) -> set[int] | None:
    """The days after `today` the asked day covers: one day, or this weekend's two (the
    coming one, or the one under way); None for a period."""
    if day == "weekend":
        weekday = today.weekday()
        return {-1, 0} if weekday == 6 else {5 - weekday, 6 - weekday}
    offset = day_offset(day, today)
    return None if offset is None else {offset}
