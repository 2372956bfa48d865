"""Salience: evidence is about a name when the name is its subject, not a passing mention,
and a weather line answers only a weather question."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract.relevance import fits_the_question, off_topic
from pmflow_gateway.contract.salience import (
    _WEATHER_PAGE,
    in_passing,
    is_weather_line,
    is_weather_report,
    reads_temperature,
)
from pmflow_gateway.contract.text import CJK_CHARS, split_sentences
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


# The weather patterns as one case-insensitive pattern each, as they were before the quicker
# split: the split must find a reading wherever these do, and nowhere else.
_TEMPERATURE_ORACLE = re.compile(
    r"-?\d+(?:\.\d+)?\s*(?:~|-|到|至)?\s*-?\d*\s*(?:℃|°[CF]?|度(?!数))"
    r"|(?<![A-Za-z])(?:high|low|max|min)s?\s*(?:of\s*)?-?\d+\s*°?[CF]?(?![A-Za-z])",
    re.IGNORECASE)
_CONDITION_ORACLE = re.compile(
    rf"[晴阴雨雪雾霾雷冰雹][{CJK_CHARS}]?|多云|大风|微风|[东南西北]风|风力|气温|温度|湿度|降水|降温|升温|预警"
    r"|紫外线|空气质量|天气"
    r"|(?<![A-Za-z])(?:sunny|sun|cloudy|clouds?|overcast|clear skies|rain|rainy|showers?"
    r"|drizzle|snow|sleet|flurries|fog|foggy|mist|haze|smog|winds?|windy|breezy|gusts?"
    r"|storms?|thunder\w*|hail|frost|humid\w*|heat\s?wave|hot|cold|chilly|mild|warm"
    r"|temperatures?|forecast|weather|air quality|aqi|uv index)(?![A-Za-z])",
    re.IGNORECASE)
_WEATHER_EDGES = [
    "ſunny", "raın", "RAİN", "Heat Wave", "HIGH 25C", "high 25cm", "low of -3", "Highs 30°F",
    "max 12°c", "thunderstorms likely", "sunday", "rainbow", "大雨", "晴", "28度数", "18~25℃",
    "18 到 25 度", "storm-hit", "İce", "KELVIN 5K", "pre-rain", "sunnyside", "humidity 80%",
    "forecast:", "UV Index 7", "aqi 40", "Air Quality good", "a mild day", "warmer", "10 °",
]
_WEATHER_ALPHABET = "ahilmnorstuwxyHLMNRSTUWİıſK°℃度数晴雨 -.0123456789"


def _weather_oracle(text: str) -> bool:
    return bool(_TEMPERATURE_ORACLE.search(text) or _CONDITION_ORACLE.search(text))


@pytest.mark.parametrize("text", _WEATHER_EDGES)
def test_the_quick_weather_patterns_find_what_the_case_blind_ones_find(text: str) -> None:
    assert is_weather_line(text) is _weather_oracle(text)
    assert reads_temperature(text) is bool(_TEMPERATURE_ORACLE.search(text))


@given(st.text(alphabet=_WEATHER_ALPHABET, max_size=24))
@settings(max_examples=600, deadline=None)
def test_the_quick_weather_patterns_agree_on_any_text(text: str) -> None:
    assert is_weather_line(text) is _weather_oracle(text)
    assert reads_temperature(text) is bool(_TEMPERATURE_ORACLE.search(text))
    assert is_weather_report(text) is (
        bool(_WEATHER_PAGE.search(text.split("\n", 1)[0]))
        or (bool(_TEMPERATURE_ORACLE.search(text)) and bool(_CONDITION_ORACLE.search(text))))


def test_the_quick_weather_patterns_agree_on_real_pages() -> None:
    truth = Path(__file__).resolve().parents[3] / "shared" / "realpages" / "ground-truth.json"
    if not truth.exists():
        pytest.skip("../shared/realpages is not beside this checkout")
    for page in json.loads(truth.read_text("utf-8")).values():
        body = page["articleBody"]
        report = bool(_WEATHER_PAGE.search(body.split("\n", 1)[0])) or (
            bool(_TEMPERATURE_ORACLE.search(body)) and bool(_CONDITION_ORACLE.search(body)))
        assert is_weather_report(body) is report
        for sentence in split_sentences(body):
            assert is_weather_line(sentence) is _weather_oracle(sentence), sentence
