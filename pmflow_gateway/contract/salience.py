"""Salience: whether a name is what a sentence is about, or only mentioned on the way.

A page about Melbourne that is "much hotter than Sydney" is not about Sydney; a phone launch
that will "与华为、小米竞争" is not news about 华为. The rules here read where a mention
stands in its clause (after "than", "比", "如", in a list after such a word, or coordinated
with another name before a word of rivalry) and what kind of line a sentence is (a weather
reading or not). Matching the names themselves stays with the relevance rules that call this.
"""

from __future__ import annotations

import re

from pmflow_gateway.contract.caseblind import CaseBlind, case_blind

_CLAUSE_BREAK = re.compile(r"[，,。；;：:！!？?\n]|(?<=[a-z0-9)])\.\s")
# Words after which a name is the thing compared with, an example or an exception.
_ZH_PASSING = (r"比|较|不如|不及|超过|胜过|高于|低于|多于|少于|对阵|相比于|如|像|例如|比如|诸如"
               r"|除了?|除去")
# Words that coordinate a name with the subject; passing only when rivalry follows.
_ZH_WITH = r"与|和|跟|同|及|对标"
_ZH_RIVALRY = CaseBlind(r"竞争|相比|相较|对比|比较|抗衡|较量|争夺|对标|看齐|不同|一样|类似|相当|PK")
_ZH_LIST = r"(?:[^，,。；;：:]{1,10}?[、和及与/])*"
_EN_PASSING = (r"than|like|unlike|such as|versus|vs\.?|against|compared (?:to|with)|relative to"
               r"|rivals?|other than|except|rather than|outpac(?:ed|ing|es)?|ahead of|behind")
_EN_LIST = r"(?:the\s+)?(?:[\w.'\-]+(?:\s[\w.'\-]+){0,2}(?:,\s*|\s+and\s+|\s+or\s+))*(?:the\s+)?"
_BEFORE_PASSING = CaseBlind(
    rf"(?:{_ZH_PASSING}){_ZH_LIST}$|(?<![A-Za-z])(?:{_EN_PASSING})\s+{_EN_LIST}$")
_BEFORE_WITH = re.compile(rf"(?:{_ZH_WITH}){_ZH_LIST}$")

# A weather reading: a temperature, or a weather word with a condition. Each is found where
# one pattern, case-blind, would find it, at a third of its cost: the numbers and the Chinese
# words have no case, and the English words are searched in the `case_blind` form.
_READING = re.compile(
    r"(?<!\d)(?<!\d\.)-?\d++(?:\.\d++)?\s*(?:~|-|到|至)?\s*-?\d*+\s*(?:℃|°|度(?!数))")
_WORDED_READING = re.compile(
    r"(?<![a-z])(?:high|low|max|min)s?\s*(?:of\s*)?-?\d+\s*°?[cf]?(?![a-z])")
_ZH_CONDITION = re.compile(
    r"[晴阴雨雪雾霾雷冰雹]|多云|大风|微风|[东南西北]风|风力|气温|温度|湿度|降水|降温|升温|预警"
    r"|紫外线|空气质量|天气")
_EN_CONDITION = re.compile(
    r"(?<![a-z])(?:sunny|sun|cloudy|clouds?|overcast|clear skies|rain|rainy|showers?"
    r"|drizzle|snow|sleet|flurries|fog|foggy|mist|haze|smog|winds?|windy|breezy|gusts?"
    r"|storms?|thunder\w*|hail|frost|humid\w*|heat\s?wave|hot|cold|chilly|mild|warm"
    r"|temperatures?|forecast|weather|air quality|aqi|uv index)(?![a-z])")
_WEATHER_PAGE = CaseBlind(r"天气|气象|预报|weather|forecast")


def in_passing(sentence: str, start: int, end: int) -> bool:
    """Whether the mention at sentence[start:end] is compared with, given as an example or
    excepted, rather than being what its clause is about."""
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    before = sentence[breaks[-1] if breaks else 0:start]
    if _BEFORE_PASSING.search(before):
        return True
    if _BEFORE_WITH.search(before):
        after = _CLAUSE_BREAK.search(sentence, end)
        return bool(_ZH_RIVALRY.search(sentence[end:after.start() if after else None]))
    return False


def is_weather_line(sentence: str) -> bool:
    """Whether a sentence reads the weather: a temperature, or a weather condition."""
    if reads_a_degree(sentence) or _ZH_CONDITION.search(sentence):
        return True
    blind = case_blind(sentence)
    return bool(_WORDED_READING.search(blind) or _EN_CONDITION.search(blind))


def is_weather_report(text: str) -> bool:
    """Whether a text is a weather report: it reads a temperature and says it is weather,
    or its title says it is a forecast. Such a text answers only weather questions."""
    title = text.split("\n", 1)[0]
    return bool(_WEATHER_PAGE.search(title)) or (
        reads_temperature(text)
        and bool(_ZH_CONDITION.search(text) or _EN_CONDITION.search(case_blind(text))))


def reads_a_degree(sentence: str) -> bool:
    """A number of degrees: "18-25°C", "最高气温15度". What `_READING` finds, read back from
    each degree sign: the pattern, with no first character to scan for, would be tried at
    every place in the text; the number before a sign is read once per sign."""
    backwards = None
    for sign in _DEGREE_SIGN.finditer(sentence):
        if backwards is None:
            backwards = sentence[::-1]
        if _NUMBER_BEFORE_BACKWARDS.match(backwards, len(sentence) - sign.start()):
            return True
    return False


# `_READING` without its sign, written backwards: the number that ends where a sign starts.
_DEGREE_SIGN = re.compile(r"℃|°|度(?!数)")
# White space is taken whole (it is never what comes next), so a run of it before many signs
# is read once per sign, not retried. The number starts at the first digit of its run, as
# `_READING`'s does: no digit, nor a digit and a point, before it.
_NUMBER_BEFORE_BACKWARDS = re.compile(
    r"\s*+\d*-?\s*+(?:~|-|到|至)?\s*+(?:\d+\.)?\d+-?(?!\d)(?!\.\d)")


def reads_temperature(sentence: str) -> bool:
    return reads_a_degree(sentence) or bool(_WORDED_READING.search(case_blind(sentence)))
