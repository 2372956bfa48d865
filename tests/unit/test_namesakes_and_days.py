"""Which place, whose figure and which day a page's line is about, for names no list knows:
namesakes a page places in words, a rival named beside the asked company, a weekday said
after the fact, a weekend, a span of days or months, an announcement already past. The
names here are invented."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pmflow_gateway.contract.qualifiers import clash, clash_under
from pmflow_gateway.contract.relevance import about_another, place_readings
from pmflow_gateway.contract.slots import names_a_person
from pmflow_gateway.contract.when import day_offsets, offsets_spoken_of
from pmflow_gateway.handlers.composers import _out_of_season, compose_extractive
from pmflow_gateway.handlers.planners.rules import follow_up_question, plan_by_rules
from pmflow_gateway.handlers.planners.words import find_names
from pmflow_gateway.schemas import ExternalEvidence
from tests.fakes import evidence

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)  # a Sunday
TODAY = NOW.date()


def _page(url: str, title: str, snippet: str, *, hours: float = 5) -> ExternalEvidence:
    return evidence(url, snippet, title=title).model_copy(update={
        "retrieved_at": NOW, "raw_metadata": {"published_at": (NOW - timedelta(hours=hours))
                                              .isoformat()}})


def _texts(pages: list[ExternalEvidence]) -> list[str]:
    return [f"{p.title}\n{p.snippet}" for p in pages]


# ---------------------------------------------------------------- namesakes placed in words


def test_a_town_placed_in_two_regions_in_words_is_asked_back() -> None:
    plan = plan_by_rules("orlby farmers market dates", locale="en-US")
    pages = [_page("https://a.example/1", "Market day", "Orlby in Northumberland holds its "
                   "farmers market on Saturday 12 December."),
             _page("https://b.example/2", "Orlby's market", "Orlby's market runs on Sunday 13 "
                   "December. The Dorset town's stalls open at 9am.")]
    assert place_readings(plan, _texts(pages)) == ["Northumberland", "Dorset"]


def test_one_place_said_two_ways_or_a_league_is_no_namesake() -> None:
    plan = plan_by_rules("orlby farmers market dates", locale="en-US")
    same = [_page("https://a.example/1", "Market", "Orlby in Cumbria holds its market."),
            _page("https://b.example/2", "Market", "Orlby, England: the Cumbria market town.")]
    assert place_readings(plan, _texts(same)) == []
    league = [_page("https://a.example/1", "Rovers", "Orlby Rovers in League Two won again."),
              _page("https://b.example/2", "Market", "Orlby in Cumbria holds its market.")]
    assert place_readings(plan, _texts(league)) == []


def test_a_chinese_town_no_list_knows_is_the_place_asked() -> None:
    question = "青渚镇停水通知"
    spans = find_names(question, question, zh=True)
    assert [(s.text, s.is_place) for s in spans] == [("青渚镇", True)]
    plan = plan_by_rules(question, locale="zh-CN")
    pages = [_page("https://a.example/1", "停水通知", "浙江省青渚镇将于12月8日停水。"),
             _page("https://b.example/2", "停水公告", "湖南省青渚镇将于12月9日停水。")]
    assert place_readings(plan, _texts(pages)) == ["浙江", "湖南"]


@pytest.mark.parametrize(("question", "place"), [
    ("昨晚石兴县地震几级", "石兴县"),  # a one-character county (兴县) inside a longer name
    ("明天兴县天气", "兴县"),  # after a time word: the county itself
])
def test_a_known_one_character_county_inside_a_longer_name(question: str, place: str) -> None:
    assert plan_by_rules(question, locale="zh-CN").location_hint == place


# ---------------------------------------------------------------- whose figure


@pytest.mark.parametrize(("asked", "line", "other"), [
    ("岚曦科技上季度营收", "岚曦科技的竞争对手澄岭智能公布，第三季度营收9.6亿元。", True),
    ("珂石股份周五收盘价", "与珂石股份无关联的珂石控股周五收于8.12元。", True),
    ("Tessaly Motors revenue", "Tessaly Motors's rival Grevholt reported revenue of $2 billion.",
     True),
    ("岚曦科技上季度营收", "岚曦科技第三季度营收12.4亿元。", False),
])
def test_a_line_that_names_the_company_beside_another_is_the_others(
        asked: str, line: str, other: bool) -> None:
    plan = plan_by_rules(asked, locale="zh-CN" if asked[0] > "~" else "en-US")
    assert about_another(plan, line) is other


@pytest.mark.parametrize(("line", "person"), [
    ("Ismay Carrow was elected with 1,204 votes.", True),
    ("The council appointed Dorian Vell as chief executive.", True),
    ("Cllr Pryce chaired the count.", True),
    ("The Green Party have won the Brindle ward by-election.", False),
])
def test_a_line_that_names_a_person(line: str, person: bool) -> None:
    assert names_a_person(line) is person


def test_who_won_an_election_is_answered_by_the_person_elected() -> None:
    question = "who won the brindle by-election"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "Greens take Brindle in by-election",
                 "The Green Party have won the Brindle ward by-election. Ismay Carrow was "
                 "elected with 1,204 votes. Turnout was 24.1%.")
    assert "Ismay Carrow" in compose_extractive(question, plan, [page]).answer


def test_what_the_question_asks_of_the_name_comes_first_in_a_summary() -> None:
    question = "brindle ward by-election turnout"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "Greens take Brindle in by-election",
                 "The Green Party have won the Brindle ward by-election on Harlow Council. "
                 "Ismay Carrow was elected with 1,204 votes. Turnout was 24.1%.")
    assert "24.1%" in compose_extractive(question, plan, [page]).answer


def test_a_rate_is_a_percentage() -> None:
    question = "what did the Corvell Reserve Board do with interest rates this week"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "Corvell Reserve Board cuts", "The Corvell Reserve "
                 "Board cut its base rate by a quarter point to 3.25% on Thursday.")
    assert "3.25%" in compose_extractive(question, plan, [page]).answer


def test_the_quarter_a_line_leaves_unsaid_is_its_pages() -> None:
    page = _page("https://a.example/q3", "Marrow Foods reports third-quarter 2026 results",
                 "Marrow Foods reported third-quarter revenue of $512 million. Net profit for "
                 "the quarter was $41 million.")
    q4 = "marrow foods q4 2026 results"
    assert compose_extractive(q4, plan_by_rules(q4, locale="en-US"), [page]).answer == ""
    q3 = "marrow foods q3 2026 profit"
    assert "$41 million" in compose_extractive(q3, plan_by_rules(q3, locale="en-US"),
                                               [page]).answer


# ---------------------------------------------------------------- which day


def test_a_weekday_said_after_the_fact_is_the_last_one() -> None:
    line = "Harlby Town beat Ossory 2-0 on Saturday."
    assert offsets_spoken_of(line, TODAY, 1) == {6}
    assert -1 in offsets_spoken_of(line, TODAY, 1, past=True)
    assert -1 in offsets_spoken_of(line, TODAY, 0, past=True)


def test_yesterdays_score_from_last_nights_report() -> None:
    question = "harlby town score yesterday"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "Harlby Town 2-0 Ossory",
                 "Harlby Town beat Ossory 2-0 on Saturday.", hours=20)
    assert "2-0" in compose_extractive(question, plan, [page]).answer


def test_a_weekend_and_a_span_of_days() -> None:
    assert day_offsets("weekend", TODAY) == {-1, 0}  # Sunday: the weekend under way
    assert day_offsets("weekend", date(2026, 12, 2)) == {3, 4}
    assert offsets_spoken_of("Closed from Friday 4 December until Monday 7 December.",
                             TODAY, 0) == {-2, -1, 0, 1}
    assert offsets_spoken_of("Closed on 4 December and 7 December.", TODAY, 0) == {-2, 1}


def test_is_it_open_this_weekend_is_answered_by_a_closure_spanning_it() -> None:
    question = "is the brindle footbridge open this weekend"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "Footbridge closed", "The Brindle footbridge is closed "
                 "from 8pm on Friday 4 December until 6am on Monday 7 December.", hours=48)
    assert "Monday 7 December" in compose_extractive(question, plan, [page]).answer


def test_an_announcement_already_past_does_not_answer_when_next() -> None:
    question = "石溪镇停电安排"
    plan = plan_by_rules(question, locale="zh-CN")
    april = _page("https://a.example/4", "石溪镇4月停电通知", "石溪镇将于4月18日8:30至16:30停电。",
                  hours=5800)
    assert compose_extractive(question, plan, [april]).answer == ""


def test_a_state_that_began_on_a_past_day_still_holds() -> None:
    question = "翠屏公园现在几点开门"
    plan = plan_by_rules(question, locale="zh-CN")
    winter = _page("https://a.example/w", "冬季开放时间",
                   "自12月1日起，翠屏公园每日8:00至17:00开放。", hours=160)
    summer = _page("https://a.example/s", "夏季开放时间",
                   "夏季（5月至10月）翠屏公园每日6:30至19:00开放。", hours=4000)
    answer = compose_extractive(question, plan, [summer, winter]).answer
    assert "8:00至17:00" in answer and "6:30" not in answer


@pytest.mark.parametrize(("line", "out"), [
    ("夏季（5月至10月）每日6:30至19:00开放。", True),
    ("Open daily from May to October.", True),
    ("冬季（11月至3月）每日8:00开放。", False),  # spans the new year
    ("Closed from 4 December until 7 December.", False),  # days, not a season
])
def test_a_line_limited_to_months_that_leave_now_out(line: str, out: bool) -> None:
    assert _out_of_season(line, TODAY) is out


def test_a_power_cut_is_not_a_water_one() -> None:
    assert clash("石溪镇停电安排", "石溪镇12月7日将暂停供水。") is not None
    assert clash("pinley power cut", "Water supply to Pinley will be off on Monday.") is not None
    assert clash("石溪镇停电安排", "石溪镇12月7日停电。") is None


@pytest.mark.parametrize(("question", "line", "other"), [
    ("墨川输入法13.0正式版什么时候发布", "墨川输入法12.6正式版于12月2日发布。", True),
    ("what's new in corvel version 4.2", "Corvel v4.1 added offline maps.", True),
    ("what's new in corvel version 4.2", "Corvel 4.2 release adds offline maps.", False),
    ("岚曦科技上季度营收", "营收12.4亿元。", False),  # amounts are no release
])
def test_a_numbered_release_is_not_another(question: str, line: str, other: bool) -> None:
    assert (clash(question, line) is not None) is other


def test_a_line_says_what_its_pages_title_says_of_the_supply_cut() -> None:
    title = "石溪镇停水通知"
    assert clash_under("石溪镇停电安排", "受影响区域包括石溪镇中心街。", title) is not None
    assert clash_under("石溪镇停水安排", "受影响区域包括石溪镇中心街。", title) is None
    # A line that says its own supply is read as it says.
    assert clash_under("石溪镇停电安排", "石溪镇12月7日停电。", title) is None


def test_when_something_yearly_comes_is_the_next_one_but_a_laws_day_stays() -> None:
    last_winter = _page("https://a.example/1", "寒假安排", "石溪县中小学2026年1月17日起放寒假。",
                        hours=8000)
    question = "石溪县中小学什么时候放寒假"
    assert compose_extractive(question, plan_by_rules(question, locale="zh-CN"),
                              [last_winter]).answer == ""
    law = _page("https://a.example/2", "《石溪市养犬条例》3月1日起施行",
                "《石溪市养犬条例》自2026年3月1日起施行。", hours=6500)
    question = "石溪市养犬条例什么时候开始施行"
    assert "2026年3月1日" in compose_extractive(
        question, plan_by_rules(question, locale="zh-CN"), [law]).answer


# ---------------------------------------------------------------- which one of its kind


@pytest.mark.parametrize(("question", "line", "clashes"), [
    ("how much is an adult ticket for the corlan quartet", "Student tickets are £19.", True),
    ("how much is an adult ticket for the corlan quartet", "Adult tickets cost £38.", False),
    ("雾川乐队内场票多少钱", "看台票价为480元。", True),
    ("price of diesel in orlby", "Unleaded 95 was 1.87 euros a litre.", True),
    ("第十二届岚川电影节最佳影片是哪部", "最佳导演奖授予祁望。", True),
    ("第十二届岚川电影节最佳影片是哪部", "上一届的最佳影片为《盐田》。", True),
    ("第十二届岚川电影节最佳影片是哪部", "《雾港来信》获得最佳影片奖。", False),
    ("总决赛MVP是谁", "常规赛MVP由初霁获得。", True),
])
def test_a_line_about_another_of_the_kind_asked(question: str, line: str,
                                                clashes: bool) -> None:
    assert (clash(question, line) is not None) is clashes


def test_of_the_lines_about_it_the_one_that_says_what_was_asked_answers() -> None:
    question = "第十二届岚川电影节最佳影片是哪部"
    plan = plan_by_rules(question, locale="zh-CN")
    page = _page("https://a.example/1", "第十二届岚川电影节揭晓",
                 "12月5日晚，第十二届岚川电影节颁奖典礼在岚川大剧院举行。"
                 "《雾港来信》获得最佳影片奖。")
    assert "雾港来信" in compose_extractive(question, plan, [page]).answer


def test_a_follow_up_that_names_another_fuel_asks_about_that_fuel() -> None:
    question = follow_up_question("what about diesel?", "price of 95 unleaded in orlby today")
    assert "unleaded" not in question and "diesel" in question


def test_last_quarter_is_the_quarter_before_this_one() -> None:
    question = "岚曦科技上季度营收多少"
    plan = plan_by_rules(question, locale="zh-CN")
    page = _page("https://a.example/1", "本周财报速读",
                 "岚曦科技前三季度累计营业收入241.7亿元，其中第二季度营收为79.1亿元。"
                 "公司第三季度实现营业收入86.3亿元。")
    answer = compose_extractive(question, plan, [page]).answer
    assert "86.3亿元" in answer and "79.1亿元" not in answer


def test_a_deputys_title_is_the_title_asked() -> None:
    question = "岚川原副市长滕远判了几年"
    plan = plan_by_rules(question, locale="zh-CN")
    page = _page("https://a.example/1", "岚川市原副市长滕远受贿案一审宣判",
                 "12月4日，岚川市中级人民法院对岚川市原副市长滕远受贿案进行一审宣判，"
                 "以受贿罪判处滕远有期徒刑十一年。")
    assert "十一年" in compose_extractive(question, plan, [page]).answer


def test_how_things_stand_now_is_not_last_years_price() -> None:
    question = "雾川乐队杭州站内场票多少钱"
    plan = plan_by_rules(question, locale="zh-CN")
    pages = [_page("https://a.example/1", "本周开票速览",
                   "据主办方介绍，雾川乐队2025年杭州演出的内场票价为980元。"),
             _page("https://b.example/2", "雾川乐队杭州站开票", "雾川乐队杭州站内场票价为1280元。")]
    answer = compose_extractive(question, plan, pages).answer
    assert "1280元" in answer and "980元" not in answer


def test_a_half_marathon_is_not_the_marathon() -> None:
    line = "Dawit Oren won the 2026 Corby Marathon on Saturday in 2:09:14."
    assert clash("corby half marathon winning time", line) is not None
    assert clash("corby marathon winning time", line) is None


def test_a_line_about_the_separate_one_of_the_kind_is_about_another() -> None:
    question = "hollin ridge fire containment"
    plan = plan_by_rules(question, locale="en-US")
    pages = [_page("https://a.example/1", "Creek fire nears full containment",
                   "The separate Hollin Creek fire, about 40 miles north of Hollin Ridge, was "
                   "90% contained on Saturday."),
             _page("https://b.example/2", "Hollin Ridge fire",
                   "The Hollin Ridge fire was 64% contained as of Saturday evening.")]
    answer = compose_extractive(question, plan, pages).answer
    assert "64%" in answer and "90%" not in answer


def test_a_product_line_and_its_number_belong_to_the_makers_name() -> None:
    question = "nexlo fathom 10 battery capacity"
    assert [s.text for s in find_names(question, question, zh=False)] == ["nexlo fathom 10"]
    question = "kelsby weather 10 day forecast"
    assert [s.text for s in find_names(question, question, zh=False)] == ["kelsby"]
    question = "fenwold route 14 last bus"
    assert [s.text for s in find_names(question, question, zh=False)] == ["fenwold"]


@pytest.mark.parametrize(("question", "line", "kept"), [
    # A model's year dates nothing; a past event asked in the past tense is of its year.
    ("how far can the rav4 prime go on electricity alone",
     "The 2021 RAV4 Prime will be able to go 39 miles on battery power alone.", True),
    ("how much did wework pay for meetup",
     "WeWork acquired Meetup for $200 million in 2017.", True),
])
def test_a_year_that_dates_nothing_now(question: str, line: str, kept: bool) -> None:
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/1", "A page", line)
    assert (compose_extractive(question, plan, [page]).answer != "") is kept
