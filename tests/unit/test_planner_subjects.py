"""Subjects the rules planner finds without a list: lower-case names, and questions that only
point at their subject (asked back)."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.lexicon import is_everyday_word, is_misspelling, zipf
from pmflow_gateway.handlers.planners.rules import draft_plan
from pmflow_gateway.schemas import AnswerContract, QueryKind


@pytest.mark.parametrize("question", [
    "did they win last night?", "what's the score?", "how much is it?", "when does it open?",
    "is it up or down today?", "那只股票收盘多少", "他们这个季度营收多少", "这家公司的CEO是谁",
    "who won the game yesterday?", "when's the next match?", "where is the upcoming race?",
    "when does the law take effect?", "现在的主教练是谁", "who is the mayor now?",
])
def test_a_question_that_only_points_at_its_subject_is_asked_back(question: str) -> None:
    plan, missing = draft_plan(question, locale="zh-CN" if not question.isascii() else "en-US")
    assert plan.answer_contract is AnswerContract.clarify
    assert missing is not None


@pytest.mark.parametrize("question", [
    "will it rain in Tallinn tomorrow", "is it cold in Hobart today", "Marimekko 它的股价呢",
    "did Ferencvaros win last night?",
])
def test_a_named_subject_or_the_weathers_it_is_not_pointing(question: str) -> None:
    plan, _ = draft_plan(question, locale="en-US")
    assert plan.answer_contract is not AnswerContract.clarify


@pytest.mark.parametrize(("question", "subject"), [
    ("how many staff is marimekko cutting", "marimekko"),
    ("whanganui weather tomorrow", "whanganui"),
    ("exynos 2600 clock speed", "exynos 2600"),
    ("what did ørsted announce", "ørsted"),
])
def test_a_word_no_everyday_text_uses_is_a_name(question: str, subject: str) -> None:
    plan, _ = draft_plan(question, locale="en-US")
    assert subject in [s.casefold() for s in plan.subject_entities]


def test_misspellings_and_short_slang_are_not_names() -> None:
    for question in ("costco anual revenue", "forcast for oslo tmrw", "score last nite"):
        plan, _ = draft_plan(question, locale="en-US")
        assert not {"anual", "forcast", "nite", "tmrw"} & set(plan.subject_entities)
    assert draft_plan("forcast for oslo tmrw", locale="en-US")[0].query_kind is QueryKind.weather


def test_word_frequencies() -> None:
    assert zipf("the") > 7 and is_everyday_word("bridge") and not is_everyday_word("marimekko")
    assert is_misspelling("anual") and is_misspelling("tomorow")
    assert not is_misspelling("brann")  # a changed letter makes another word, not a typo


def test_a_price_question_reads_a_short_rare_word_as_a_ticker() -> None:
    plan, _ = draft_plan("xlm price now", locale="en-US")
    assert plan.subject_entities == ["xlm"] and plan.query_kind is QueryKind.market
    plan, _ = draft_plan("what is the weather now", locale="en-US")
    assert plan.subject_entities == []


def test_a_period_after_a_name_is_not_part_of_it() -> None:
    plan, _ = draft_plan("Harlow Mills Q2 2026 revenue", locale="en-US")
    assert plan.subject_entities == ["Harlow Mills"]
    plan, _ = draft_plan("北证50今天多少点", locale="zh-CN")
    assert plan.subject_entities == ["北证50"] and plan.query_kind is QueryKind.market


def test_a_chinese_question_about_something_foreign_is_also_searched_in_english() -> None:
    plan, _ = draft_plan("Orvik Lines第二季度营收多少", locale="zh-CN")
    assert plan.search_queries[1] == "Orvik Lines Q2 revenue"
    plan, _ = draft_plan("挪威对丹麦比分多少", locale="zh-CN")
    assert plan.search_queries[1] == "Norway Denmark score"
    plan, _ = draft_plan("宁德时代最新消息", locale="zh-CN")
    assert not any(q.isascii() for q in plan.search_queries)


def test_invisible_characters_and_full_width_letters_are_read_as_the_user_sees_them() -> None:
    plan, _ = draft_plan("南\u200b宁明天天气", locale="zh-CN")
    assert plan.location_hint == "南宁" and "\u200b" not in " ".join(plan.search_queries)
    plan, _ = draft_plan("ＧＰＴ－５ context window", locale="en-US")
    assert plan.subject_entities == ["GPT-5"]


def test_a_possessive_is_not_part_of_the_name() -> None:
    plan, _ = draft_plan("What was Harlow Mills' revenue last year?", locale="en-US")
    assert plan.subject_entities == ["Harlow Mills"]
    plan, _ = draft_plan("Who runs Orvik’s ferry arm?", locale="en-US")
    assert plan.subject_entities == ["Orvik"]


def test_an_unknown_chinese_company_before_a_period_or_a_metric_is_the_subject() -> None:
    plan, _ = draft_plan("衡岳新材2026年前三季度营收多少", locale="zh-CN")
    assert plan.subject_entities == ["衡岳新材"]
    plan, _ = draft_plan("衡岳新材第二季度净利润", locale="zh-CN")
    assert plan.subject_entities == ["衡岳新材"]
