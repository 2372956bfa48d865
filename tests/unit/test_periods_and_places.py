"""A period's results come after it ends; a snow emergency is a town's rule, not the weather;
netizens' posts are hearsay. The names here are invented."""

from __future__ import annotations

from datetime import date

import pytest

from pmflow_gateway.contract.qualifiers import clash, period_not_over
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from pmflow_gateway.schemas import QueryKind
from tests.fakes import evidence

DECEMBER = date(2026, 12, 2)

# ---------------------------------------------------------------- a period not over


@pytest.mark.parametrize(("question", "not_over"), [
    ("澜川科技2026年全年净利润多少", True),
    ("澜川科技今年净利润多少", True),
    ("澜川科技2026财年净利润多少", True),  # a Chinese company's fiscal year is the calendar's
    ("澜川科技2026年第四季度营收", True),
    ("澜川科技2027年全年营收", True),
    ("澜川科技2025年全年净利润多少", False),
    ("澜川科技2026年第三季度营收", False),
    ("澜川科技今年前三季度营收", False),
    ("澜川科技今年以来累计营收", False),
    ("2026年1-10月全国规模以上工业企业利润", False),
    ("澜川科技2026年11月营收", False),
    ("2026年双十一天猫销售额多少", False),  # a bare year: a day's total
    ("澜川科技2027年营收目标", False),
    ("澜川科技营收", False),  # no period named: the latest reported
    # A company elsewhere may keep a fiscal year whose labels do not follow the calendar.
    ("what was varrow bioscience's 2026 full-year revenue", False),
    ("varrow bioscience q4 2026 revenue", False),
])
def test_a_period_is_over_only_once_it_ends(question: str, not_over: bool) -> None:
    assert period_not_over(question, DECEMBER) is not_over


def test_a_year_still_running_has_no_reported_result_only_forecasts() -> None:
    forecast = evidence("https://yanbao.example/lanchuan-2026",
                        "我们预测公司2026-2028年营收分别为28.1、33.6、39.0亿元。归母净利润4.35亿元。",
                        title="澜川科技深度报告：维持买入评级")
    question = "澜川科技2026年全年净利润多少"
    draft = compose_extractive(question, plan_by_rules(question, locale="zh-CN"), [forecast])
    assert draft.answer == "" and "not ended" in (draft.note or "")
    # Asked for the forecast, the forecast answers; a year that is over is answered.
    asked = "澜川科技2026年净利润预计多少"
    assert "not ended" not in (compose_extractive(
        asked, plan_by_rules(asked, locale="zh-CN"), [forecast]).note or "")
    reported = evidence("https://ir.example/lanchuan-2025",
                        "澜川科技2025年实现归母净利润3.12亿元，同比增长18%。",
                        title="澜川科技2025年年度报告摘要")
    last_year = "澜川科技2025年全年净利润多少"
    assert "3.12亿元" in compose_extractive(
        last_year, plan_by_rules(last_year, locale="zh-CN"), [reported]).answer


# ---------------------------------------------------------------- what kind of question


def test_the_high_asked_as_people_type_it_is_the_days_temperature() -> None:
    assert plan_by_rules("whats the high gonna be in pellston ridge or today",
                         locale="en-US").query_kind is QueryKind.weather
    assert plan_by_rules("what will the low be for tonight in pellston ridge",
                         locale="en-US").query_kind is QueryKind.weather


@pytest.mark.parametrize("question", [
    "did dunmore raise the snow emergency parking fine? how much is it",
    "when does the snow route ban start in dunmore",
    "who pays for the storm drain repairs on elm st in dunmore",
])
def test_a_towns_snow_and_storm_rules_are_not_the_weather(question: str) -> None:
    assert plan_by_rules(question, locale="en-US").query_kind is not QueryKind.weather


def test_snow_itself_is_still_the_weather() -> None:
    for question in ("will it snow in dunmore tomorrow", "how much snow did dunmore get"):
        assert plan_by_rules(question, locale="en-US").query_kind is QueryKind.weather


# ---------------------------------------------------------------- hearsay


def test_what_netizens_post_is_hearsay() -> None:
    question = "衡溪下周一停课吗"
    assert clash(question, "今晚，有网民在社交平台发布“衡溪市中小学12月14日至16日停课三天”的消息。")
    assert clash(question, "网民称赞学校的应急预案很周到。") is None
    assert clash(question, "市教育局回复网民称：下周一正常上课。") is None
    assert clash(question, "针对网民关注的停课问题，市教育局发布通知：正常上课。") is None
    assert clash(question, "市教育局在官方社交平台发布通知：12月14日全市中小学正常上课。") is None


# ---------------------------------------------------------------- towns and their states


def test_a_news_datelines_state_abbreviation_is_the_state() -> None:
    from pmflow_gateway.contract.places import region_after
    from pmflow_gateway.contract.relevance import names

    for text, state in (("QUARRY, Tenn. — Crews", "Tennessee"), ("Quarry, Minn. said", "Minnesota"),
                        ("QUARRY, Calif. —", "California"), ("Quarry, Kan. —", "Kansas")):
        found = region_after(text, text.index(","))
        assert found is not None and [p.en[0] for p in found[1]] == [state]
    assert region_after("Quarry, Ind", 6) is None or all(  # no dot: not the abbreviation
        p.en[0] != "Indiana" for p in region_after("Quarry, Ind", 6)[1])
    page = "HARLOW GAP, Minn. — Updated 8:45 a.m. CT Saturday. Today: sunny, high of 18°F."
    assert names("harlow gap, mn", page) and not names("harlow gap, tn", page)


@pytest.mark.parametrize(("question", "place"), [
    ("whats the sales tax rate in cedar knoll hollow", "cedar knoll hollow"),
    ("trash pickup christmas week in brindle park nm", "brindle park, nm"),
    ("whats the weather in tanner creek tomorrow", "tanner creek"),
    ("how much is gas in tanner creek right now", "tanner creek"),
])
def test_a_town_typed_in_lower_case_at_the_end_of_a_question_is_the_place(
        question: str, place: str) -> None:
    assert plan_by_rules(question, locale="en-US").location_hint == place


@pytest.mark.parametrize("question", [
    "best pizza in high school", "when does the pool open in real time",
    "what time will water come back on in thistlecombe town centre today",
    "gas price in the city"])
def test_words_after_in_that_no_town_is_named_with_stay_words(question: str) -> None:
    location = plan_by_rules(question, locale="en-US").location_hint or ""
    assert "," not in location and location not in ("high school", "real time", "the city")


def test_two_states_letterheads_make_a_bare_town_ambiguous() -> None:
    from pmflow_gateway.contract.relevance import place_readings

    plan = plan_by_rules("whats the sales tax rate in cedar knoll hollow", locale="en-US")
    pages = ["CEDAR KNOLL HOLLOW, Tenn. — The aldermen kept the local rate at 2.5%.",
             "CEDAR KNOLL HOLLOW CITY, UTAH · FINANCE DEPARTMENT. The combined rate is 7.35%."]
    assert len(place_readings(plan, pages)) == 2


def test_a_notices_own_county_tells_two_towns_of_one_name_apart() -> None:
    from pmflow_gateway.contract.relevance import place_readings

    plan = plan_by_rules("青禾湾停水到几点啊", locale="zh-CN")
    pages = ["关于青禾湾镇部分区域停水的公告\n广东省南渚县供水有限公司公告：因管道迁改，"
             "12月14日9:00至21:00，青禾湾镇墟、沙头村将暂停供水。",
             "青禾湾镇停水通知\n江苏省临溆县青禾湾自来水厂通知：12月13日8:00至18:00暂停供水。"]
    assert sorted(place_readings(plan, pages)) == ["临溆县", "南渚县"]


def test_a_notice_reads_as_its_county_not_a_neighbour_or_its_city() -> None:
    from pmflow_gateway.contract.relevance import place_readings

    plan = plan_by_rules("青禾湾停水到几点啊", locale="zh-CN")
    one_town = ["广东省临屿市南渚县供水有限公司公告：因管道迁改，12月14日青禾湾镇墟暂停供水。",
                "南渚县青禾湾镇停水通知：12月14日9:00至21:00暂停供水。"]
    assert place_readings(plan, one_town) == []
    neighbour = ["江西省南渚县融媒体中心讯：受寒潮影响，相邻的青禾湾镇12月14日停水。",
                 "东溆县青禾湾镇停水通知：12月14日暂停供水。"]
    assert place_readings(plan, neighbour) == []


def test_a_notices_county_is_read_in_one_pass() -> None:
    from pmflow_gateway.contract.relevance import place_readings

    # 3,000 mentions in one sentence: read once, not once per mention (that took 9 s on a
    # page of 30,000 characters).
    plan = plan_by_rules("青禾湾停水到几点啊", locale="zh-CN")
    page = "广东省南渚县" + "，".join(f"青禾湾镇第{i}村" for i in range(3000))
    assert sorted(place_readings(plan, [page, page.replace("南渚", "临溆")])) == [
        "临溆县", "南渚县"]


def test_a_county_or_a_township_after_a_comma_is_no_state() -> None:
    from pmflow_gateway.contract.places import region_after

    for text in ("Harlow Gap, Del. County", "Harlow Gap, Wash. Twp.", "the end, ill. and"):
        found = region_after(text, text.index(","))
        assert found is None or all(p.country != "US" or p.en[0] not in (
            "Delaware", "Washington", "Illinois") for p in found[1])


@pytest.mark.parametrize("question", [
    "average rent in capital city", "parking rates in down town", "fees at the state park",
    "ticket prices at theme park", "what was the high for halvora stock today"])
def test_a_generic_place_or_a_markets_high_is_no_town_and_no_weather(question: str) -> None:
    plan = plan_by_rules(question, locale="en-US")
    assert plan.location_hint is None or plan.location_hint.split()[0] not in (
        "capital", "down", "state", "theme")
    assert plan.query_kind is not QueryKind.weather


# ---------------------------------------------------------------- hostile text


def test_a_run_of_digits_or_spaces_is_read_as_quickly_as_any_text() -> None:
    from pmflow_gateway.contract.qualifiers import asked_clause
    from pmflow_gateway.contract.relevance import _forecast_place
    from pmflow_gateway.contract.salience import is_weather_line
    from pmflow_gateway.contract.slots import Slot, fills

    # Each of these took seconds (a number tried from every digit of its run; a title's
    # spaces split every way): pinned, so that a pattern that goes back to it shows.
    for text in ("1" * 4000, "1." * 2000, "一" * 4000, "12 " * 1300):
        assert fills(Slot.amount, text, ()) is False
        assert fills(Slot.duration, text, ()) is False
        assert is_weather_line(text) is False
        assert asked_clause("how much is the day pass", text) is None
    assert _forecast_place(" " * 400 + "x") is None


def test_a_number_is_read_whole_from_its_first_digit() -> None:
    from pmflow_gateway.contract.slots import Slot, fills

    assert fills(Slot.amount, "票价为1,250元", ())
    assert fills(Slot.amount, "The fare is $2.50.", ())
    assert fills(Slot.amount, "营收达12.6亿元", ())
