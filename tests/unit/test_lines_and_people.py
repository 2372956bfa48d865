"""Which lines of a page can answer: a news dateline never does, a forecast's lines under a day
heading are that day's, and "who is the prosecutor" is answered by a person's name, not a
country's or a firm's. The names here are invented."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.slots import Slot, fills
from pmflow_gateway.handlers.composers import _only_a_dateline, compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from tests.fakes import evidence

# ---------------------------------------------------------------- datelines


@pytest.mark.parametrize("line", [
    "ORMSBY, Pa. — Saturday, Nov. 28, 2026.",
    "LANTERN BAY, Maine — Forecast updated 3:45 p.m.",
    "KESSEL (AP) — Tuesday.",
    "Central, Friday, November 27.",
    "Updated 9:30 a.m. ET.",
])
def test_a_line_that_only_dates_its_page_is_a_dateline(line: str) -> None:
    assert _only_a_dateline(line)


@pytest.mark.parametrize("line", [
    "ORMSBY, Pa. — Bus drivers will strike on Monday, Dec. 7.",
    "Friday, November 27.",  # no dateline's place, zone or "updated": a day, maybe the answer
    "The forecast was updated Friday.",
    "Dec. 3 marks the date.",
])
def test_a_line_that_says_something_is_no_dateline(line: str) -> None:
    assert not _only_a_dateline(line)


# ---------------------------------------------------------------- a forecast's day headings


def test_the_lines_under_a_day_heading_are_that_days() -> None:
    question = "lantern bay maine high tomorrow"  # asked on Wednesday: tomorrow is Thursday
    plan = plan_by_rules(question, locale="en-US")
    forecast = evidence(
        "https://wx.example/lantern-bay",
        "Tonight: clouds thicken, low 27°F. Thursday: rain developing after 10 a.m. High 44°F. "
        "Chance of rain 70%. Thursday night: rain ending, low 33°F. Friday: colder, high 31°F.",
        title="Lantern Bay, Maine forecast")
    schools = evidence(
        "https://news.example/lantern-bay-schools",
        "Lantern Bay schools will dismiss students early on Thursday because of the rain.",
        title="Lantern Bay schools to dismiss early Thursday")
    answer = compose_extractive(question, plan, [forecast, schools]).answer
    assert "High 44°F" in answer
    assert "31°F" not in answer and "27°F" not in answer


# ---------------------------------------------------------------- who, asked by a person's role


PROSECUTOR = "who is the danish prosecutor who dropped the halvorsen fraud case"


@pytest.mark.parametrize("line", [
    "Deputy chief prosecutor Mette-Lise Aaberg said the evidence had weakened.",
    "The decision was taken by Dr Aaberg on Tuesday.",
])
def test_a_person_named_answers_who_holds_a_role(line: str) -> None:
    assert fills(Slot.person, line, (), PROSECUTOR)


@pytest.mark.parametrize("line", [
    # A country, a firm and the asked person are no answer.
    "Denmark has dropped its case against Brightwell co-founder Anders Halvorsen.",
    # Nor is an institution named in two words.
    "Danish prosecutors reopened it after he left the Ecuadorean Embassy in London.",
])
def test_no_person_named_answers_no_who(line: str) -> None:
    assert not fills(Slot.person, line, (), PROSECUTOR)


def test_the_role_asked_is_not_part_of_the_name() -> None:
    question = "Who is the governor of the Bank of Tessaly?"
    assert fills(Slot.person, "Governor Elsa Varnholt said inflation was too high.", (), question)


def test_who_won_is_answered_by_a_team_or_a_country() -> None:
    assert fills(Slot.person, "Spain won the cup, beating Brazil 2-1.", (), "who won the cup")


def test_whos_typed_without_its_apostrophe_still_asks_who() -> None:
    from pmflow_gateway.contract.slots import asked_slot
    assert asked_slot("whos the new harlow united manager") is Slot.person
    assert asked_slot("wheres the final") is Slot.place


# ---------------------------------------------------------------- a loan's term


@pytest.mark.parametrize(("question", "line", "clashes"), [
    ("ashby bank 20 year fixed rate", "30-year fixed: rate 5.99%, APR 6.12%.", True),
    ("ashby bank 20 year fixed rate", "7/1 ARM: rate 5.62%, APR 6.58%.", True),  # no term said
    ("ashby bank 30yr fixed apr", "30-year fixed: rate 5.99%, APR 6.12%.", False),
    ("房贷5年期lpr现在多少", "1年期LPR为2.85%", True),
    ("房贷5年期lpr现在多少", "5年期以上LPR为3.35%", False),
    ("how many years has the coach signed for", "He signed a 3-year deal.", False),  # no rate
])
def test_the_term_of_a_rate_is_the_asked_one(question: str, line: str, clashes: bool) -> None:
    from pmflow_gateway.contract.qualifiers import clash
    assert (clash(question, line) is not None) is clashes


def test_of_a_line_with_every_term_the_asked_terms_clause_answers() -> None:
    from pmflow_gateway.contract.qualifiers import asked_clause
    line = "11月20日,新一期LPR公布:1年期LPR为2.85%,5年期以上LPR为3.35%,均与上月持平。"
    assert asked_clause("房贷5年期lpr现在多少", line) == "5年期以上LPR为3.35%。"


# ---------------------------------------------------------------- not yet so


@pytest.mark.parametrize(("line", "not_yet"), [
    ("某券商首席经济学家认为,5年期以上LPR或下调10个基点至3.25%。", True),
    ("业内人士表示,若LPR下调,存量房贷利率将在明年重定价日调整。", True),
    ("The midfielder's release clause is reported to be £40 million.", True),
    # What is so, in words a forecast also uses.
    ("10月CPI同比上涨0.3%，高于市场预期的0.2%。", False),
    ("如果您乘坐末班车，请注意末班车为23:00。", False),
    ("The fire was reported at 3:15 a.m.", False),
    ("Elm Street is closed because of a gas leak.", False),
])
def test_a_prediction_a_condition_or_a_report_is_not_what_is_so(line: str,
                                                                 not_yet: bool) -> None:
    from pmflow_gateway.contract.qualifiers import says_what_is_not_yet_so
    assert says_what_is_not_yet_so(line) is not_yet


def test_a_page_headed_as_a_leak_says_no_price_in_any_line() -> None:
    from pmflow_gateway.contract.qualifiers import clash_under
    line = "A retailer listing shows the Wren Buds 3 at $199."
    assert clash_under("wren buds 3 price", line, "Leak: Wren Buds 3 price spotted") is not None
    assert clash_under("wren buds 3 price", line, "Wren Buds 3 launch: $179") is None
    # A headline's "reportedly" labels nothing: real news headlines hedge.
    assert clash_under("wren buds 3 price", line, "Wren reportedly prices Buds 3 at $199") is None


# ---------------------------------------------------------------- called off


def test_the_newest_page_calling_an_event_off_answers_what_an_older_one_scheduled() -> None:
    question = "is the ormsby bus strike still on for monday"
    plan = plan_by_rules(question, locale="en-US")
    old = evidence("https://news.example/strike-deadline",
                   "Ormsby bus drivers will walk off the job at 12:01 a.m. Monday unless a new "
                   "contract is reached.", fresh=0.8, title="Ormsby bus drivers set strike date")
    new = evidence("https://news.example/strike-off",
                   "The bus strike is called off. The union reached a tentative agreement.",
                   fresh=0.99, title="Strike called off: Ormsby transit and union reach deal")
    answer = compose_extractive(question, plan, [old, new]).answer
    assert "called off" in answer and "12:01" not in answer


def test_a_postponement_in_a_pages_history_is_not_news() -> None:
    question = "what time did the wren 1 rocket launch"
    plan = plan_by_rules(question, locale="en-US")
    old = evidence("https://space.example/preview", "The Wren 1 rocket will launch at 9:10 a.m.",
                   fresh=0.7, title="Wren 1 launch preview")
    new = evidence("https://space.example/launched",
                   "The Wren 1 rocket launched at 10:42 a.m. The launch was postponed from "
                   "Nov. 24 because of high winds.", fresh=0.99, title="Wren 1 rocket launches")
    answer = compose_extractive(question, plan, [old, new]).answer
    assert "10:42" in answer


# ---------------------------------------------------------------- dated lines


def test_a_month_before_a_year_is_that_years_month() -> None:
    from datetime import date

    from pmflow_gateway.handlers.composers import _dated_months_ago
    today = date(2026, 12, 3)
    assert not _dated_months_ago("A contract until June 2029.", today)
    assert _dated_months_ago("Revenue was $4 million in June 2025.", today)


# ---------------------------------------------------------------- the figure before


@pytest.mark.parametrize(("line", "quoted"), [
    ("Revenue was $41.6 million, up 9% from $37.8 million in the third quarter of 2025.",
     "Revenue was $41.6 million, up 9%."),
    ("The average rate fell to 6.18% this week, from 6.27% last week, the lowest since May.",
     "The average rate fell to 6.18% this week, the lowest since May."),
    ("Spot silver settled at $31.40 an ounce, up 0.9% from Wednesday's $31.12, as the dollar "
     "slipped.", "Spot silver settled at $31.40 an ounce, up 0.9%, as the dollar slipped."),
    ("归属于上市公司股东的净利润4.72亿元,同比增长18.6%,上年同期为3.98亿元。",
     "归属于上市公司股东的净利润4.72亿元,同比增长18.6%。"),
    ("Ticket prices range from $45 to $80.", "Ticket prices range from $45 to $80."),
])
def test_a_figure_is_quoted_without_the_one_it_is_set_beside(line: str, quoted: str) -> None:
    from pmflow_gateway.handlers.composers import _without_comparisons
    assert _without_comparisons(line, Slot.amount, ()) == quoted


def test_a_question_that_asks_the_change_keeps_the_figure_before() -> None:
    question = "how much did ashby revenue grow compared with last year"
    plan = plan_by_rules(question, locale="en-US")
    page = evidence("https://ashby.example/q3",
                    "Ashby revenue was $41.6 million, up 9% from $37.8 million a year earlier.",
                    title="Ashby reports third-quarter results")
    assert "$37.8 million" in compose_extractive(question, plan, [page]).answer


# ---------------------------------------------------------------- a class of travel


def test_a_fare_of_another_class_is_no_answer() -> None:
    from pmflow_gateway.contract.qualifiers import asked_clause, clash
    line = "全程二等座票价38.5元，一等座61.5元。"
    assert asked_clause("城际二等座票价多少", line) == "全程二等座票价38.5元。"
    assert clash("城际商务座多少钱", line) is not None
    assert clash("how much is a first class ticket", "Standard class costs £40.") is not None


# ---------------------------------------------------------------- a follow-up's day


def test_a_weather_follow_up_that_names_no_day_keeps_the_previous_day() -> None:
    from pmflow_gateway.handlers.planners.rules import follow_up_question
    assert follow_up_question("how windy will it get", "lantern bay maine high tomorrow").endswith(
        "tomorrow")
    assert follow_up_question("会下雨吗", "岑川明天最高几度").endswith("明天")
    # Not a weather question: "when does he start" is not about yesterday.
    assert "yesterday" not in follow_up_question("when does he start?", "who won yesterday")


# ---------------------------------------------------------------- one name, two of them


def test_a_nickname_two_places_write_before_it_is_asked_back() -> None:
    from pmflow_gateway.contract.relevance import firm_readings
    plan = plan_by_rules("岚鹰下一场比赛几点", locale="zh-CN")
    pages = ["12月3日晚,男篮联赛第14轮,汀洲岚鹰主场以101比95获胜。此役过后岚鹰战绩9胜5负。",
             "女排联赛第二阶段首轮,澄湾岚鹰将于12月5日19:30主场迎战西岭雪豹。"]
    found = firm_readings(plan, pages)
    assert found is not None and sorted(found[1]) == ["汀洲岚鹰", "澄湾岚鹰"]
    # One place before it, and an everyday word ("此役过后岚鹰" is no place): one team.
    assert firm_readings(plan, pages[:1]) is None


def test_firms_of_newer_kinds_share_a_first_name() -> None:
    from pmflow_gateway.contract.relevance import firm_readings
    plan = plan_by_rules("岚湾三季度营收多少", locale="zh-CN")
    pages = ["岚湾物流10月30日发布三季报:第三季度营业收入23.7亿元。",
             "岚湾新能源10月28日晚间披露2026年第三季度报告。"]
    found = firm_readings(plan, pages)
    assert found is not None and sorted(found[1]) == ["岚湾新能源", "岚湾物流"]


# ---------------------------------------------------------------- what a review found


@pytest.mark.parametrize(("line", "slot", "question"), [
    ("The Kessel bridge toll rose from $3.10 to $3.25 on Monday.", Slot.amount, ""),  # a range
    ("Headcount grew from 1,200 to 1,500 this year.", Slot.quantity, ""),
    ("The Harlow pool is open from 6 a.m., closing at 10 p.m.", Slot.time, ""),  # no change
    ("Rooms cost £120 on weekends, and weekday rooms from £89.", Slot.amount, ""),
    ("Jones has 45% versus Smith's 52%.", Slot.share, "what percentage does smith have"),
    ("经由岑川的航线票价降至800元。", Slot.amount, ""),  # 经由 is no 由…至
    ("The fare rose to $4.50 from $3.75.", Slot.amount, "how much was the fare originally"),
])
def test_no_figure_the_question_needs_is_cut(line: str, slot: Slot, question: str) -> None:
    from pmflow_gateway.handlers.composers import _without_comparisons
    assert _without_comparisons(line, slot, (), question) == line


def test_a_figure_before_is_cut_whole() -> None:
    from pmflow_gateway.handlers.composers import _without_comparisons
    cut = _without_comparisons("产量为5.2万吨，上年同期为1,234吨。", Slot.amount, ())
    assert cut == "产量为5.2万吨。"
    assert _without_comparisons(
        "Ormsby reported 436 cases for the week, up from 298 the week before, and 37 deaths.",
        Slot.quantity, ()) == "Ormsby reported 436 cases for the week, and 37 deaths."


@pytest.mark.parametrize(("question", "line"), [
    ("岑川十年期国债收益率是多少", "岑川三十年期国债收益率报2.15%。"),
    ("What is the Kessel 10-year bond yield?",
     "The 30-year yield rose to 4.9%, its highest in 10 years."),
])
def test_a_term_inside_a_longer_term_is_another_term(question: str, line: str) -> None:
    from pmflow_gateway.contract.qualifiers import clash
    assert clash(question, line) is not None


def test_two_terms_asked_are_answered_by_either() -> None:
    from pmflow_gateway.contract.qualifiers import clash
    assert clash("harlow bank 15-year and 30-year fixed rates", "15-year fixed: 5.25%.") is None


@pytest.mark.parametrize(("line", "question"), [
    ("The case is overseen by Judge Merchan.", "Who is the judge in the Halvorsen case?"),
    ("Ricki Lake is the mayor of Ormsby.", "who is the mayor of ormsby"),  # a surname like a lake
    ("Spain, Portugal and Morocco will host the 2030 World Cup.", "Who will host the 2030 cup?"),
])
def test_a_person_by_a_title_or_any_surname_answers_who(line: str, question: str) -> None:
    assert fills(Slot.person, line, (), question)


def test_a_forecast_line_does_not_answer_what_happened_but_a_statement_does() -> None:
    from pmflow_gateway.handlers.composers import _only_future
    assert _only_future("Saturday's high will be 27°F.")
    assert not _only_future("The mayor said fares will stay at $2.10.")
    assert not _only_future("It launched at 10:42 a.m. and will deploy next week.")


def test_a_release_clause_is_not_a_transfer_fee() -> None:
    from pmflow_gateway.contract.qualifiers import clash
    assert clash("harlow transfer fee for kessel", "He has a release clause of £40 million.")
    assert clash("harlow transfer fee for kessel", "Harlow will pay £27.5 million.") is None
