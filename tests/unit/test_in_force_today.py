"""A value set from a day on holds every day after it: asked of today, the last change made by
today answers, though another line prints today's date and this one an earlier day."""

from __future__ import annotations

from datetime import date

from pmflow_gateway.handlers.composers import Candidate, _in_force_today, _on_the_day

TODAY = date(2026, 12, 6)


def line(n: int, text: str, position: int = 0) -> Candidate:
    return Candidate(score=1.0, n=n, position=position, text=text, hits=1.0)


ADJUSTED = line(1, "根据调价通知，12月5日24时起，岑浦市92号汽油零售价调整为每升7.46元。")
EARLIER = line(2, "自11月21日起，岑浦市92号汽油零售价为每升7.61元。")
TODAYS = line(3, "12月6日上午，岑浦市第一人民医院急诊科平均候诊时间约为85分钟。")
COMING = line(4, "12月19日24时起，92号汽油每升将上调0.2元。")


def test_the_last_change_by_today_holds_today() -> None:
    assert _in_force_today([EARLIER, ADJUSTED, TODAYS, COMING], TODAY) == [ADJUSTED]
    assert ADJUSTED in _on_the_day([EARLIER, ADJUSTED, TODAYS, COMING], "today", {}, TODAY)


def test_a_change_still_to_come_does_not() -> None:
    assert _in_force_today([COMING], TODAY) == []
    assert COMING not in _on_the_day([COMING, TODAYS], "today", {}, TODAY)


def test_a_line_of_another_day_without_a_start_still_does_not() -> None:
    yesterday = line(5, "12月5日，岑浦市92号汽油零售价为每升7.61元。")
    assert _on_the_day([yesterday, TODAYS], "today", {}, TODAY) == [TODAYS]


MARKET_WRAP = [line(1, "Market wrap — Thursday, Dec. 3, 2026, 5:05 p.m. EST.", 0),
               line(1, "Veltrino Labs (VLTR) closed at $48.17, down 5.6%.", 1),
               line(1, "The broad market index finished up 0.4%.", 2),
               line(1, "The shares had closed at $51.02 on Wednesday.", 3)]


def test_a_page_dated_today_dates_its_lines_about_what_was_asked() -> None:
    chosen = _on_the_day(MARKET_WRAP, "today", {}, date(2026, 12, 3), ("Veltrino Labs",))
    assert [c.text for c in chosen] == [MARKET_WRAP[0].text, MARKET_WRAP[1].text]


def test_a_line_that_prints_only_another_date_is_not_todays() -> None:
    yesterday = line(1, "12月3日A股收盘，鸿屹电子报23.46元，上涨2.10%。")
    undated = line(3, "鸿屹电子主营车规级功率模块。")
    assert _on_the_day([yesterday, undated], "today", {}, date(2026, 12, 4)) == [undated]
    # A span of days that holds today is today's.
    week = line(2, "12月1日至12月7日，鸿屹电子暂停回购。")
    assert _on_the_day([yesterday, week], "today", {}, date(2026, 12, 4)) == [week]
