"""Qualifiers: a sentence about another period, role, occasion or variant is not the answer."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from pmflow_gateway.contract.qualifiers import (
    asks_who_holds,
    clash,
    mentions_topic,
    names_only_a_role,
    period_ended,
    topic_words,
    years_of,
)
from pmflow_gateway.contract.verify import freshness_problem
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind
from tests.fakes import evidence


@pytest.mark.parametrize(("question", "sentence", "clashes"), [
    # reporting periods, the quarter, the year, actual vs forecast
    ("澄河电子前三季度营收多少", "公司第三季度实现营业收入8.1亿元。", True),
    ("澄河电子前三季度营收多少", "前三季度累计实现营业收入22.4亿元。", False),
    ("Harlow Mills Q2 revenue",
     "Harlow Mills reported third-quarter revenue of $88 million.", True),
    ("Harlow Mills Q2 revenue", "Second-quarter revenue was $91 million.", False),
    ("Harlow Mills revenue guidance for next quarter",
     "Second-quarter revenue was $91 million.", True),
    ("Harlow Mills revenue guidance for the third quarter",
     "For the third quarter it expects revenue of $95 million to $99 million.", False),
    ("Harlow Mills third quarter revenue",
     "For the third quarter it expects revenue of $95 million to $99 million.", True),
    ("澄河电子2025年全年营收", "公司预计2026年全年营收30亿元。", True),
    # the phase of an event and which meeting
    ("Dalby Rovers result last night", "Dalby Rovers host Kinsale Town tonight, kick-off 7:45pm.",
     True),
    ("Dalby Rovers result last night", "Dalby Rovers beat Kinsale Town 3-1 last night.", False),
    ("Dalby Rovers score", "When the sides last met, Kinsale won 2-0.", True),
    ("what time do Dalby Rovers play tonight", "Dalby Rovers beat Kinsale Town 3-1.", True),
    ("what time do Dalby Rovers play tonight", "Dalby Rovers host Kinsale Town, kick-off 7:45pm.",
     False),
    # winner vs pole, current vs former, the role
    ("who won the Lakeside 200", "Mara Quist took pole position for the Lakeside 200.", True),
    ("who won the Lakeside 200", "Ivo Renner won the Lakeside 200 from fifth on the grid.", False),
    ("who is the current coach of Tarnow Handball",
     "Tarnow Handball's former coach Piotr Lis joined a rival.", True),
    ("who is the current coach of Tarnow Handball",
     "Tarnow Handball named Ewa Sowa head coach.", False),
    ("who is the CEO of Orvik Lines", "Orvik Lines chairman Lars Moen spoke at the launch.", True),
    ("who is the CEO of Orvik Lines", "Orvik Lines reported record bookings.", True),
    # the sport, the team, a grade number
    ("临海篮球队比分多少", "临海足球队1比2负于对手。", True),
    ("江城女排比分", "江城男排3比1取胜。", True),
    ("江城女排比分", "江城女排3比1取胜。", False),
    ("今天95号汽油多少钱", "92号汽油每升7.85元。", True),
    ("今天95号汽油多少钱", "95号汽油每升8.36元。", False),
])
def test_a_sentence_that_states_another_qualifier_clashes(
        question: str, sentence: str, clashes: bool) -> None:
    assert (clash(question, sentence) is not None) is clashes, clash(question, sentence)


def test_a_question_without_qualifiers_lets_any_sentence_through() -> None:
    assert clash("latest on the Oakbay port", "Dock workers voted to end the strike.") is None


def test_a_period_that_is_over_keeps_its_figures() -> None:
    december = date(2026, 12, 4)
    assert period_ended("Brenholt first-half 2026 revenue", december)
    assert period_ended("澄河电子2026年第三季度营收", december)
    assert period_ended("Brenholt 2025 revenue", december)
    assert not period_ended("Brenholt Q4 2026 revenue", december)
    assert not period_ended("Brenholt 2026 revenue", december)  # the year is not over
    assert not period_ended("澄河电子2027年营收目标", december)
    assert not period_ended("Brenholt latest revenue", december)


def test_a_role_with_no_owner_is_all_the_question_says() -> None:
    assert names_only_a_role("现在的主教练是谁")
    assert names_only_a_role("who is the mayor now?")
    assert not names_only_a_role("江苏女排现在的主教练是谁")
    assert not names_only_a_role("who is brenholt's new cfo")


def test_a_month_the_question_names_is_the_sentences() -> None:
    question = "澄江FC今年7月对阵临峰是什么比分"
    assert clash(question, "12月3日晚，澄江FC在主场以3比2险胜临峰队。")
    assert clash(question, "两队上一次交手是在今年7月，当时双方1比1战平。") is None
    assert clash("What was Quarrow's inflation rate in November?",
                 "Prices rose 2.4% in November, down from 2.9% in October.") is None
    assert clash("What was Quarrow's inflation rate in November?",
                 "Prices rose 2.9% in October.")


def test_as_a_whole_is_the_full_year() -> None:
    question = "what is Brenholt expecting for revenue in fiscal 2027 as a whole?"
    assert clash(question, "For the first quarter of fiscal 2027 Brenholt expects $40m.")
    assert clash(question, "For fiscal 2027 Brenholt expects full-year revenue of $170m.") is None


def test_holder_questions_and_fiscal_years() -> None:
    assert asks_who_holds("who runs Orvik Lines now")
    assert asks_who_holds("澄河电子董事长是谁")
    assert not asks_who_holds("who won the Lakeside 200")
    assert not asks_who_holds("who was the previous coach of Tarnow Handball")
    assert years_of("Q1 FY27 revenue and fiscal 2026") == {"2027", "2026"}


def test_the_value_must_be_about_what_the_question_asks_of_it() -> None:
    stems = topic_words("who scored for Dalby Rovers against Kinsale", ("Dalby Rovers",))
    assert stems == ("scor",)  # "scored", "scores" and "score" alike
    assert mentions_topic("Ana Ruiz scored twice for Dalby Rovers.", stems)
    assert not mentions_topic("Dalby Rovers beat Kinsale 2-0.", stems)
    # Two of the question's topic words, when it has two: a sentence about the company is not
    # one about its finance chief.
    stems = topic_words("who is brenholt's new cfo", ())
    assert mentions_topic("Brenholt named Ola Vik its CFO on Monday.", stems, need=2)
    assert not mentions_topic("Brenholt opened a store in Leeds.", stems, need=2)
    assert mentions_topic("Brenholt opened a store in Leeds.", stems)
    # Roles, winning and names are checked elsewhere, in all their synonyms.
    assert topic_words("Who is the current CEO of Orvik Lines?", ("Orvik Lines",)) == ()
    assert topic_words("who won the Lakeside 200", ()) == ()
    assert topic_words("小米股价多少", ()) == ()


def test_a_period_is_over_as_of_when_its_evidence_was_retrieved() -> None:
    """An old page about the third quarter is fine once the quarter is over, and "over" is
    judged on the item's retrieval date, the moment its freshness was scored, not the host's
    calendar."""
    plan = ExternalQueryPlan(query_kind=QueryKind.company, freshness_required=True,
                             topic="Brenholt Q3 2026 revenue")
    old = evidence("https://example.org/q3", "Brenholt Q3 revenue was $91 million.",
                   fresh=0.05).model_copy(update={"raw_metadata": {"published_at": "x"}})
    in_december = old.model_copy(update={"retrieved_at": datetime(2026, 12, 2, tzinfo=UTC)})
    in_august = old.model_copy(update={"retrieved_at": datetime(2026, 8, 2, tzinfo=UTC)})
    assert freshness_problem(plan, in_december) is None
    assert (freshness_problem(plan, in_august) or "").startswith("stale")
