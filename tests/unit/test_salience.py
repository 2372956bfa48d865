"""Salience: evidence is about a name when the name is its subject, not a passing mention,
and a weather line answers only a weather question."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.relevance import fits_the_question, off_topic
from pmflow_gateway.contract.salience import in_passing, is_weather_line
from pmflow_gateway.handlers.planners.rules import plan_by_rules


def _passing(sentence: str, name: str) -> bool:
    start = sentence.index(name)
    return in_passing(sentence, start, start + len(name))


def test_a_name_compared_with_or_given_as_an_example_is_in_passing() -> None:
    assert _passing("Lyon is much warmer than Geneva today.", "Geneva")
    assert _passing("新机将与腾讯、网易的产品正面竞争。", "网易")
    assert _passing("其他城市如宁波请以当地发布为准。", "宁波")
    assert _passing("气温比苏州高两度。", "苏州")
    assert not _passing("Geneva: sunny, high 14C.", "Geneva")
    assert not _passing("腾讯和网易宣布成立合资公司。", "网易")


@pytest.mark.parametrize(("question", "elsewhere", "own"), [
    pytest.param("Geneva weather tomorrow",
                 "Lyon weather forecast\nLyon: tomorrow sunny, high 18C, warmer than Geneva.",
                 "Geneva weather forecast\nGeneva: tomorrow sunny, high 14C.",
                 id="a page titled with another city"),
    pytest.param("网易最近有什么消息",
                 "某厂商发布新游戏\n新游戏上线首日登顶，业内认为将与网易的同类产品竞争。",
                 "网易发布财报\n网易第三季度营收增长8%。",
                 id="a company named only in passing"),
])
def test_a_page_about_something_else_is_off_topic(question: str, elsewhere: str,
                                                   own: str) -> None:
    plan = plan_by_rules(question)
    assert off_topic(plan, elsewhere) is not None
    assert off_topic(plan, own) is None


def test_a_page_mostly_about_another_city_is_not_about_the_asked_one() -> None:
    plan = plan_by_rules("宁波最近有什么新闻")
    page = "长三角快讯\n杭州地铁新线开通。杭州亚运场馆开放。宁波港吞吐量创新高。杭州举办展会。"
    assert off_topic(plan, page) is not None


def test_the_kind_of_line_must_match_the_kind_of_question() -> None:
    weather = plan_by_rules("Geneva weather today")
    assert off_topic(weather, "Geneva Servette win\nGeneva Servette beat Basel 2-1.") is not None
    assert not fits_the_question(weather, "Geneva Servette beat Basel 2-1 last night.")
    assert fits_the_question(weather, "Geneva: today sunny, high 14C.")
    fact = plan_by_rules("What is the population of Geneva?")
    assert off_topic(fact, "Geneva weather forecast\nGeneva: today sunny, high 14C.") is not None
    assert not fits_the_question(fact, "Geneva: today sunny, high 14C.")
    assert is_weather_line("宁波今天多云，12~19℃")
    assert not is_weather_line("宁波港吞吐量创新高")
