"""A name no list knows is read up to the next word the finder knows. Where that word is a
time phrase's first part, the name ends before it: the page names the thing, not the thing
with "Oct" or 首 glued to it. A figure a page hopes for is not what was reached."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.qualifiers import clash, says_what_is_not_yet_so
from pmflow_gateway.contract.text import CJK
from pmflow_gateway.handlers.planners.words import find_names


def names(question: str) -> list[str]:
    return [s.text for s in find_names(question, question.lower(),
                                       zh=bool(CJK.search(question)))]


@pytest.mark.parametrize(("question", "expected"), [
    # A month before a day or a year is a date.
    ("median home price Ravensmoor Oct 2026", ["Ravensmoor"]),
    ("Dunmere Quay rent September 2026", ["Dunmere Quay"]),
    # 首周末, 上周末, 本月: the weekend or the month, not the end of the name.
    ("长夜星河首周末票房多少", ["长夜星河"]),
    ("雁回山上周末票房多少", ["雁回山"]),
    # A time word at the head is when, not who.
    ("昨天桐坪化工厂着火有人伤亡吗", ["桐坪化工"]),
])
def test_a_name_ends_where_a_time_phrase_starts(question: str, expected: list[str]) -> None:
    assert names(question) == expected


@pytest.mark.parametrize(("question", "expected"), [
    # Inside a name, or without a date after it, a month stays ("Theresa May", a club).
    ("what did Theresa May say today", ["Theresa May"]),
    ("Black Friday deals at Corvell Mart", ["Black Friday", "Corvell Mart"]),
    # A name whose last character is no time word's first part keeps it.
    ("澄岚科技本周股价", ["澄岚科技"]),
])
def test_names_that_only_look_like_it(question: str, expected: list[str]) -> None:
    assert names(question) == expected


@pytest.mark.parametrize(("line", "hoped"), [
    ("观点：按照预售走势，《长夜星河》首周末票房有望突破5亿元。", True),
    ("The film is expected to top $50 million over the weekend.", True),
    ("Analysts said the fund is on track to reach $2 billion by March.", True),
    # What was reached, and a reopening expected on a day, are not hoped-for figures.
    ("《长夜星河》首周末票房3.62亿元，位列同期第一。", False),
    ("The bridge is expected to reopen on Monday.", False),
])
def test_a_figure_hoped_for_is_not_yet_so(line: str, hoped: bool) -> None:
    assert says_what_is_not_yet_so(line) is hoped


@pytest.mark.parametrize(("question", "line", "clashes"), [
    # A closing price asked names its market by asking it: a price during the session is not it.
    ("鸿屹电子今天收盘价", "截至10:15，鸿屹电子报23.90元，上涨1.88%。", True),
    ("鸿屹电子今天收盘价", "沪深两市半日成交额超过5000亿元。", True),
    ("veltrino labs closing price today", "VLTR was indicated at $45.80 as of 8:10 a.m.", True),
    ("鸿屹电子今天收盘价", "12月4日A股收盘，鸿屹电子报23.46元。", False),
    # Not a market question: a museum's closing time is no session.
    ("what time does the corran museum close today", "The museum opened at 9 a.m.", False),
])
def test_a_session_price_is_not_the_close(question: str, line: str, clashes: bool) -> None:
    assert (clash(question, line) is not None) is clashes
