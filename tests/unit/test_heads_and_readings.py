"""What a question asks of, read without a list: a Chinese name no list knows at the head of a
question, the thing whose price is asked, next week's weekday, a year named by its distance
from now; and which firm, line, award, year or claim a page's line is about. The names here
are invented."""

from __future__ import annotations

from datetime import date

import pytest

from pmflow_gateway.contract.lexicon import unknown_chinese_head
from pmflow_gateway.contract.qualifiers import (
    clash,
    mentions_thing,
    priced_things,
)
from pmflow_gateway.contract.relevance import about_another, firm_readings, names
from pmflow_gateway.contract.scoring import LATEST_WINDOW, TODAY_WINDOW, freshness_window
from pmflow_gateway.contract.statuses import firm_ambiguity_reason, which_one
from pmflow_gateway.contract.text import split_sentences
from pmflow_gateway.contract.when import asked, day_offset, offsets_spoken_of
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from tests.fakes import evidence

TUESDAY = date(2026, 11, 24)

# ---------------------------------------------------------------- a name no list knows


@pytest.mark.parametrize(("question", "head"), [
    ("岑湾电动车不戴头盔罚多少钱", "岑湾"),
    ("砾汀地铁6号线什么时候开通", "砾汀"),
    ("霁和地铁几点停运", "霁和"),  # 和 ends a name of two, and joins nothing
    ("澜汀湾马拉松什么时候报名", "澜汀湾"),
])
def test_the_head_no_everyday_word_covers_is_a_name(question: str, head: str) -> None:
    assert unknown_chinese_head(question) == head
    assert head in plan_by_rules(question, locale="zh-CN").subject_entities


@pytest.mark.parametrize("question", ["今天天气怎么样", "能坐几公里", "那它的股价呢", "我和你",
                                      "展到什么时候"])
def test_everyday_words_and_common_characters_are_no_name(question: str) -> None:
    assert plan_by_rules(question, locale="zh-CN").subject_entities == []


# ---------------------------------------------------------------- the thing priced


def test_the_thing_priced_is_what_the_question_names_beside_the_price() -> None:
    assert priced_things("岑湾今天猪肉多少钱一斤", ("岑湾",)) == ("猪肉",)
    assert priced_things("petrol price in marrow bay today", ("marrow", "bay")) == ("petro",)
    # Only the kind of value: nothing to check.
    assert priced_things("AAPL share price today", ("AAPL",)) == ()
    assert priced_things("琅澄阁今天金价", ("琅澄阁",)) == ()
    assert priced_things("澜屿新能源上个季度营收多少", ("澜屿新能源",)) == ()


def test_a_page_must_name_the_thing_priced() -> None:
    things = ("猪肉",)
    assert not mentions_thing("岑湾灯会门票公布：日场票80元，夜场票120元。", things)
    assert mentions_thing("岑湾价格监测：猪肉零售均价每斤26.8元。", things)
    assert not mentions_thing("岑湾价格监测：牛肉零售均价每斤42元。", things)  # beef is not pork
    assert mentions_thing("Pork is $4.10 a pound.", things)  # another script cannot tell


def test_a_price_asked_is_not_answered_by_another_things_prices() -> None:
    question = "岑湾今天猪肉多少钱一斤"
    plan = plan_by_rules(question, locale="zh-CN")
    fair = evidence("https://fair.example/2026",
                    "2026岑湾灯会12月5日开幕，日场票80元，夜场票120元。",
                    title="岑湾灯会门票价格公布")
    assert compose_extractive(question, plan, [fair]).answer == ""
    market = evidence("https://price.example/1", "岑湾市价格监测显示，猪肉零售均价为每斤26.8元。",
                      title="岑湾市场价格监测")
    assert "26.8元" in compose_extractive(question, plan, [fair, market]).answer


# ---------------------------------------------------------------- freshness of a figure today


def test_a_figure_asked_for_today_is_this_weeks() -> None:
    assert freshness_window(plan_by_rules("岑湾今天猪肉多少钱一斤", locale="zh-CN")) == TODAY_WINDOW
    assert freshness_window(plan_by_rules("petrol price in marrow bay today")) == TODAY_WINDOW
    # A rate in force is asked "right now" and stays until it changes.
    plan = plan_by_rules("What is the Bank of Quarrel's latest policy rate right now?")
    assert freshness_window(plan) == LATEST_WINDOW


# ---------------------------------------------------------------- days and years


def test_next_weeks_weekday_is_not_this_weeks() -> None:
    assert asked("岑湾下周三天气").day == "next_wed"
    assert day_offset("next_wed", TUESDAY) == 8
    assert day_offset("wed", TUESDAY) == 1
    assert offsets_spoken_of("周三有小雨。", TUESDAY, 0) == {1}
    assert offsets_spoken_of("下周三有小雨。", TUESDAY, 0) == {8}
    # A page written yesterday (Monday) means the same Wednesday.
    assert offsets_spoken_of("下周三有小雨。", TUESDAY, 1) == {8}


def test_next_weeks_weather_is_a_period_and_sunday_is_no_weather_word() -> None:
    assert asked("下周天气").day == "period"
    assert asked("周天天气").day == "sun"


def test_a_year_named_by_its_distance_from_now_excludes_another_year() -> None:
    question = "岑湾明年中考什么时候报名"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://edu.example/2027", "2026年中考网上报名于12月4日开始。"
                    "岑湾市2027年初中学业水平考试网上报名时间为12月7日至12月18日。",
                    title="岑湾2027年中考报名通知")
    answer = compose_extractive(question, plan, [page]).answer
    assert "12月7日" in answer
    assert "12月4日" not in answer


def test_a_line_about_the_same_period_last_year_is_not_this_years() -> None:
    question = "棠溪科技第三季度营收多少"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://fin.example/q3", "去年同期，公司第三季度营收为41.20亿元。"
                    "公司第三季度实现营业收入48.62亿元，同比增长18%。",
                    title="棠溪科技三季度营收同比增长18%")
    answer = compose_extractive(question, plan, [page]).answer
    assert "48.62亿元" in answer
    assert "41.20亿元" not in answer


# ---------------------------------------------------------------- which firm, line, award


def test_a_firm_said_to_be_unrelated_is_another() -> None:
    plan = plan_by_rules("棠溪科技第三季度营收多少", locale="zh-CN")
    assert about_another(plan, "棠溪电气（与棠溪科技无股权关系）披露三季报，营收19.07亿元。")
    assert not about_another(plan, "棠溪科技与棠溪电气签署合作协议。")


def test_a_bare_name_read_as_two_firms_is_asked_back() -> None:
    plan = plan_by_rules("how much did quarlow make last quarter")
    texts = ["Quarlow Systems reported third-quarter revenue of $412.6 million.",
             "Quarlow Logistics posted quarterly revenue of $96 million."]
    assert firm_readings(plan, texts) == ("quarlow", ["Quarlow Systems", "Quarlow Logistics"])
    assert firm_readings(plan, texts[:1]) is None
    # The kind written after a lower-case name is the name's.
    assert plan_by_rules("quarlow systems q3 revenue").subject_entities == ["quarlow systems"]
    zh = plan_by_rules("棠溪三季度营收多少", locale="zh-CN")
    found = firm_readings(zh, ["棠溪科技营收48.62亿元。", "棠溪电气营收19.07亿元。"])
    assert found == ("棠溪", ["棠溪科技", "棠溪电气"])
    assert which_one(firm_ambiguity_reason(*found), english=False) == (
        "指的是哪个棠溪（棠溪科技 还是 棠溪电气）")
    # A place's figures are no firm's: 棠溪银行 and 棠溪集团 do not make a price ambiguous.
    assert firm_readings(plan_by_rules("棠溪今天猪肉多少钱", locale="zh-CN"),
                         ["棠溪银行公告。", "棠溪集团公告。"]) is None


@pytest.mark.parametrize(("question", "line"), [
    ("is the quarl line running this weekend", "The Heron Line is unaffected this weekend."),
    ("金槭电影节今年最佳男配角是谁", "最佳男主角奖由《雾港》主演唐屹获得。"),
    ("who won best supporting actress at the Quarl awards", "Best Actress went to Ida Venn."),
])
def test_another_named_line_or_award_does_not_answer(question: str, line: str) -> None:
    assert clash(question, line) is not None


@pytest.mark.parametrize(("question", "line"), [
    ("is the quarl line running this weekend", "No Quarl Line trams will run on Saturday."),
    ("metro line 3 closures", "Metro Line 3 is closed between two stops."),
    ("what is the bottom line on the Quarl Line fares", "Quarl Line fares rise 5%."),
    ("金槭电影节最佳导演是谁", "最佳导演奖由林澈获得，最佳男主角为唐屹。"),
])
def test_the_asked_line_or_award_answers(question: str, line: str) -> None:
    assert clash(question, line) is None


def test_a_deal_reported_by_people_familiar_is_no_fact() -> None:
    question = "how much is quarlow paying for brenmoor bakeries"
    assert clash(question, "The deal would value Brenmoor at about $1.2 billion, "
                                 "according to people familiar with the matter.")
    assert clash(question, "Quarlow is in advanced talks to buy Brenmoor.")
    assert clash("岑湾地铁票价", "知情人士透露，票价将上调至3元。")
    assert clash(question, "Quarlow confirmed it will pay $1.2 billion for Brenmoor.") is None


def test_a_name_ends_at_its_suffix_and_common_characters_after_it_are_words() -> None:
    assert unknown_chinese_head("青港队签奥卡福花了多少转会费") == "青港"
    assert unknown_chinese_head("北坪白条猪批发价现在多少一公斤") == "北坪"


def test_a_long_head_that_starts_with_a_surname_is_a_person_and_a_place() -> None:
    plan = plan_by_rules("林澄夏霁汀演唱会什么时候开票", locale="zh-CN")
    assert plan.subject_entities == ["林澄夏", "霁汀"]


def test_a_dot_inside_a_chinese_name_parts_nothing() -> None:
    assert names("山汐归途", "电影《山汐·归途》累计票房突破8.6亿元")
    assert names("埃隆澄克", "埃隆·澄克表示")
    assert not names("山汐归途", "电影《山汐》累计票房突破8.6亿元")


def test_a_line_about_a_person_the_question_did_not_name_comes_last() -> None:
    question = "韩澄峥被判了几年"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://court.example/1", "法院数罪并罚，判处韩澄峥有期徒刑十二年。"
                    "同案被告人、该公司原财务总监祁慧澄被判处有期徒刑五年。",
                    title="澄湾港航实业原董事长韩澄峥一审获刑")
    answer = compose_extractive(question, plan, [page]).answer
    assert "十二年" in answer
    # A party is no person: what it won is its own line.
    seats = plan_by_rules("南汐大选民生联盟拿了多少席", locale="zh-CN")
    page = evidence("https://vote.example/1", "南汐国12月5日举行议会选举。"
                    "初步计票结果显示，民生联盟在总计120个议席中获得67席。",
                    title="南汐议会选举初步结果")
    assert "67席" in compose_extractive("南汐大选民生联盟拿了多少席", seats, [page]).answer


@pytest.mark.parametrize(("question", "line"), [
    ("how much is the quarl phone 9 pro",
     "The carrier will cut the Quarl Phone 9 Pro to $899 with an eligible trade-in."),
    ("澄澜X5 Pro多少钱", "据电商平台预告，澄澜X5 Pro首日叠加优惠券后到手价为4599元。"),
    ("What's the average price of premium gasoline in Quarlbury this week?",
     "The average price of gasoline in Quarlbury fell to $3.07 a gallon this week."),
    ("final certified vote share for ida quarl in fernholt",
     "Quarl leads Venn with 51.8% of the vote after election night."),
])
def test_a_deal_an_unmarked_grade_or_an_early_count_does_not_answer(question: str,
                                                                     line: str) -> None:
    assert clash(question, line) is not None


@pytest.mark.parametrize(("question", "line"), [
    ("how much is the quarl phone 9 pro", "The Quarl Phone 9 Pro starts at $1,099."),
    ("quarl phone 9 pro trade-in deal", "It drops to $899 with an eligible trade-in."),
    ("What's the average price of premium gasoline in Quarlbury this week?",
     "Premium gasoline averaged $3.89 a gallon."),
    ("final certified vote share for ida quarl in fernholt",
     "Certified results show Quarl won 52.4% of the vote."),
    ("how much is quarlow paying for brenmoor bakeries",
     "Quarlow agreed to pay $1.2 billion for Brenmoor, the companies announced."),
])
def test_the_asked_kind_of_price_grade_or_count_answers(question: str, line: str) -> None:
    assert clash(question, line) is None


def test_a_value_asked_per_unit_is_one_per_that_unit() -> None:
    question = "how much will quarl valley electric charge per kwh from december"
    plan = plan_by_rules(question)
    page = evidence("https://utility.example/1", "Regulators approved the Quarl Valley "
                    "Electric rate increase. A typical home using 900 kWh a month will pay about "
                    "$11.70 more. The new rate is 18.4 cents per kilowatt-hour from December 1.",
                    title="Regulators approve Quarl Valley Electric rate increase")
    answer = compose_extractive(question, plan, [page]).answer
    assert "18.4 cents" in answer
    assert "$11.70" not in answer


def test_a_line_that_announces_a_list_states_nothing() -> None:
    question = "澄汀图书馆元旦当天开门吗"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://lib.example/1", "澄汀图书馆2027年元旦假期开放时间安排如下。"
                    "1月1日闭馆，1月2日至1月3日正常开放。",
                    title="澄汀图书馆2027年元旦假期开放安排")
    assert "如下" not in compose_extractive(question, plan, [page]).answer


def test_last_month_is_the_month_before_today() -> None:
    question = "2 bed rent quarlfield last month"
    plan = plan_by_rules(question)
    # The evidence was retrieved on 2 December: last month is November.
    early = evidence("https://homes.example/dec", "An early read of December listings shows "
                     "the median asking rent for a two-bedroom apartment in Quarlfield at $1,371.",
                     title="Early December read: Quarlfield rents keep softening")
    november = evidence("https://homes.example/nov", "The median asking rent for a two-bedroom "
                        "apartment in Quarlfield was $1,385 in November.",
                        title="Quarlfield rents ease in November")
    answer = compose_extractive(question, plan, [early, november]).answer
    assert "$1,385" in answer
    assert "$1,371" not in answer


def test_a_time_keeps_its_zone_and_a_dateline_states_nothing() -> None:
    text = ("Cash bids at Quarl Co-op as of 9:30 a.m. Central, Friday, November 27. "
            "Corn was bid at $4.12 a bushel. Doors open at 9 a.m. The show starts at 8 p.m.")
    assert split_sentences(text) == [
        "Cash bids at Quarl Co-op as of 9:30 a.m. Central, Friday, November 27.",
        "Corn was bid at $4.12 a bushel.", "Doors open at 9 a.m.", "The show starts at 8 p.m."]
    question = "quarl co-op corn bid"
    plan = plan_by_rules(question)
    page = evidence("https://grain.example/1", "Central, Friday, November 27.",
                    title="Cash grain bids - Quarl Co-op")
    assert compose_extractive(question, plan, [page]).answer == ""


@pytest.mark.parametrize(("question", "line"), [
    ("2 bed rent quarlfield last month", "One-bedroom units had a median rent of $1,120."),
    ("岑湾两居室租金多少", "一居室平均租金2100元。"),
    ("quarl ridge regular decision acceptance rate",
     "Quarl Ridge released early decision results, admitting 14.2% of applicants."),
])
def test_another_home_size_or_admissions_round_does_not_answer(question: str, line: str) -> None:
    assert clash(question, line) is not None


# ---------------------------------------------------------------- what the rules leave alone


@pytest.mark.parametrize(("question", "names"), [
    ("祁澄峰被判了几年", ["祁澄峰"]),  # a person's name is whole, never 祁澄
    ("想问下岑湾电动车罚多少", ["岑湾"]),  # a filler is no name
    ("韩雪澄州演唱会门票", ["韩雪", "澄州"]),
])
def test_a_person_is_whole_and_a_filler_no_name(question: str, names: list[str]) -> None:
    assert plan_by_rules(question, locale="zh-CN").subject_entities == names


def test_a_day_of_the_month_is_no_crafts_number_and_tianjin_no_sunday() -> None:
    assert plan_by_rules("上海十五号有雨吗", locale="zh-CN").location_hint == "上海"
    assert plan_by_rules("这个月二十号发工资吗", locale="zh-CN").subject_entities == []
    assert asked("下周天津天气怎么样").day == "period"


@pytest.mark.parametrize(("question", "line"), [
    ("What was the final result of the Quarl derby?",
     "Quarl Rovers beat Harlow 2-1 after going ahead in the 20th minute."),
    ("What were the official results of the Quarl mayoral election?",
     "Ida Venn won with 51.8% of the vote, finishing ahead of Lee Keane."),
    ("How much is an adult ticket to Quarl Zoo?",
     "Adult tickets cost $25, and discounts are available for groups."),
    ("岑湾今天猪肉多少钱一斤", "受节日需求叠加影响，岑湾猪肉零售均价涨至每斤26.8元。"),
    ("Who is the president and CEO of Quarlow?",
     "Ida Venn, Quarlow's chief executive, said revenue rose."),
    ("Who won the Quarl Grand Prix and who took pole?", "Ida Venn won the Quarl Grand Prix."),
    ("Is the Quarl Line running this weekend?",
     "Engineering work will close the whole line this weekend."),
    ("When does Line 6 open?", "The rail line opens on December 28."),
    ("Is the Quarl Line strike still on?",
     "Unions and management remain in talks, and the strike continues on Friday."),
    ("What is the average rent for a 2 bedroom in Quarlbury?",
     "Rents for two- and three-bedroom homes rose 4% to $2,100 and $2,600."),
])
def test_ordinary_lines_meet_no_new_dimension(question: str, line: str) -> None:
    assert clash(question, line) is None


def test_a_comparison_with_last_year_or_month_asks_of_now() -> None:
    question = "岑湾今年高考报名人数比去年多多少"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://edu.example/2026",
                    "岑湾2026年高考报名人数为5.2万人，比去年增加3000人。"
                    "2025年岑湾高考报名人数为4.9万人。", title="岑湾2026年高考报名人数公布")
    assert "3000人" in compose_extractive(question, plan, [page]).answer


def test_per_unit_below_and_a_bare_date_are_read_as_meant() -> None:
    question = "How much is diesel per gallon in Quarlbury?"
    page = evidence("https://fuel.example/1", "Diesel in Quarlbury averaged $4.10/gal on Tuesday.",
                    title="Quarlbury fuel prices")
    assert "$4.10" in compose_extractive(question, plan_by_rules(question), [page]).answer
    question = "岑湾金枫山儿童免票身高标准是多少"
    page = evidence("https://park.example/1", "岑湾金枫山景区儿童免票标准为身高1.2米以下。",
                    title="岑湾金枫山景区门票优惠政策")
    assert "1.2米" in compose_extractive(question, plan_by_rules(question, locale="zh-CN"),
                                        [page]).answer
    question = "When is the Quarl Marathon?"
    page = evidence("https://run.example/1", "The Quarl Marathon 2026 date is set. Sunday, "
                    "October 12.", title="Quarl Marathon 2026")
    assert "October 12" in compose_extractive(question, plan_by_rules(question), [page]).answer


def test_a_firm_is_read_where_a_page_writes_one() -> None:
    plan = plan_by_rules("What was Quarlow's revenue last quarter?")
    assert firm_readings(plan, ["Quarlow Systems reported revenue of $412 million. "
                                "Quarlow capital spending rose."]) is None
    zh = plan_by_rules("棠溪最新财报营收多少", locale="zh-CN")
    assert firm_readings(zh, ["棠溪汽车发布三季度财报。棠溪智能驾驶系统获奖。",
                              "棠溪建设的新工厂开工。"]) is None
    assert plan_by_rules("quarlow capital expenditure 2026").subject_entities == ["quarlow"]


def test_a_standing_figure_asked_for_today_keeps_its_kinds_window() -> None:
    plan = plan_by_rules("岑湾今天最低工资标准是多少", locale="zh-CN")
    assert freshness_window(plan) > TODAY_WINDOW
