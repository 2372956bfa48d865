"""What a line passes on from no one who could know is not so; a holiday's hours are that
holiday's; a bare name two firms or two provinces share is not guessed. The names here are
invented."""

from __future__ import annotations

from datetime import date

import pytest

from pmflow_gateway.contract.qualifiers import clash, clash_under
from pmflow_gateway.contract.relevance import firm_readings, off_topic, place_readings
from pmflow_gateway.contract.slots import Slot, asked_slot
from pmflow_gateway.contract.text import clean_sentence, split_sentences
from pmflow_gateway.contract.when import days_printed
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan, QueryKind
from tests.fakes import evidence

# ---------------------------------------------------------------- hearsay


@pytest.mark.parametrize(("question", "line"), [
    ("溯川中考报名啥时候截止", "家长群里都在传：因为系统升级，今年溯川中考报名延期至12月22日！"),
    ("岚舟S5啥时候开卖", "据经销商渠道消息，岚舟S5将于12月12日开售，起售价16.99万元。"),
    ("岚舟S5订单多少了", "有汽车博主发文称，岚舟S5发布后48小时内大定破3万台。"),
    ("岚舟S5订单多少了", "岚舟S5大定破3万台？官方未回应。"),
    ("when does winter break start for dunmore county schools",
     "Dunmore County schools will start winter break on Dec. 16, according to a parent who "
     "attended the meeting."),
    ("how many points for a first offense under the new law",
     "As passed by the House, a first offense would carry a $200 fine and three points."),
    ("how much is the orrin 4", "The Orrin 4 will cost $899, the company has not confirmed."),
])
def test_hearsay_is_not_what_is_so(question: str, line: str) -> None:
    assert clash(question, line) is not None


@pytest.mark.parametrize(("question", "line"), [
    # An official body passed it on: that is so.
    ("溯川现在的市长是谁", "据溯川市人大常委会消息，会议决定任命周立恒为溯川市代理市长。"),
    ("岚舟S5啥时候开卖", "岚舟汽车官方宣布，岚舟S5将于12月18日正式开售。"),
    ("is it true the orrin 4 costs $899", "A tipster says the Orrin 4 will cost $899."),
])
def test_a_source_that_could_know_or_a_question_about_the_rumour_keeps_the_line(
        question: str, line: str) -> None:
    assert clash(question, line) is None


def test_a_page_headed_as_an_exposé_or_as_unanswered_says_what_is_not_yet_so() -> None:
    question = "岚舟S5啥时候开卖"
    line = "岚舟S5将于12月12日开售。"
    assert clash_under(question, line, "曝岚舟S5将于12月12日开售") is not None
    assert clash_under(question, line, "岚舟S5开售日期曝光？官方未回应") is not None
    assert clash_under(question, line, "曝光率最高的新车岚舟S5：12月12日开售") is None


def test_a_price_with_a_trade_in_written_apart_is_a_deal() -> None:
    line = "Velto offers the Orrin 4 for $599 when you trade in an eligible phone."
    assert clash("how much does the orrin 4 start at", line) is not None
    assert clash("how much is the orrin 4 with a trade-in deal", line) is None


# ---------------------------------------------------------------- holidays


def test_a_holidays_hours_are_that_holidays() -> None:
    question = "hollin urgent care christmas day hours"
    assert asked_slot(question) is Slot.time
    assert clash(question, "The clinic will be open on Thanksgiving Day from 10 a.m.") is not None
    assert clash(question, "The clinic is open Sundays from 9 a.m. to 7 p.m.") is not None
    assert clash(question, "On Christmas Day the clinic is open 10 a.m. to 2 p.m.") is None
    assert clash("hollin urgent care sunday hours", "Open Sundays 9 a.m. to 7 p.m.") is None
    # 最新年报 is the latest annual report, not the new year (新年).
    assert clash("沃澜最新年报怎么样", "沃澜集团发布年度报告，全年营业收入812亿元。") is None


@pytest.mark.parametrize("question", [
    "is hollin urgent care open today, till when", "hollin urgent care weekend hours",
    "哈林诊所营业时间"])
def test_opening_hours_ask_a_time(question: str) -> None:
    assert asked_slot(question) is Slot.time


def test_hours_until_a_day_hold_every_day_until_then() -> None:
    question = "is hollin urgent care in dunmore open today, till when"  # asked on Wednesday
    plan = plan_by_rules(question, locale="en-US")
    page = evidence(
        "https://hollinhealth.example/news/winter-hours",
        "To help with flu season, Hollin Urgent Care in Dunmore extends its weekday hours. "
        "Through Jan. 31, 2027, the clinic will be open weekdays from 8 a.m. to 9 p.m. and "
        "Wednesdays until 10 p.m.",
        title="Extended winter hours at Dunmore urgent care")
    answer = compose_extractive(question, plan, [page]).answer
    assert "10 p.m." in answer


# ---------------------------------------------------------------- lines and levels


def test_a_time_zone_and_a_day_after_a_m_go_on_with_the_sentence() -> None:
    text = ("GLENNOCK, Pa. — Current air quality as of 3 a.m. EST Wednesday, Dec. 2: AQI 131, "
            "Unhealthy for Sensitive Groups. The main pollutant is PM2.5.")
    first = split_sentences(text)[0]
    assert "AQI 131" in first


def test_a_close_with_its_weekday_between_quotes_a_level() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.market, topic="vennick energy stock price",
                             subject_entities=["vennick energy"],
                             search_queries=["vennick energy stock price"])
    page = "Vennick Energy closes higher\nVennick Energy (VNKE) closed Friday at $41.07, up 2%."
    assert off_topic(plan, page) is None


# ---------------------------------------------------------------- namesakes


def test_two_firms_of_one_bare_name_are_not_guessed() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company, topic="tarrow q3 revenue",
                             subject_entities=["tarrow"], search_queries=["tarrow q3 revenue"])
    pages = ["Tarrow Marine Systems, the boat-electronics maker, reported revenue of $91 million.",
             "Tarrow Robotics Inc. today reported third-quarter revenue of $388 million."]
    readings = firm_readings(plan, pages)
    assert readings is not None and len(readings[1]) == 2
    zh = ExternalQueryPlan(query_kind=QueryKind.company, topic="沃澜三季度营收多少",
                           subject_entities=["沃澜"], search_queries=["沃澜三季度营收多少"])
    readings = firm_readings(zh, ["沃澜科技10月30日发布三季报，营收12.1亿元。",
                                  "沃澜电池公布三季报，第三季度营收88.5亿元。"])
    assert readings is not None and len(readings[1]) == 2


def test_one_firm_named_two_ways_is_one() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company, topic="tarrow q3 revenue",
                             subject_entities=["tarrow"], search_queries=["tarrow q3 revenue"])
    pages = ["Tarrow Robotics Inc. today reported third-quarter revenue of $388 million.",
             "Tarrow Robotics shares rose 4% after the report."]
    assert firm_readings(plan, pages) is None


def test_a_bare_chinese_name_two_provinces_share_is_asked_which() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.generic_web, topic="澜溪今天空气咋样",
                             subject_entities=["澜溪"], search_queries=["澜溪今天空气咋样"])
    pages = ["浙江省澜溪市生态环境监测中心发布：澜溪市区PM2.5浓度为80微克/立方米。",
             "四川省澜溪县环境监测站数据：县城PM2.5浓度为41微克/立方米。"]
    assert place_readings(plan, pages) == ["浙江省", "四川省"]
    assert place_readings(plan, pages[:1]) == []


@pytest.mark.parametrize(("question", "line"), [
    ("岚桐城际啥时候开通", "近日有网友在社交平台发帖称，岚溪至桐坪城际铁路将于12月18日通车。"),
    ("那二等座多少钱", "听证方案拟定：岚溪站至桐坪站二等座票价42元。"),
])
def test_a_post_or_a_hearing_proposal_is_not_what_is_so(question: str, line: str) -> None:
    assert clash(question, line) is not None


def test_a_headline_that_asks_and_passes_on_says_what_is_not_yet_so() -> None:
    title = "岚桐城际开通时间曝光？ 网传12月18日通车"
    assert clash_under("岚桐城际啥时候开通", "岚桐城际将于12月18日通车。", title) is not None


# ---------------------------------------------------------------- offices and their races


def test_an_election_question_asks_its_own_office() -> None:
    question = "who won the bexley county school board runoff"
    assert clash(question, "The board certified Dana Whitfield as the winner of the runoff "
                           "for the County Commission District 3 seat.") is not None
    assert clash(question, "Maria Ortiz won the Bexley County school board runoff.") is None
    # "mayoral" is the mayor's race
    assert clash("who won the pell city mayor runoff",
                 "Ray Dunn won the Pell City mayoral runoff Tuesday with 51.4%.") is None


def test_the_previous_survey_is_no_former_office_holder() -> None:
    assert clash("current average 30 yr fixed mortgage rate",
                 "The average rate on a 30-year fixed mortgage fell to 6.12%, down seven basis "
                 "points from the previous survey.") is None
    assert clash("who is the current coach of the ravens",
                 "The previous coach of the Ravens, Al Moss, now coaches in Ohio.") is not None


# ---------------------------------------------------------------- the latest report


def _published(item: ExternalEvidence, at: str) -> ExternalEvidence:
    return item.model_copy(update={"raw_metadata": {"published_at": at}})


def test_of_two_fresh_reports_of_one_figure_the_later_answers() -> None:
    question = "how many ppl still without power in kettle county iowa"
    plan = plan_by_rules(question, locale="en-US")
    older = _published(evidence(
        "https://prairie.example/outages-tuesday",
        "About 11,900 customers in Kettle County were without power at midday Tuesday after "
        "freezing rain coated lines.", title="Ice storm leaves 12,000 without power"),
        "2026-12-01T18:00:00+00:00")
    newer = _published(evidence(
        "https://prairie.example/outages-wednesday",
        "About 3,420 customers in Kettle County remained without power as of 7 a.m. "
        "Wednesday, a day after the ice storm.", title="Thousands still in the dark"),
        "2026-12-02T12:00:00+00:00")
    for items in ([older, newer], [newer, older]):
        answer = compose_extractive(question, plan, items).answer
        assert "3,420" in answer and "11,900" not in answer


def test_todays_close_asked_after_the_close_is_not_an_earlier_sessions() -> None:
    question = "恒岳电器今天收盘价"  # asked 16:00 in China on Wednesday 2 December
    plan = plan_by_rules(question, locale="zh-CN")
    earlier = _published(evidence("https://gu.example/1201", "恒岳电器（600123）收于23.47元。",
                                  title="12月1日收评"), "2026-12-01T07:30:00+00:00")
    today = _published(evidence("https://gu.example/1202", "恒岳电器（600123）收于22.81元。",
                                title="12月2日收评"), "2026-12-02T07:20:00+00:00")
    assert compose_extractive(question, plan, [earlier]).answer == ""
    assert "22.81元" in compose_extractive(question, plan, [earlier, today]).answer


# ---------------------------------------------------------------- lines, places, passing names


def test_a_time_and_its_weekday_go_on_with_the_sentence() -> None:
    assert split_sentences("Crews said 3,420 remained without power as of 7 a.m. Monday, two "
                           "days after the storm. More rain is due.")[0].endswith("storm.")
    assert split_sentences("We met at 9 a.m. Monday was a holiday.") == [
        "We met at 9 a.m.", "Monday was a holiday."]


def test_a_chinese_pages_opening_credit_is_no_part_of_its_sentence() -> None:
    assert clean_sentence("（湘中资讯 2026年12月6日 18:30）今天下午，桐坪一化工厂冒出浓烟。") == \
        "今天下午，桐坪一化工厂冒出浓烟。"


def test_some_areas_of_a_town_are_no_district_of_it() -> None:
    plan = plan_by_rules("秀川镇明天停水到几点", locale="zh-CN")
    page = "余岭县秀川镇部分区域12月3日计划停水\n因秀川镇水厂设备检修，12月3日9:00至16:30暂停供水。"
    assert off_topic(plan, page) is None


def test_a_name_with_its_ticker_named_only_in_passing_is_not_the_pages_subject() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company, topic="澜沧智能三季度净利润多少",
                             subject_entities=["澜沧智能 (301286)"],
                             search_queries=["澜沧智能三季度净利润多少"])
    page = ("澜沧科技三季度营收18.62亿元\n澜沧科技（688417）晚间披露三季报，归母净利润2.31亿元。"
            "公司称订单饱满。澜沧科技总部位于苏州，与深圳的澜沧智能无股权关系。")
    assert off_topic(plan, page) is not None


def test_a_town_and_its_state_after_in_are_one_place_in_any_question() -> None:
    assert plan_by_rules("how much is gas in larkmoor indiana today",
                         locale="en-US").location_hint == "larkmoor, indiana"
    assert plan_by_rules("acme energy texas revenue", locale="en-US").location_hint != (
        "acme energy texas")


def test_two_teams_of_one_nickname_are_not_guessed() -> None:
    plan = plan_by_rules("did the foxhawks win last night", locale="en-US")
    pages = ["The Sable Ridge College Foxhawks won their third straight game Sunday night.",
             "The Marrow Valley University Foxhawks fell 5-2 to St. Anselm on Sunday."]
    readings = firm_readings(plan, pages)
    assert readings is not None and len(readings[1]) == 2
    same = ["The Sable Ridge College Foxhawks won Sunday.", "Sable Ridge Foxhawks coach Al Moss"]
    assert firm_readings(plan, same) is None


# ---------------------------------------------------------------- what is none of these (review)


@pytest.mark.parametrize(("question", "line"), [
    ("15号线啥时候开通", "网友纷纷称赞，15号线于12月18日开通。"),
    ("15号线啥时候开通", "人群里传来阵阵欢呼声，15号线于12月18日开通。"),
    ("when does the library open", "Food bloggers lined up as the library opened at 9 a.m."),
    ("when does the law take effect",
     "The law, as passed by the Senate and signed by the governor, takes effect Jan. 1."),
    ("corvane stock price", "Corvane shares trade in New York at $231.40."),
    ("who is the mayor of pell city",
     "Mayor Pat Dunn, who was elected in 2021 and is now in her second year, spoke."),
    ("who won the mayoral race", "Dunn won the mayoral race, the county election commission said."),
])
def test_everyday_words_are_no_hearsay_deal_or_other_office(question: str, line: str) -> None:
    assert clash(question, line) is None


def test_an_official_answer_headed_as_a_question_is_no_hearsay() -> None:
    assert clash_under("15号线啥时候开通", "15号线12月18日开通。",
                       "15号线什么时候开通？官方回应：12月18日") is None


def test_holidays_of_one_name_are_told_apart() -> None:
    assert clash("is the bank open on new year's day",
                 "The bank is closed for Lunar New Year on Feb. 17.") is not None
    assert clash("christmas eve hours", "On Christmas Day the store is closed.") is not None


def test_counts_of_days_and_numbers_after_a_date_are_no_days() -> None:
    today = date(2026, 12, 7)
    assert days_printed("7日年化收益率2.1%", today) == set()
    assert days_printed("共 3 日", today) == set()
    assert days_printed("Dec. 7, 2000 customers lost power", today) == {date(2026, 12, 7)}
    # A bracketed date with no source before it is the rule's own date, kept.
    assert "2026年1月1日" in (clean_sentence("（自2026年1月1日起施行）新规规定需上牌。") or "")


def test_a_title_cased_headline_names_no_second_firm() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company, topic="corvane q3 revenue",
                             subject_entities=["corvane"], search_queries=["corvane q3 revenue"])
    pages = ["Corvane Completes Capital Raise\nCorvane Systems said it raised $40 million.",
             "Corvane Systems results\nCorvane Systems reported revenue of $91 million."]
    assert firm_readings(plan, pages) is None
