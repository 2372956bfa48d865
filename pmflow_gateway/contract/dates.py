"""Days named in text: full dates in the forms pages print them, and day words without a year.

Publication dates and the "does this passage speak of particular days" signal both read days
this way, so there is one pattern for each.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

from pmflow_gateway.contract.caseblind import CaseBlind

MONTHS = {name: number for number, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
     ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
     ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")], start=1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
VISIBLE_DATE = CaseBlind(
    r"(?P<y1>(?:19|20)\d{2})\s*[-/.]\s*(?P<m1>\d{1,2})\s*[-/.]\s*(?P<d1>\d{1,2})(?!\d)"
    r"|(?P<y2>(?:19|20)\d{2})\s*年\s*(?P<m2>\d{1,2})\s*月\s*(?P<d2>\d{1,2})\s*[日号]"
    rf"|\b(?P<mon3>{_MONTH})\.?\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y3>(?:19|20)\d{{2}})\b"
    rf"|\b(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon4>{_MONTH})\.?,?\s+(?P<y4>(?:19|20)\d{{2}})\b")
# Days named without a year: enough to say a passage speaks about particular days.
DAY_MENTION = CaseBlind(
    r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:周|星期|礼拜)[一二三四五六日天]|今天|明天|后天"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\btoday\b|\btomorrow\b")


def date_from_match(match: re.Match[str], zone: tzinfo = UTC) -> datetime | None:
    """The day a `VISIBLE_DATE` match names, at midnight in `zone`."""
    groups = match.groupdict()
    for n in "1234":
        year = groups.get(f"y{n}")
        if year is None:
            continue
        month_text = groups.get(f"m{n}") or groups.get(f"mon{n}") or ""
        month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text.lower(), 0)
        try:
            return datetime(int(year), month, int(groups[f"d{n}"] or 0), tzinfo=zone)
        except ValueError:  # 2026-13-45 is a version number, not a date
            return None
    return None


def names_a_day(text: str) -> bool:
    """Whether the text names a day: a full date, 12月3日, a weekday, today or tomorrow."""
    if DAY_MENTION.search(text):
        return True
    return any(date_from_match(m) is not None for m in VISIBLE_DATE.finditer(text))
