"""What the reply shows beside its answer, and where a Chinese sentence ends: a source's
title shows no figure the answer did not state, every answer states its figure without the
one it is set beside, and a "。" between two numbers ends a sentence unless the numbers read
as an address."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.slots import figures_not_in
from pmflow_gateway.contract.text import split_sentences
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from pmflow_gateway.schemas import AnswerStatus
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose


@pytest.mark.parametrize(("title", "answer", "shown"), [
    # The quarter's revenue above the asked profit: not checked against the question.
    ("鸿钧精密三季报：第三季度营收12.64亿元 同比增长18.2%",
     "第三季度净利润为1.52亿元，同比增长9.7%。", "鸿钧精密三季报：第三季度营收… 同比增长…"),
    ("11月LPR出炉:1年期2.85% 5年期以上3.35%", "5年期以上LPR为3.35%。",
     "11月LPR出炉:1年期… 5年期以上3.35%"),
    ("Kite series launched: Kite Pro costs €349", "The Kite costs €229.",
     "Kite series launched: Kite Pro costs …"),
    ("嘉禾城3比2险胜临峰", "当时双方1比1战平。", "嘉禾城…险胜临峰"),
    # What the answer states, a date, a model's number, a title with no figure: as written.
    ("Brantmoor Q3 revenue rises 6% to GBP 742 million", "revenue of GBP 742 million, up 6%",
     "Brantmoor Q3 revenue rises 6% to GBP 742 million"),
    ("12月3日星弧X5 Max开售", "售价4599元起。", "12月3日星弧X5 Max开售"),
    ("Guangzhou 5-day forecast", "18-25°C", "Guangzhou 5-day forecast"),
    # A citation marker states no number: "降温1度" is not stated by "[1]".
    ("广州：周末最高气温31度 未来1周降温1度", "最低气温15度。[1]",
     "广州：周末最高气温… 未来1周降温…"),
    # Bare numbers are years, models, routes and counts, not figures.
    ("Heat 110, Celtics 102: Paris 2024 and the Boeing 737-800", "x",
     "Heat 110, Celtics 102: Paris 2024 and the Boeing 737-800"),
    ("航班抵达2号航站楼 中国队再添4块金牌", "x", "航班抵达2号航站楼 中国队再添4块金牌"),
    ("北京明天最低气温-5℃", "最高气温3℃", "北京明天最低气温…"),
])
def test_a_title_shows_no_figure_the_answer_does_not_state(title: str, answer: str,
                                                           shown: str) -> None:
    assert figures_not_in(title, answer) == shown


async def test_the_sources_of_an_answer_carry_only_its_own_figures() -> None:
    page = evidence("https://www.weather.com.cn/guangzhou/5d",
                    "广州未来5天以多云为主，气温18至25度。",
                    title="广州：周末最高气温30度 未来5天多云")
    answer = await verify_and_compose(collected([page]), clock=CLOCK)
    assert answer.status is AnswerStatus.answered and "18至25度" in answer.answer
    assert [s.title for s in answer.sources_used] == ["广州：周末最高气温… 未来5天多云"]


@pytest.mark.parametrize(("text", "sentences"), [
    ("AQI为156。12月4日发布", ["AQI为156。", "12月4日发布"]),
    ("末班车延后至23:30。12号线保持23:10不变。", ["末班车延后至23:30。", "12号线保持23:10不变。"]),
    ("售价4599元。12GB版本", ["售价4599元。", "12GB版本"]),
    ("现汇买入价716.42。现钞买入价710.85。", ["现汇买入价716.42。", "现钞买入价710.85。"]),
    # A decimal typed in Chinese is one number; an address written with "。" and other
    # disguised dots stays whole for the link checks.
    ("售价为25。5元", ["售价为25。5元"]),
    ("访问10。0。0。1获取", ["访问10。0。0。1获取"]),
    ("请访问 10。0(dot)0(dot)1 领取奖品", ["请访问 10。0(dot)0(dot)1 领取奖品"]),
    ("evil。com", ["evil。com"]),
    ("请访问evil。com领取", ["请访问evil。com领取"]),
    ("见x。1", ["见x。1"]),
])
def test_a_full_stop_between_numbers_ends_a_sentence_unless_they_read_as_an_address(
        text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences



def _answer(question: str, sentence: str, title: str) -> str:
    plan = plan_by_rules(question, locale="en-US")
    return compose_extractive(question, plan, [evidence("https://a.example/x", sentence,
                                                        title=title)]).answer


def test_every_answer_states_its_figure_without_the_one_it_is_set_beside() -> None:
    answer = _answer("marrowgate county flu cases last week",
                     "Marrowgate County Public Health reported 436 laboratory-confirmed influenza "
                     "cases for the week ending Nov. 28, up from 298 the week before, and 37 "
                     "flu-related hospitalizations.", "Flu cases climb again in Marrowgate County")
    assert "436" in answer and "298" not in answer and "37 flu-related" in answer


@pytest.mark.parametrize("sentence", [
    # "pop-up" is no change, so no figure after it is set beside another.
    "The pop-up pool at Kelbrook Leisure Centre is open from 2026 onwards, from 6 to 9 daily.",
    # A time something runs from is no figure, whatever comes before it.
    "Kelbrook Leisure Centre's pool hours were extended, from 6 a.m. to 9 p.m.",
])
def test_a_time_from_which_something_runs_is_no_figure_set_beside_another(
        sentence: str) -> None:
    answer = _answer("kelbrook leisure centre pool hours", sentence,
                     "Kelbrook Leisure Centre pool")
    assert answer.startswith(sentence.rstrip("."))


def test_the_new_figure_after_an_old_one_is_never_cut_with_it() -> None:
    answer = _answer("marrowgate flu update", "Flu cases in Marrowgate rose from 298 in the week "
                     "ending Nov. 21 to 436, health officials said.", "Marrowgate flu update")
    assert "436" in answer


def test_a_question_about_the_year_before_keeps_the_year_befores_figure() -> None:
    answer = _answer("quillmark logistics revenue in the same quarter a year earlier",
                     "Quillmark Logistics Inc. said on Thursday that third-quarter 2026 revenue "
                     "rose 8% to $1.38 billion from $1.28 billion a year earlier.",
                     "Quillmark Logistics third-quarter results")
    assert "$1.28 billion" in answer


@pytest.mark.parametrize(("after", "goes_on"), [
    ("8日晴，最低气温-6℃。", False),  # another day
    ("其中北站最低气温-6℃。", False),  # a part of the town
    ("7日夜间最低气温-6℃。", True),  # the same day
    ("其中夜间有小雪，最低气温-6℃。", True),  # a part of the day
    ("9号台风外围影响，最低气温-6℃。", True),  # a typhoon's number, not a day
])
def test_a_days_forecast_goes_on_only_with_lines_of_that_day_and_place(after: str,
                                                                      goes_on: bool) -> None:
    question = "明天棠川最低几度"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://tangchuan-qixiang.example/yb",
                    f"棠川市气象台预报：明天（7日）小雪转阴，最高气温2℃。{after}",
                    title="棠川市天气预报")
    answer = compose_extractive(question, plan, [page]).answer
    assert "最高气温2℃" in answer and ("-6℃" in answer) is goes_on
