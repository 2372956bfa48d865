"""Currencies by name, from the Unicode CLDR data babel ships: every currency some territory
uses as legal tender today, with its ISO 4217 code and its names in Chinese and English.

A question may write a currency as 泰铢, THB, "Thai baht" or "baht", and a page another way;
every form of one currency names it. A last word several currencies share (dollar, peso,
rupee, won) is no currency's name on its own.
"""

from __future__ import annotations

import datetime
import functools
from collections import Counter

from babel import Locale
from babel.numbers import get_currency_name, get_territory_currencies

# Written this way in Chinese news as often as CLDR's own names.
_CHINESE_SHORT_NAMES = {"AUD": ("澳元",), "CAD": ("加元",), "NZD": ("纽元",), "HKD": ("港币",),
                        "CHF": ("瑞郎",), "CNY": ("RMB", "yuan")}


@functools.cache
def currency_groups() -> tuple[tuple[str, ...], ...]:
    """One group of names per currency in use: code, Chinese name, English name, and the
    English name's last word when no other currency in use ends with it."""
    today = datetime.date.today()
    codes: set[str] = set()
    for territory in map(str, Locale("en").territories):
        if len(territory) == 2 and territory.isalpha():
            try:
                codes.update(get_territory_currencies(territory, today, tender=True))
            except (KeyError, ValueError):  # a territory CLDR has no currency data for
                continue
    english = {code: get_currency_name(code, locale="en") for code in codes}
    last_words = Counter(name.split()[-1].casefold() for name in english.values())
    groups = []
    for code in sorted(codes):
        name = english[code]
        last = name.split()[-1]
        forms = [code, get_currency_name(code, locale="zh"), name,
                 *([last] if last_words[last.casefold()] == 1 and last != name else []),
                 *_CHINESE_SHORT_NAMES.get(code, ())]
        groups.append(tuple(dict.fromkeys(f for f in forms if f)))
    return tuple(groups)


def currency_names() -> tuple[str, ...]:
    """Every name of every currency in use but its code."""
    return tuple(name for group in currency_groups() for name in group[1:])


def currency_codes() -> tuple[str, ...]:
    """The ISO 4217 codes of the currencies in use: names only when written in capitals."""
    return tuple(group[0] for group in currency_groups())
