"""A line that lists several figures is quoted by the one item the question's words point to,
whatever the items are: no list of kinds is needed, and no item is chosen when the question
points to none alone."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.qualifiers import item_asked
from pmflow_gateway.handlers.composers import _points_less


@pytest.mark.parametrize(("question", "line", "quoted"), [
    # Items parted by bars: the asked one by its words, a "not ..." counting for none.
    ("how much are eggs at the co-op this week (large dozen, not organic)",
     "DAIRY: Grade A large eggs, dozen — $4.29 | Organic eggs, dozen — $6.49 | Milk — $4.15.",
     "DAIRY: Grade A large eggs, dozen — $4.29."),
    # Chinese items parted by a semicolon: the grade's number is a word of the question.
    ("95号汽油多少钱", "92号汽油每升7.35元；95号汽油每升7.82元。", "95号汽油每升7.82元。"),
    # Clauses parted by commas; the line's heading stays with its item.
    ("30 year fixed apr at pinecrest", "30-year fixed: rate 5.99%, APR 6.12%.",
     "30-year fixed: APR 6.12%."),
    # A change in percent stays with the figure it is said of.
    ("华峰科技第三季度营收多少", "华峰科技第三季度营收12.6亿元，同比增长8.2%，净利润1.2亿元。",
     "华峰科技第三季度营收12.6亿元，同比增长8.2%。"),
    ("monthly pass price", "The base fare is $2.50, the monthly pass $85.",
     "The monthly pass $85."),
    # An item is its figure with the words before it.
    ("iphone 17 pro price", "Apple unveiled iPhone 17, starting at $799, and iPhone 17 Pro, "
     "starting at $1,099.", "iPhone 17 Pro, starting at $1,099."),
    # A change said first goes with the figure after it.
    ("恒钧电器今天收盘多少钱", "恒钧电器（002736）全天收涨2.9%，报23.47元，成交额6.8亿元。",
     "恒钧电器（002736）全天收涨2.9%，报23.47元。"),
])
def test_the_item_the_question_points_to(question: str, line: str, quoted: str) -> None:
    assert item_asked(question, line) == quoted


@pytest.mark.parametrize(("question", "line"), [
    # The period is in one clause, the metric in the other: neither alone is pointed to.
    ("华峰科技第三季度净利润多少", "华峰科技第三季度营收12.6亿元，净利润1.2亿元。"),
    # The name is in one item, the metric in the other.
    ("acme net income q3",
     "Acme reported revenue of $1.2 billion, up 8% from a year earlier, and net income of "
     "$150 million."),
    # One figure, and a change said of it: nothing to choose.
    ("acme revenue", "Acme reported revenue of $1.2 billion, up 8% from a year earlier."),
    # The question's words are in every item alike.
    ("egg prices", "Large eggs $4.29 | Organic eggs $6.49."),
    # A change, then the close: one item.
    ("澄峰科技今天收盘价多少", "12月3日A股收盘，澄峰科技回落1.6%，收报47.58元。"),
    # "closing" is a word of "close", the euro one of the other item's.
    ("euro close yesterday", "The euro opened at $1.1867 on Thursday, after closing at $1.1842 "
     "on Wednesday."),
    # No figure at all.
    ("when does it open", "The pool opens Monday; the gym opens Tuesday."),
])
def test_no_item_when_none_is_pointed_to_alone(question: str, line: str) -> None:
    assert item_asked(question, line) is None


@pytest.mark.parametrize(("question", "line", "first", "dropped"), [
    # Another unit's hours, with fewer of the question's words: not a second answer.
    ("ellisfold university hospital visiting hours",
     "Visiting on the maternity unit remains 11am to 7pm for partners.",
     "Ellisfold University Hospital has extended ward visiting hours to 2pm to 8pm.", True),
    ("pinecrest bank 30yr fixed apr", "30-year jumbo: APR 6.41%.",
     "30-year fixed: APR 6.12%.", True),
    # The first line names a year, not a figure: the second gives the figure.
    ("whats the cap under tasmania's rent stabilization act",
     "The act caps annual rent increases at 3.2% for existing tenancies.",
     "The Rent Stabilisation Act 2026 has received royal assent in Tasmania.", False),
    # A word the first line lacks: the second may be what was asked.
    ("pinecrest bank jumbo apr", "30-year jumbo: APR 6.41%.", "30-year fixed: APR 6.12%.",
     False),
])
def test_a_second_line_that_points_less(question: str, line: str, first: str,
                                        dropped: bool) -> None:
    assert _points_less(question, line, first) is dropped
