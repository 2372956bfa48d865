"""Names no list knows, typed as users type them, and what a follow-up keeps of the question
before it; then which of a page's figures is the asked one. The names here are invented."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pmflow_gateway.contract.qualifiers import mentions_topic, topic_words
from pmflow_gateway.contract.relevance import names, off_topic, place_readings, quotes_a_level
from pmflow_gateway.contract.slots import Slot, asked_slot, counted_noun
from pmflow_gateway.contract.verify import ambiguous_place, freshness_problem
from pmflow_gateway.handlers.composers import _dated_months_ago, compose_extractive
from pmflow_gateway.handlers.planners.rules import (
    RulesPlanner,
    follow_up_question,
    in_the_region,
    plan_by_rules,
)
from pmflow_gateway.handlers.planners.words import find_names
from pmflow_gateway.schemas import ExternalEvidence
from tests.fakes import evidence
from tests.support.builders import route

# ---------------------------------------------------------------- names typed in lower case


@pytest.mark.parametrize(("question", "found"), [
    # A place-name word after a name (itself a known place or no word at all) is one place.
    ("weather in tollan springs tomorrow", ["tollan springs"]),
    ("brisworth heights weather", ["brisworth heights"]),
    # ... and a company's or a team's word one company, one team.
    ("pellgrave robotics revenue last quarter", ["pellgrave robotics"]),
    ("who won yarrowby rovers vs elmstead united", ["yarrowby rovers", "elmstead united"]),
    # A model's code belongs to its name; a reporting period does not.
    ("how much is the corvane z5 pro", ["corvane z5 pro"]),
    ("corvane q3 revenue", ["corvane"]),
    # Known places ending in such a word are the known place.
    ("kansas city weather", ["kansas city"]),
])
def test_a_name_typed_in_lower_case_keeps_its_last_word(question: str, found: list[str]) -> None:
    assert [s.text for s in find_names(question, question.lower(), zh=False)] == found


def test_a_lower_case_town_is_the_weather_questions_place() -> None:
    plan = plan_by_rules("weather in tollan springs tomorrow", locale="en-US")
    assert plan.location_hint == "tollan springs"


def test_a_name_misspelt_in_one_of_its_words_is_still_named() -> None:
    assert names("brackstone pharma", "Bracksstone Pharma named a new chief executive.")
    assert not names("brackstone pharma", "Bracksstone Foods named a new chief executive.")


# ---------------------------------------------------------------- namesakes in two regions


def _page(url: str, title: str, snippet: str) -> ExternalEvidence:
    return evidence(url, snippet, title=title)


def test_a_town_two_regions_have_is_asked_back_in_any_question() -> None:
    question = "what does a parking ticket cost in wendlow"
    plan = plan_by_rules(question, locale="en-US")
    pages = [_page("https://a.example/1", "Parking", "Wendlow, Vermont: parking tickets are $35."),
             _page("https://b.example/2", "Fines", "Wendlow, Kansas charges $20 a ticket.")]
    assert place_readings(plan, [f"{p.title}\n{p.snippet}" for p in pages]) == [
        "Vermont", "Kansas"]
    assert ambiguous_place(plan, question, pages) == ([], ["Vermont", "Kansas"])
    # A list after a comma is no region: one reading only, nothing to ask.
    listed = [_page("https://c.example/3", "Towns", "Wendlow, Harbury and Tisdale voted."),
              pages[0]]
    assert ambiguous_place(plan, question, listed)[1] == []


def test_a_region_written_short_matches_the_page_that_writes_it_in_full() -> None:
    plan = plan_by_rules("Wendlow VT parking ticket fine?", locale="en-US")
    assert names(plan.subject_entities[0], "Wendlow, Vermont: parking tickets are $35.")


# ---------------------------------------------------------------- follow-ups


@pytest.mark.parametrize(("question", "previous", "merged"), [
    ("the one in kansas", "wendlow weather tomorrow?", "wendlow, Kansas weather tomorrow?"),
    ("I mean Vermont", "What is the weather in Wendlow tomorrow?",
     "What is the weather in Wendlow, Vermont tomorrow?"),
    ("浙江的", "青岚镇明天天气怎么样", "浙江青岚镇明天天气怎么样"),
    # Not an answer to "which one?": asked as before.
    ("what about oregon?", "california unemployment rate", None),
    ("oregon?", "what is the population of oregon", None),
])
def test_naming_a_region_after_a_town_question_asks_about_the_town_there(
        question: str, previous: str, merged: str | None) -> None:
    assert in_the_region(question, previous) == merged


@pytest.mark.parametrize(("question", "previous", "merged"), [
    # Another figure of the same period: the period goes on.
    ("and net income?", "pellgrave robotics revenue last quarter",
     "pellgrave robotics last quarter and net income?"),
    ("净利润呢", "岚桥新能源上个季度营收多少", "岚桥新能源上个季度 净利润呢"),
    # The same period a year before: the period, without its year.
    ("那去年同期呢？", "岚桥新能源2026年第三季度营收是多少？",
     "岚桥新能源 营收 第三季度 那去年同期呢？"),
    # A time of its own, or no figure: nothing carried.
    ("what about for 2025?", "pellgrave robotics revenue q3",
     "pellgrave robotics revenue what about for 2025?"),
    ("它的股价呢", "岚桥新能源去年营收", "岚桥新能源 它的股价呢"),
    # The base edition after another one's price.
    ("what about the regular z5?", "how much is the corvane z5 pro", "how much is the corvane z5"),
])
def test_a_follow_up_keeps_what_it_does_not_change(question: str, previous: str,
                                                  merged: str) -> None:
    assert follow_up_question(question, previous) == merged


# ---------------------------------------------------------------- which figure


@pytest.mark.parametrize(("question", "noun", "slot"), [
    ("今年秋季招了多少新生", "新生", Slot.quantity),
    ("几所学校停课了", "学校", Slot.quantity),
    ("售价多少", None, Slot.amount),
    ("营收多少亿", None, Slot.amount),
    ("今晚进了几个球", None, Slot.quantity),  # one character says too little to check
])
def test_what_a_chinese_question_counts(question: str, noun: str | None, slot: Slot) -> None:
    assert counted_noun(question) == noun
    assert asked_slot(question) is slot


def test_a_count_answers_only_with_a_line_about_the_counted_thing() -> None:
    question = "梧溪县今年招了多少新生"
    plan = plan_by_rules(question, locale="zh-CN")
    pages = [_page("https://a.example/pop", "梧溪县统计公报", "梧溪县年末常住人口38.2万人。"),
             _page("https://b.example/edu", "梧溪县招生", "梧溪县今年共招收小学新生2914人。")]
    assert "2914人" in compose_extractive(question, plan, pages).answer


@pytest.mark.parametrize(("line", "old"), [
    ("The lake reached 88% of capacity in mid-June.", True),
    ("The lake stood at 61% of capacity on Friday, December 4.", False),
    ("Unemployment was 4.2% in October.", False),  # a monthly figure, published late
    ("2025年6月水位为152米", True),
    ("12月4日水位为148米", False),
    ("Water levels may fall.", False),
])
def test_a_figure_dated_months_back(line: str, old: bool) -> None:
    assert _dated_months_ago(line, date(2026, 12, 6)) is old


def _dated(url: str, title: str, snippet: str) -> ExternalEvidence:
    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    published = (now - timedelta(hours=5)).isoformat()
    return evidence(url, snippet, title=title).model_copy(update={
        "retrieved_at": now, "raw_metadata": {"published_at": published}})


def test_how_things_stand_now_is_not_a_figure_from_months_ago() -> None:
    question = "How full is Pellmere Lake right now?"
    plan = plan_by_rules(question, locale="en-US")
    pages = [_dated("https://a.example/june", "Pellmere Lake nears full",
                    "Pellmere Lake reached 88% of capacity in mid-June."),
             _dated("https://b.example/now", "Pellmere Lake storage",
                    "Pellmere Lake stood at 61% of capacity on Friday, December 4.")]
    answer = compose_extractive(question, plan, pages).answer
    assert "61%" in answer and "88%" not in answer


def test_a_figure_in_another_names_clause_is_not_the_asked_names() -> None:
    question = "What did Corvane Systems report for third-quarter revenue?"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/cal", "Earnings week",
                 "Halberd Motors reported third-quarter revenue of $2.1 billion, while Corvane "
                 "Systems has yet to set a date for its report.")
    assert compose_extractive(question, plan, [page]).answer == ""


def test_the_same_period_a_year_before_is_quoted_alone() -> None:
    question = "那去年同期呢？"
    plan = plan_by_rules(follow_up_question(question, "岚桥新能源2026年第三季度营收是多少？"),
                         locale="zh-CN")
    page = _page("https://a.example/q3", "岚桥新能源三季报",
                 "岚桥新能源第三季度实现营业收入31.5亿元，同比增长6%（上年同期为29.7亿元）。")
    answer = compose_extractive(question, plan, [page]).answer
    assert "29.7亿元" in answer and "31.5亿元" not in answer


@pytest.mark.parametrize(("line", "old"), [
    ("A 30-day pass will cost €62 from January.", False),  # next month, not last January
    ("Soybeans for March delivery rose to $11.20 a bushel.", False),
    ("The reservoir was at 70% in September.", True),
    ("几比几", False),
])
def test_a_month_without_a_year_is_the_nearest_one(line: str, old: bool) -> None:
    assert _dated_months_ago(line, date(2026, 12, 6)) is old
    assert counted_noun("柳州男篮昨天几比几") is None


@pytest.mark.parametrize(("question", "found"), [
    ("is the harbury whaling museum open tomorrow", ["harbury whaling museum"]),
    ("er wait at the st. brenna regional hospital", ["brenna regional hospital"]),
    ("the name of the comet orvel observatory found", ["orvel observatory"]),
    ("who runs the museum", []),  # "the museum" alone names none
])
def test_everyday_words_before_an_institutions_word_are_its_name(question: str,
                                                                  found: list[str]) -> None:
    assert [s.text for s in find_names(question, question.lower(), zh=False)] == found


@pytest.mark.parametrize("line", [
    "The central bank set the reference rate at 14.82 Tarvish crowns per US dollar.",
    "12月4日，1元人民币兑换3.417南屿币。",
])
def test_an_exchange_rate_is_a_quoted_level(line: str) -> None:
    assert quotes_a_level(line)


async def test_a_short_question_that_names_nothing_goes_on_from_the_thread() -> None:
    plan, _ = await RulesPlanner().plan(route("能坐几公里？",
                                              previous_question="霁川地铁现在起步价多少"))
    assert plan.subject_entities == ["霁川地铁"]
    # A question that names its own subject is its own, in a thread too.
    alone, _ = await RulesPlanner().plan(route("how tall is the Brenholt tower",
                                               previous_question="Orvik Lines revenue"))
    assert "Orvik" not in alone.topic


def test_last_years_figures_may_come_from_a_page_written_long_ago_that_names_the_year() -> None:
    plan = plan_by_rules("Pellgrave Robotics revenue for last year", locale="en-US",
                         needs_freshness=True)
    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)

    def old_page(snippet: str) -> ExternalEvidence:
        published = (now - timedelta(days=280)).isoformat()
        return evidence("https://a.example/fy", snippet, title="Results").model_copy(update={
            "retrieved_at": now, "freshness_score": 0.2,
            "raw_metadata": {"published_at": published}})

    assert freshness_problem(plan, old_page("Full-year 2025 revenue was $2.3 billion.")) is None
    assert freshness_problem(plan, old_page("Full-year 2024 revenue was $2.1 billion."))


def test_a_comparisons_page_may_be_about_one_of_its_editions() -> None:
    question = "which has the bigger battery, tarvo z9 or z9 pro?"
    plan = plan_by_rules(question, locale="en-US")
    assert plan.subject_entities == ["tarvo z9", "z9 pro"]
    pro = _page("https://a.example/pro", "Tarvo Z9 Pro review",
                "The Tarvo Z9 Pro has a 5,500 mAh battery.")
    answer = compose_extractive(question, plan, [pro]).answer
    # The Pro's battery is the Pro's line, never the Z9's.
    assert "z9 pro: The Tarvo Z9 Pro has a 5,500 mAh battery" in answer
    assert "tarvo z9: not found" in answer


def test_money_and_numerals_after_duoshao_are_no_count() -> None:
    assert counted_noun("签下他花了多少转会费") is None
    assert counted_noun("白条猪批发价现在多少一公斤") is None


async def test_a_question_that_goes_on_from_nothing_asks_which_one() -> None:
    plan, info = await RulesPlanner().plan(route("what about last year?"))
    assert plan.answer_contract.value == "clarify" and info.reason


def test_topic_words_match_whatever_their_ending() -> None:
    stems = topic_words("how many jobs is pellgrave freight cutting", ("pellgrave freight",))
    assert mentions_topic("Pellgrave Freight will cut 1,150 jobs.", stems, need=2)
    assert not mentions_topic("Pellgrave Freight opened two hubs.", stems, need=2)


def test_a_state_typed_in_lower_case_chooses_the_town() -> None:
    question = "how much snow will wendlow vt get tomorrow"
    plan = plan_by_rules(question, locale="en-US")
    pages = [_page("https://a.example/vt", "Wendlow, VT forecast", "Monday: snow, 4 inches."),
             _page("https://b.example/ks", "Wendlow, KS forecast", "Monday: dry and windy.")]
    assert plan.location_hint == "wendlow, vt"  # written as pages write it
    assert [off_topic(plan, f"{p.title}\n{p.snippet}") is None for p in pages] == [True, False]
    # A town the table knows, with the state's code typed after it: that state's page.
    question = "how much snow will millbrook vt get tomorrow"
    known = plan_by_rules(question, locale="en-US")
    pages = [_page("https://a.example/vt", "Millbrook, VT forecast", "Monday: snow, 4 inches."),
             _page("https://b.example/wa", "Millbrook, WA forecast", "Monday: fine, 33°C.")]
    chosen, readings = ambiguous_place(known, question, pages)
    assert [p.target_url for p in chosen] == ["https://a.example/vt"] and readings == []
    # "or" is a word, never Oregon's code: nothing is chosen by it.
    assert ambiguous_place(known, "will it snow in millbrook or not", pages)[1] == ["VT", "WA"]


def test_a_lower_case_word_after_a_capitalised_name_is_not_part_of_it() -> None:
    question = "How much is an adult single on the Kelsby ferry to Orran Island?"
    assert [s.text for s in find_names(question, question.lower(), zh=False)] == [
        "Kelsby", "Orran Island"]
