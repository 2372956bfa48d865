"""A weather search in the language of the place's own part of the world.

Pages about Tromsø's weather are rarely written in Chinese, and pages about Jingdezhen's
rarely in English: a Chinese question about a world city, or an English question about a
Chinese city, also searches with the place's name in that language (from the place table,
qualified when the bare name is another place too) and the asked day.
"""

from __future__ import annotations

import re

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.places import Place, local_language, search_name

_TO_EN = (("后天", "day after tomorrow"), ("明天", "tomorrow"), ("明日", "tomorrow"),
          ("今晚", "tonight"), ("今天", "today"), ("今日", "today"), ("本周", "this week"),
          ("这周", "this week"), ("周末", "weekend"))
_TO_ZH = (("day after tomorrow", "后天"), ("tomorrow", "明天"), ("tonight", "今晚"),
          ("today", "今天"), ("this week", "本周"), ("weekend", "周末"))
_ZH_DAYS = re.compile(r"未来\s*(\d+)\s*[天日]")
_EN_DAYS = CaseBlind(r"next\s+(\d+)\s+days?")


def other_language_query(place: Place, time_hint: str | None, *, zh: bool) -> str | None:
    """The weather query in the place's own language, or None when the question already
    speaks it (or the place has no name in it)."""
    if (local_language(place) == "zh") == zh:
        return None
    name = search_name(place, zh=not zh)
    if not name:
        return None
    hint = (time_hint or "").strip()
    if zh:
        days = _ZH_DAYS.search(hint)
        when = (f"next {days.group(1)} days" if days
                else next((en for word, en in _TO_EN if word in hint), "forecast"))
        return f"{name} weather {when}"
    days = _EN_DAYS.search(hint)
    when = (f"未来{days.group(1)}天" if days
            else next((cn for word, cn in _TO_ZH if word in hint.casefold()), ""))
    return f"{name} {when}天气"
