"""The time-expression normaliser: many ways of writing a day, one canonical day."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.when import (
    asked,
    canonical_hint,
    distance,
    names_another_day,
    speaks_of,
)


@pytest.mark.parametrize(("question", "day"), [
    ("宁波明儿下雨吗", "tomorrow"), ("温州明日天气", "tomorrow"), ("次日气温", "tomorrow"),
    ("翌日会降温吗", "tomorrow"), ("dublin weather tmrw", "tomorrow"),
    ("oslo forecast tmr", "tomorrow"), ("lisbon weather tommorow", "tomorrow"),
    ("Is it cold tomorow in Prague", "tomorrow"), ("2moro rain?", "tomorrow"),
    ("今日多少度", "today"), ("今儿冷不冷", "today"), ("Vienna weather today", "today"),
    ("今晚有雨吗", "tonight"), ("rain tonite?", "tonight"),
    ("后儿天气", "after_tomorrow"), ("后天刮风吗", "after_tomorrow"),
    ("weather the day after tomorrow", "after_tomorrow"), ("大后天呢", "in_3_days"),
    ("昨儿下雪了吗", "yesterday"), ("yesterday's high", "yesterday"),
    ("本周末天气", "weekend"), ("this weekend in Athens", "weekend"),
    ("下周一天气", "next_mon"), ("next Monday forecast", "mon"), ("星期六下雨吗", "sat"),
    ("wednesdy weather", "wed"), ("未来5天天气", "period"), ("next 3 days", "period"),
    ("明天和后天", "period"),
])
def test_every_written_form_reads_as_its_canonical_day(question: str, day: str) -> None:
    found = asked(question)
    assert found is not None and found.day == day


@pytest.mark.parametrize("question", ["厦门天气怎么样", "weather in Helsinki", "最近有什么新闻",
                                      "tomato prices", "tomatoes and potatoes"])
def test_no_day_is_guessed_from_other_words(question: str) -> None:
    assert asked(question) is None


def test_a_day_is_written_into_the_plan_canonically_in_the_question_language() -> None:
    for question, hint in [("宁波明儿天气", "明天"), ("dublin tmrw", "tomorrow"),
                           ("后儿呢", "后天"), ("未来 5 天", "未来5天")]:
        found = asked(question)
        assert found is not None and canonical_hint(question, found) == hint


def test_evidence_lines_are_read_for_the_asked_day_only() -> None:
    assert speaks_of("明日多云，3~9℃", "tomorrow")
    assert not speaks_of("后天小雨，2~8℃", "tomorrow")
    assert not speaks_of("the day after tomorrow: rain", "tomorrow")
    assert speaks_of("Saturday showers, high 12C", "weekend")
    # Tonight is today's night: the daytime high does not speak of it, the overnight low does.
    assert not speaks_of("today cloudy, high 9C", "tonight")
    assert speaks_of("today cloudy, low 2C overnight", "tonight")
    assert names_another_day("昨天小雨，2~9℃", "today")
    assert not names_another_day("多云，12~19℃", "today")


def test_a_transposition_is_one_edit() -> None:
    assert distance("tomorow", "tomorrow") == 1
    assert distance("tomorrwo", "tomorrow") == 1
    assert distance("thursday", "tuesday") == 2
