"""What a line states against what was asked: a request is not a ruling, a moved date not the
date, mixed doubles not the men's, a fixing not a close, a six-month term not a sixty-month
one, a partial count not the final one, a page's month is its lines'; and one name listed
under two tickers is two companies."""

from __future__ import annotations

from pmflow_gateway.contract.qualifiers import DIMENSIONS, clash, clash_under
from pmflow_gateway.contract.relevance import firm_readings, with_declared_aliases
from pmflow_gateway.contract.variants import asked_titles, family_mentions
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind


def _plan(topic: str, subjects: list[str], kind: QueryKind = QueryKind.company
          ) -> ExternalQueryPlan:
    return ExternalQueryPlan.model_construct(query_kind=kind, topic=topic,
                                             subject_entities=subjects, location_hint=None)


# ---------------------------------------------------------------- a request, a ruling


def test_what_a_party_asks_a_court_for_is_not_the_sentence():
    question = "what sentence did the former treasurer dale omsby get"
    assert clash(question, "Prosecutors are asking a judge to sentence Omsby to 52 months.")
    assert clash(question, "Omsby's lawyers have asked for home confinement.")
    assert clash("法院判了奥姆斯比几年", "检方建议判处其有期徒刑五年。")
    assert clash(question, "Omsby was sentenced Monday to 28 months in prison.") is None
    # A line with the ruling and the request states the ruling.
    assert clash(question, "The judge sentenced Omsby to 28 months, less than the 52 months "
                           "prosecutors sought.") is None


# ---------------------------------------------------------------- a date moved


def test_a_date_since_moved_does_not_say_when_it_happens():
    question = "when does the brantley trail bike ship"
    assert clash(question, "The Trail had been scheduled to begin shipping November 14.")
    assert clash(question, "Deliveries have been pushed back to February 2.") is None
    assert clash(question, "Originally scheduled for Nov. 14, shipping is now set for Feb. 2.") \
        is None
    assert clash("考试什么时候举行", "原定于12月6日举行的笔试，延期至12月13日举行。") is None
    assert clash("考试什么时候举行", "原定于12月6日举行的笔试取消。")
    # Asked what the date was before it moved, the old date answers.
    assert clash("when was the trail bike originally scheduled to ship",
                 "The Trail had been scheduled to begin shipping November 14.") is None


# ---------------------------------------------------------------- which event, which price


def test_mixed_doubles_is_neither_the_mens_nor_the_womens():
    assert clash("澄湾公开赛混双冠军是谁", "男双冠军由甲乙获得，女双冠军为丙丁。")
    assert clash("who won the mixed doubles at the corran open",
                 "The men's doubles title went to Ash and Lee.")
    assert clash("澄湾公开赛混双冠军是谁", "混双决赛中，甲/丁以2:0夺冠。") is None
    team = next(d for d in DIMENSIONS if d.name == "team")
    assert team.stated("The crowd gave mixed reviews.") == frozenset()


def test_a_fixing_is_not_the_close():
    assert clash("昨天美元兑人民币中间价是多少", "在岸人民币对美元16:30收盘报7.1931。")
    assert clash("昨天美元兑人民币中间价是多少", "当日人民币对美元汇率中间价报7.1856。") is None
    assert clash("what was the yuan fixing today", "The onshore yuan closed at 7.1931.")


def test_a_term_in_months_is_its_own_term_and_twelve_months_is_a_year():
    assert clash("60 month cd rate at brookvale savings", "6-Month CD: 4.25% APY.")
    assert clash("60 month cd rate at brookvale savings", "60-Month CD: 3.95% APY.") is None
    assert clash("1 year cd rate at brookvale", "12-month CD: 4.10% APY.") is None
    assert clash("6个月定期存款利率是多少", "一年期定期存款利率为1.35%。")
    assert clash("6个月定期存款利率是多少", "6个月定期存款利率为1.15%。") is None


def test_a_vote_count_asked_is_the_final_one():
    question = "how many votes did orlen get in the marlow county clerk runoff"
    assert clash(question, "With 19 of 27 precincts reporting, Orlen leads with 3,112 votes.")
    assert clash(question, "With all 27 precincts counted, Orlen received 4,870 votes.") is None
    assert clash("how is orlen doing so far in the clerk runoff count",
                 "With 19 of 27 precincts reporting, Orlen leads with 3,112 votes.") is None


def test_a_line_without_a_month_is_of_its_pages_month():
    asked = "上个月cpi同比涨了多少 11月"
    assert clash_under(asked, "扣除食品和能源价格的核心CPI同比上涨1.2%。", "10月份CPI同比上涨0.4%")
    assert clash_under(asked, "核心CPI同比上涨1.2%。", "11月份CPI同比上涨0.4%") is None
    # A line with its own month is read alone.
    assert clash_under(asked, "11月份，核心CPI同比上涨1.2%。", "10月至11月物价观察") is None


# ---------------------------------------------------------------- a former office-holder


def test_an_ex_mayor_is_the_former_mayor():
    assert asked_titles("what did ex quarry bay mayor ann lisle say") == ["ex quarry bay mayor"]
    assert family_mentions("ex quarry bay mayor", "Former Quarry Bay Mayor Ann Lisle said") \
        == [True]
    assert family_mentions("quarry bay mayor", "Former Quarry Bay Mayor Ann Lisle said") == [False]
    assert family_mentions("chancellor", "the shadow chancellor said") == [False]


# ---------------------------------------------------------------- two listed companies


def test_one_name_under_two_tickers_is_two_companies():
    plan = _plan("what did harwick group close at today", ["harwick group"],
                 QueryKind.generic_web)
    pages = ["Harwick Group up\nShares of Harwick Group Inc. (NYSE: HWK), the insurer, closed at "
             "$61.20.",
             "Harwick Group down\nShares of Harwick Group Ltd. (TSX: HGR), the miner, closed at "
             "C$9.87."]
    name, firms = firm_readings(plan, pages)
    assert name == "harwick group" and len(firms) == 2
    # The exchange or the ticker in the question says which.
    assert firm_readings(_plan("harwick group nyse close today", ["harwick group"]), pages) is None
    assert firm_readings(_plan("hwk close today", ["harwick group"]), pages) is None
    # One ticker written two ways is one company.
    same = [pages[0], "Harwick\nHarwick Group Inc. (HWK) rose 2%."]
    assert firm_readings(plan, same) is None


def test_two_tickers_declared_for_one_name_declare_neither():
    plan = _plan("岚桥科技三季度营收多少", ["岚桥科技"])
    pages = ["岚桥科技（301777）10月27日晚披露三季报。",
             "北交所上市公司岚桥科技（920777）发布三季报。"]
    assert with_declared_aliases(plan, pages).subject_entities == ["岚桥科技"]
    assert firm_readings(plan, pages) == ("岚桥科技", ["岚桥科技（301777）", "岚桥科技（920777）"])
    one = with_declared_aliases(plan, pages[:1])
    assert one.subject_entities == ["岚桥科技 (301777)"]


# ---------------------------------------------------------------- a wider area, an estimate


def test_a_provinces_or_the_countrys_figure_does_not_answer_a_countys():
    question = "澄溪县今年粮食总产量多少"
    assert clash(question, "2026年全省粮食总产量4187.5万吨，比上年增加26.3万吨。")
    assert clash(question, "全国粮食总产量再创新高。")
    assert clash(question, "澄溪县今年粮食总产量52.3万吨，占全省的1.2%。") is None
    english = "current heating oil price in marrow county per gallon"
    assert clash(english, "The statewide average was $3.95 a gallon.")
    assert clash(english, "Marrow County averaged $4.10, above the statewide average.") is None
    # Asked of the province, its figure answers; a stock market is no county.
    assert clash("全省粮食总产量多少", "2026年全省粮食总产量4187.5万吨。") is None
    assert clash("上海股市今天收盘", "沪指收报3400点，全国成交额1.2万亿元。") is None


def test_an_estimate_is_not_the_reported_figure():
    question = "柘岭前三季度gdp是多少"
    assert clash(question, "据测算，柘岭市前三季度GDP有望达到约2350亿元。")
    assert clash(question, "柘岭市前三季度实现地区生产总值2318.6亿元，同比增长5.1%。") is None


# ---------------------------------------------------------------- headings, later days, pay


def test_a_line_that_is_its_pages_title_with_a_place_and_a_date_is_a_heading():
    from pmflow_gateway.handlers.composers import _restates_title

    title = "Parking Permit Fee Update | Town of Bellmere"
    assert _restates_title("Town of Bellmere, Vt. — Parking Permit Fee Update (posted Nov. 2, "
                           "2026).", title)
    assert not _restates_title("The permit fee currently in effect is $45 a year.", title)
    # A figure the title does not give makes it a line.
    assert not _restates_title("Town of Bellmere — Parking Permit Fee Update: $45.", title)


def test_a_year_after_a_day_is_read_before_a_comma():
    from datetime import date

    from pmflow_gateway.contract.when import days_printed

    today = date(2026, 12, 2)
    assert days_printed("Effective July 1, 2027, the wage will be $16.50.", today) == {
        date(2027, 7, 1)}
    assert days_printed("Dec. 7, 2000 customers lost power.", today) == {date(2026, 12, 7)}


def test_a_rate_per_hour_is_pay():
    from pmflow_gateway.contract.metrics import other_figure

    question = "minimum wage for large employers in bellmere right now"
    assert other_figure(question, "The rates in effect are $15.25 per hour for large "
                                  "employers.") is None
    assert other_figure(question, "The town collected $2.1 million in fees.")


def test_how_much_a_price_moves_is_not_the_price():
    from pmflow_gateway.handlers.composers import _without_changes

    assert "50" not in _without_changes("The board approved a hike that will raise the adult "
                                        "fare by 50 cents in January.")
    assert "0.2" not in _without_changes("92号汽油每升上调0.2元。")
    assert "7.85" in _without_changes("92号汽油每升上调至7.85元。")
    assert "$2.25" in _without_changes("The adult base fare is $2.25 per ride.")


def test_what_holds_until_a_later_day_holds_now():
    from datetime import date

    from pmflow_gateway.handlers.composers import _only_later_days

    today = date(2026, 12, 2)
    assert not _only_later_days("Current fares remain in effect through Jan. 3, 2027: the adult "
                                "fare is $2.25.", today)
    assert _only_later_days("New fares begin Jan. 4, 2027: the adult fare is $2.75.", today)


def test_a_date_inside_a_clause_does_not_cut_it():
    from pmflow_gateway.contract.qualifiers import _CLAUSE

    parts = _CLAUSE.split("Through Jan. 3, 2027, the adult fare is $2.25, the youth fare $1.10.")
    assert parts[0] == "Through Jan. 3, 2027"
    assert len(parts) == 3


def test_a_day_of_a_month_or_an_ordinal_counts_nothing():
    from pmflow_gateway.contract.slots import Slot, fills

    assert not fills(Slot.quantity, "The town's 40th annual tree lighting returns to the plaza "
                                    "on Saturday, Nov. 28, at 5:30 p.m.")
    assert not fills(Slot.quantity, "第3届比赛于11月28日举行。")
    assert fills(Slot.quantity, "About 15,000 people attended on Saturday, Nov. 28.")
    assert fills(Slot.quantity, "11月28日共有3000人参加。")


def test_a_price_asked_as_it_is_now_is_this_months():
    from datetime import timedelta

    from pmflow_gateway.contract.scoring import freshness_window
    from pmflow_gateway.handlers.planners.rules import plan_by_rules

    now = plan_by_rules("current heating oil price in marrow county per gallon", locale="en-US")
    assert freshness_window(now) <= timedelta(days=30)
    plain = plan_by_rules("marrow county population", locale="en-US")
    assert freshness_window(plain) > timedelta(days=30)


def test_an_estimate_by_the_paper_is_not_the_official_figure():
    question = "柘岭前三季度gdp是多少"
    assert clash(question, "据本报根据部分经济指标测算，同比增速或在5.5%左右。")
    from pmflow_gateway.contract.metrics import other_figure

    assert other_figure(question, "2026年前三季度，柘岭市地区生产总值2318.6亿元。") is None


# ---------------------------------------------------------------- what the review found


def test_a_vote_question_is_not_refused_for_an_unofficial_or_preliminary_line():
    for question, line in (
            ("who won the harlow mayoral election",
             "Jane Orr won with 54% of the vote, according to unofficial results."),
            ("how did the council vote on the budget",
             "The council voted 5-2 to give preliminary approval."),
            ("how many votes did orlen get", "Orlen won, according to complete but "
                                             "unofficial results.")):
        why = clash(question, line) or ""
        assert not why.startswith(("count", "tally")), (question, why)


def test_ordinary_lines_are_no_headings_and_keep_their_figures():
    from datetime import date

    from pmflow_gateway.handlers.composers import (
        _only_later_days,
        _restates_title,
        _without_changes,
    )

    assert not _restates_title("Costco is closed on Thanksgiving.",
                               "Is Costco open on Thanksgiving Day 2026?")
    assert not _restates_title("Smith defeats Jones.", "Greyfield mayoral race: Smith vs Jones")
    assert _restates_title("Town of Bellmere — Parking Permit Fee Update (posted Nov. 2).",
                           "Parking Permit Fee Update | Town of Bellmere")
    today = date(2026, 12, 2)
    assert not _only_later_days("The wage is currently $15.25 and will rise to $16.50 on Jan. 1, "
                                "2027.", today)
    assert _only_later_days("From Jan. 1 through March 31, 2027, the fare will be $2.", today)
    assert "$16" in _without_changes("The minimum wage will rise to $16 an hour by 2027.")
    assert "1,755" in _without_changes("The price cap rises to £1,755 by 1 January.")


def test_a_plan_kept_or_a_request_granted_is_no_moved_date_nor_a_request():
    assert clash("when is the fed meeting", "The Fed cut rates Wednesday, as had been expected.") \
        is None
    assert clash("比赛什么时候举行", "比赛将按原计划于12月6日举行。") is None
    assert clash("when is the trial", "The judge granted the defense's request and moved the "
                                      "trial to March 3.") is None
    assert clash("法院判了他几年", "公诉机关建议对被告人判处有期徒刑五年。")
    assert clash("法院判了他几年", "检方建议判处5年，法院最终判处其有期徒刑3年。") is None


def test_a_title_an_ordinal_a_run_of_months_or_a_list_keep_their_reading():
    from pmflow_gateway.contract.qualifiers import _CLAUSE
    from pmflow_gateway.contract.slots import Slot, fills
    from pmflow_gateway.contract.variants import family_mentions

    assert fills(Slot.quantity, "The team won its 5th title.")
    assert fills(Slot.quantity, "At least 40 may have died.")
    assert clash("1年期lpr是多少", "LPR已连续6个月维持不变，1年期LPR为3.0%。") is None
    assert clash("30 year mortgage rate", "The 30-year rate hit its lowest level in 12 months, "
                                          "at 6.1%.") is None
    assert _CLAUSE.split("Adult tickets are $30, 65+ seniors pay $20, children $10.")[1].strip() \
        == "65+ seniors pay $20"
    assert family_mentions("google assistant", "Google Assistant will be shut down.") == [True]
    assert clash("城乡居民医保缴费标准", "全国居民医保人均财政补助标准提高到400元。") is None
    # A publication date in a title is no month or year of what it reports.
    assert clash_under("unemployment rate in october", "The unemployment rate rose to 4.4%.",
                       "Jobs report: what to know, November 7, 2026") is None


def test_one_company_under_one_code_written_twice_or_listed_twice_is_one():
    from pmflow_gateway.handlers.planners.rules import plan_by_rules

    assert firm_readings(plan_by_rules("贵州茅台收盘价", locale="zh-CN"),
                         ["贵州茅台（600519）收盘。", "贵州茅台（600519.SH）发布公告。"]) is None
    assert firm_readings(plan_by_rules("比亚迪三季度营收", locale="zh-CN"),
                         ["比亚迪（002594）发布三季报。", "比亚迪（01211.HK）股价上涨。"]) is None
    assert firm_readings(plan_by_rules("tesla stock price"),
                         ["Tesla (TSLA) rose.", "Tesla (US) sold more cars."]) is None


def test_a_fee_asked_now_keeps_its_years_window():
    from datetime import timedelta

    from pmflow_gateway.contract.scoring import freshness_window
    from pmflow_gateway.handlers.planners.rules import plan_by_rules

    assert freshness_window(plan_by_rules("how much is a passport now")) > timedelta(days=30)


def test_a_share_of_the_vote_does_not_say_how_many_votes():
    from pmflow_gateway.contract.slots import Slot, fills

    assert not fills(Slot.quantity, "Orr won the runoff, taking 51.4% of the vote to 48.6%.")
    assert fills(Slot.quantity, "Orr received 6,214 votes, or 51.4%.")
