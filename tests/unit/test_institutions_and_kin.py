"""Which institution, which firm of a family, which numbered line or model, and which stage of
a rule a page's line is about: a school or hospital no list knows, namesake schools told apart
by their county, a subsidiary or a rival named beside the asked firm, 3号线 against 5号线, a
draft against a law in force. The names here are invented."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.metrics import other_figure
from pmflow_gateway.contract.qualifiers import (
    asked_clause,
    clash,
    clash_under,
    possessed_words,
    topic_words,
)
from pmflow_gateway.contract.relevance import (
    about_another,
    asks_a_level,
    names_something_else,
    off_topic,
    place_readings,
)
from pmflow_gateway.contract.slots import Slot, asked_slot, unit_asked
from pmflow_gateway.contract.variants import only_variants
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import follow_up_question, plan_by_rules
from pmflow_gateway.handlers.planners.words import find_names
from pmflow_gateway.schemas import QueryKind
from tests.fakes import evidence

# ---------------------------------------------------------------- institutions


@pytest.mark.parametrize(("question", "name"), [
    ("澜坪市妇幼保健院今天挂号要等多久", "澜坪市妇幼保健院"),
    ("我想知道明天青苇中学放假吗", "青苇中学"),
    ("泊川协和医院几点开门", "泊川协和医院"),  # 和 is the name's own
    ("雁汀机场P3停车场一天多少钱", "雁汀机场"),
])
def test_a_chinese_institution_is_asked_by_its_whole_name(question: str, name: str) -> None:
    assert name in [s.text for s in find_names(question, question, zh=True)]


def test_a_weather_question_keeps_its_place_not_an_airport() -> None:
    question = "广州白云机场明天天气"
    assert "广州白云机场" not in [s.text for s in find_names(question, question, zh=True)]


def test_namesake_schools_are_told_apart_by_the_county_before_them() -> None:
    plan = plan_by_rules("青苇中学寒假哪天开始", locale="zh-CN")
    texts = ["浙江省岱山县青苇中学发布通知，寒假自1月22日开始。",
             "四川省砚石县青苇中学寒假将于1月16日开始。"]
    assert place_readings(plan, texts) == ["岱山县", "砚石县"]
    assert place_readings(plan, [texts[0], "青苇中学寒假将于1月16日开始。"]) == []


def test_a_hospital_named_in_passing_on_a_page_about_another_is_not_the_answer() -> None:
    plan = plan_by_rules("澜坪市妇幼保健院今天挂号要等多久", locale="zh-CN")
    assert plan.subject_entities == ["澜坪市妇幼保健院"]
    assert off_topic(plan, "全市医院候诊一览\n澜坪市第二人民医院急诊平均候诊约40分钟。"
                           "澜坪市妇幼保健院新建的停车场本周启用。")
    assert off_topic(plan, "妇幼保健院候诊\n澜坪市妇幼保健院今天平均候诊约40分钟。") is None


# ---------------------------------------------------------------- which firm of a family


def _company(question: str, locale: str = "en-US"):
    return plan_by_rules(question, locale=locale)


def test_the_same_first_name_with_another_kind_is_another_firm() -> None:
    plan = _company("鸣湾地产新任董事长是谁", "zh-CN")
    assert about_another(plan, "鸣湾集团公告，董事会选举周某为董事长。")
    assert not about_another(plan, "鸣湾地产公告，董事会选举周某为董事长。")
    english = _company("new chief executive of ardley building society")
    assert about_another(english, "Ardley Insurance has named a new chief executive.")
    assert not about_another(english, "Ardley Building Society has named a new chief executive.")


def test_a_subsidiary_or_a_rival_named_by_its_relation_is_another() -> None:
    zh = _company("棠溪科技第三季度净利润多少", "zh-CN")
    assert about_another(zh, "棠溪智能（棠溪科技控股子公司）公告称，净利润1.18亿元。")
    assert about_another(zh, "控股子公司棠溪智能同期净利润为1.18亿元。")
    en = _company("orrin systems q3 revenue")
    assert about_another(en, "Orrin Systems Asia, the company's Singapore-listed subsidiary, "
                             "said its revenue reached $126 million.")
    assert about_another(en, "Rival Quarl Technologies posted revenue of $388 million.")
    assert not about_another(en, "Orrin Systems reported revenue of $412 million.")


def test_a_line_opening_with_another_firm_is_its_own_in_a_market_question() -> None:
    plan = _company("What did Orrin Systems stock close at today?")
    assert plan.query_kind is QueryKind.market
    assert asks_a_level("What did Orrin Systems stock close at today?")
    assert names_something_else(plan, "Quarl Technologies slipped 1.2% to $31.75.")
    assert not names_something_else(plan, "The stock had closed at $54.10 on Tuesday.")


# ---------------------------------------------------------------- which one of its kind


@pytest.mark.parametrize(("question", "other", "same"), [
    ("鹭川地铁5号线末班车几点", "鹭川地铁3号线末班车为22:45。", "5号线末班车为23:05。"),
    ("fenby route 14 last bus", "The last route 9 bus leaves at 23:10.",
     "Route 14 and route 9 both run until 23:40."),
    ("曜石Z9手机多少钱", "上一代曜石Z8起售价为3699元。", "曜石Z9售价3999元起。"),
    ("雁汀机场P3停车场一天多少钱", "P1短时停车场每小时10元。", "P3长时停车场每天60元。"),
])
def test_a_numbered_line_or_model_is_not_another_number(question: str, other: str,
                                                        same: str) -> None:
    assert clash(question, other) is not None
    assert clash(question, same) is None


def test_a_quarter_or_year_label_is_no_model_number() -> None:
    assert clash("orrin q4 revenue", "Revenue was $4.1 million in Q4.") is None
    assert clash("orrin fy27 guidance", "The FY26 outlook was cut.") is not None  # a year


def test_a_phone_is_not_the_tablet_of_the_same_name() -> None:
    assert clash("曜石Z9手机多少钱", "曜石平板Z9于12月2日上架，售价2499元。") is not None


def test_the_standard_edition_is_the_name_itself() -> None:
    assert not only_variants("曜石Z9", "曜石Z9标准版售价3999元起，曜石Z9 Ultra售价5999元起。")
    assert only_variants("曜石Z9", "曜石Z9 Ultra售价5999元起。")


def test_a_line_under_a_title_of_another_quarter_is_that_quarters() -> None:
    title = "棠溪智能公布第三财季业绩"
    assert clash_under("棠溪智能第四财季净利润", "净利润1.18亿元。", title)
    assert clash_under("棠溪智能第三财季净利润", "净利润1.18亿元。", title) is None


def test_an_unmarked_side_is_not_the_womens() -> None:
    asked = "ardley town women result last night"
    assert clash_under(asked, "Ardley Town beat Fenby 3-1.", "Ardley see off Fenby")
    assert clash_under(asked, "Bello scored twice.", "Ardley Town Women top the table") is None


def test_a_draft_has_not_come_into_force() -> None:
    assert clash("鹭川市养犬管理条例什么时候开始施行",
                 "《鹭川市养犬管理条例（草案）》征求意见截止日期为2026年12月31日。") is not None
    assert clash("鹭川市养犬管理条例什么时候开始施行", "条例将于2027年3月1日起施行。") is None
    assert possessed_words("When did Fenby's drone ban come into force?") == ("drone", "ban")


def test_a_noun_made_of_a_verb_matches_the_verb() -> None:
    assert "clos" in topic_words("When does the Fenby Bridge closure start?", ("Fenby Bridge",))


def test_a_follow_up_keeps_two_names_written_apart() -> None:
    asked = follow_up_question("when will it reopen?",
                               "When does the Fenby Bridge closure in Ardley start?")
    assert asked.startswith("Fenby Bridge closure in Ardley")
    side_by_side = follow_up_question("what about last season?", "Skarn vs Holby handball score")
    assert "vs" not in side_by_side


# ---------------------------------------------------------------- what the value is of


def test_what_someone_is_paid_is_not_the_firms_revenue() -> None:
    asked = "How much is Orrin Systems' CEO being paid in 2026?"
    assert other_figure(asked, "Orrin Systems reported revenue of $412.6 million.")
    assert other_figure(asked, "The chief executive's pay package was $4.1 million.") is None
    assert other_figure("how much do I pay for parking at fenby", "Parking costs £5.") is None


def test_a_unit_the_question_names_is_the_values() -> None:
    unit = unit_asked("quarl x4 battery mah")
    assert unit is not None and unit.search("a 5,000mAh battery")
    assert not unit.search("It goes on sale at $649.")
    assert unit_asked("quarl x4 price") is None
    assert unit_asked("who supplies keyboards for the next 13-inch laptop") is None  # a size


def test_a_follow_up_keeps_the_year_of_the_edition_asked() -> None:
    asked = follow_up_question("how much prize money does she get?",
                               "who won the fenby prize 2026")
    assert asked.endswith("in 2026")
    assert "2026" not in follow_up_question("what about 2024?", "who won the fenby prize 2026")


def test_a_line_about_an_earlier_meeting_never_answers_a_dated_game() -> None:
    question = "鹭川飞鱼12月9日对南屿海狮的比分是多少？"
    plan = plan_by_rules(question, locale="zh-CN")
    page = evidence("https://a.example/1", "南屿海狮上赛季主场以88比84击败鹭川飞鱼。",
                    title="南屿海狮力克鹭川飞鱼")
    assert "88比84" not in compose_extractive(question, plan, [page]).answer


@pytest.mark.parametrize(("question", "line", "other"), [
    ("What time is the first ferry from Fenby to Ardley Point from tomorrow?",
     "The first sailing from Ardley Point to Fenby will depart at 7:50 a.m.", True),
    ("What time is the first ferry from Fenby to Ardley Point from tomorrow?",
     "The first sailing from Fenby to Ardley Point will depart at 6:45 a.m.", False),
    ("fenby to marr island ferry first sailing tomorrow",
     "The first sailing from Ardley Point to Fenby will depart at 7:50 a.m.", True),
    ("weather from monday to friday", "Rain from Monday to Wednesday.", False),
    ("how do i get to the airport", "Trains run from Central to the Airport.", False),
])
def test_a_route_is_the_asked_one_in_the_asked_direction(question: str, line: str,
                                                         other: bool) -> None:
    assert (clash(question, line) is not None) is other


def test_the_first_or_last_service_is_asked_by_its_time() -> None:
    assert asked_slot("fenby to ardley ferry first sailing tomorrow") is Slot.time
    assert asked_slot("鹭川地铁5号线末班车") is Slot.time


# ---------------------------------------------------------------- what is so, and when


@pytest.mark.parametrize(("question", "line"), [
    ("曦和11月CPI涨了多少", "统计局11月18日发布数据，10月份全市居民消费价格同比上涨1.8%。"),
    ("fenby average rent november", "The average rent in Fenby reached £1,240 in October."),
    ("How much is the Fenby congestion charge per day?",
     "The council published proposals for a daily congestion charge of £6.50."),
    ("鹭川地铁6号线什么时候开通？", "近日网上流传鹭川地铁6号线将于12月26日开通的消息。"),
    ("Where did the Fenby 40 close today?", "The Fenby 40 was at 8,390.2 at midday on Tuesday."),
    ("What will premium gas cost in Fenby tomorrow?", "Regular gasoline will rise to 144.9 cents."),
    ("fenby metro line 5 closures this weekend", "Lines 1 and 2 will run a normal timetable."),
    ("and the men's? Ardley Rovers", "Ardley Rovers under-18s will host Fenby's academy."),
])
def test_another_month_status_session_grade_line_or_side_does_not_answer(question: str,
                                                                         line: str) -> None:
    assert clash(question, line) is not None


@pytest.mark.parametrize(("question", "line"), [
    ("when does the bylaw take effect",
     "After a consultation, the council adopted the bylaw, which takes effect on 1 March."),
    ("what is proposed for the fenby congestion charge", "Proposals for a daily charge of £6.50."),
    ("when does the shop close", "The shop opened at 9am and shuts at 5pm."),
    ("12月7日的比分", "12月7日，甲队3比1战胜乙队。"),
    ("Where did the Fenby 40 close today?", "The Fenby 40 closed at 8,412.6."),
])
def test_the_same_month_status_or_session_answers(question: str, line: str) -> None:
    assert clash(question, line) is None


@pytest.mark.parametrize(("question", "line", "clause"), [
    ("fenby jazz weekend pass price", "A day pass costs £45 and a weekend pass costs £80.",
     "A weekend pass costs £80."),
    ("鹭川灯会夜场票多少钱", "日场票80元，夜场票120元，儿童票60元。", "夜场票120元。"),
    ("鹭川居民用电第一档多少钱一度",
     "居民生活用电第一档电价为0.5380元/千瓦时，第二档为0.5880元/千瓦时。",
     "居民生活用电第一档电价为0.5380元/千瓦时。"),
    ("adult ticket price", "Adult tickets cost £20, up from £18 last year.", None),
])
def test_of_a_line_listing_several_kinds_the_asked_ones_clause_is_quoted(
        question: str, line: str, clause: str | None) -> None:
    assert asked_clause(question, line) == clause


def test_a_sentence_of_years_asks_a_duration() -> None:
    assert asked_slot("韩某被判了几年") is Slot.duration


def test_the_high_tomorrow_is_a_weather_question() -> None:
    assert plan_by_rules("fenby ontario high tomorrow", locale="en-US").query_kind is (
        QueryKind.weather)
    assert follow_up_question("and the day after?", "fenby ontario high tomorrow").endswith(
        "the day after tomorrow")
    assert follow_up_question("那后一天呢？", "鹭川明天天气") == "鹭川后天天气"


@pytest.mark.parametrize(("question", "name"), [
    ("鹭川居民用电第一档多少钱一度", "鹭川"),
    ("昨晚鹭川猎鹰比分多少", "鹭川猎鹰"),
    ("鹭川猎鹰 女篮呢", "鹭川猎鹰女篮"),
])
def test_a_chinese_name_no_list_knows_is_read_before_what_is_asked_of_it(question: str,
                                                                         name: str) -> None:
    assert name in [s.text for s in find_names(question, question, zh=True)]


# ---------------------------------------------------------------- what the rules leave alone


@pytest.mark.parametrize(("question", "line"), [
    ("When does the drone ban come into force?",
     "The ban comes into force on 1 March after the consultation closed in January."),
    ("Is the rumour that Fenby Mall is closing true?", "Fenby Mall confirmed it will close."),
    ("What is the gender pay gap for women in Fenby?", "The median gap narrowed to 7.7%."),
    ("What time is the last bus on route 14?", "The last bus leaves from platform 3 at 23:10."),
    ("Who won the Super Bowl?", "The Chiefs, the best regular-season team, beat the Eagles."),
    ("What time does gate 12 close?", "Gate 12 opened at 6:40 and boarding ends at 7:15."),
    ("First ferry to Marr Island tomorrow", "The first ferry from Fenby to Marr Island is 7:10."),
])
def test_ordinary_lines_are_not_taken_for_another_kind(question: str, line: str) -> None:
    assert clash(question, line) is None
    assert clash_under(question, line, "Latest") is None


def test_a_clause_keeps_a_thousands_comma_and_every_asked_value() -> None:
    assert asked_clause("How much is a business water bill?", "A household pays £1,250 a year "
                        "while a business pays £2,400.") == "A business pays £2,400."
    tariff = "居民用电第一档电价为0.5283元/千瓦时，第二档为0.5783元/千瓦时。"
    assert asked_clause("居民用电第二档多少钱", tariff) == "第二档为0.5783元/千瓦时。"


def test_a_market_high_is_no_weather_and_a_name_never_starts_with_a_joining_word() -> None:
    assert plan_by_rules("What was the FTSE 100 high today?", locale="en-US").query_kind is not (
        QueryKind.weather)
    assert plan_by_rules("北京大学和清华大学哪个分数线高", locale="zh-CN").subject_entities == [
        "北京大学", "清华大学"]
    assert unit_asked("What is an MP's salary?") is None
    assert asked_slot("When will the first train run on Line 6?") is Slot.date
