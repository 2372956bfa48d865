"""A town no list knows, asked with the region it lies in; and the days a page speaks of by its
own calendar. Both decide whether the evidence is about the place and the day that were asked."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pmflow_gateway.contract.metrics import other_figure
from pmflow_gateway.contract.places import qualified_forms, region_after, region_before
from pmflow_gateway.contract.qualifiers import asks_a_schedule, possessed_words
from pmflow_gateway.contract.relevance import (
    names,
    names_the_place,
    off_topic,
    place_readings,
    quoted_levels,
    quotes_a_level,
)
from pmflow_gateway.contract.scoring import freshness_score
from pmflow_gateway.contract.verify import ambiguous_place
from pmflow_gateway.contract.when import day_offset, days_printed, offsets_spoken_of
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from pmflow_gateway.schemas import AnswerContract, ExternalEvidence
from tests.fakes import evidence

# ---------------------------------------------------------------- the planner


@pytest.mark.parametrize(("question", "place", "joined"), [
    ("Fennick, Maine weather tomorrow", "Fennick, Maine", True),
    ("What's tomorrow's forecast for Hollis Ferry, Oregon?", "Hollis Ferry, Oregon", True),
    ("weather in Fennick, ME tomorrow", "Fennick, ME", True),
    ("浙江璃川明天会下雨吗", "浙江璃川", True),
    ("浙江省璃川市明天天气", "浙江省璃川市", True),
    # Known places and bare names are planned as before.
    ("Portland, Maine weather tomorrow", "Portland, Maine", False),
    ("weather in Maine tomorrow", "Maine", False),
    ("浙江明天天气", "浙江", False),
    ("浙江杭州明天天气", "杭州", False),
    ("What is the weather in Fennick tomorrow?", "Fennick", False),
])
def test_a_town_no_list_knows_is_asked_with_its_region(question: str, place: str,
                                                       joined: bool) -> None:
    plan = plan_by_rules(question, locale="zh-CN" if "天" in question else "en-US")
    assert plan.location_hint == place
    if joined:
        assert plan.subject_entities == [place]
        assert place in plan.search_queries[0]


def test_only_a_weather_question_joins_a_name_to_the_region_after_it() -> None:
    plan = plan_by_rules("What was Quillmark, US revenue last quarter?", locale="en-US")
    assert plan.location_hint is None


def test_who_won_a_match_is_not_a_comparison_of_two_teams() -> None:
    won = plan_by_rules("Who won Thornvale Rovers vs Wrenmoor United?", locale="en-US")
    compared = plan_by_rules("Thornvale Rovers vs Wrenmoor United: which is better?",
                             locale="en-US")
    assert won.answer_contract is AnswerContract.direct_fact
    assert compared.answer_contract is AnswerContract.compare_with_sources


# ---------------------------------------------------------------- the place table


def test_a_region_is_read_after_a_name_by_its_name_or_abbreviation() -> None:
    text = "Fennick, Maine weather"
    end, regions = region_after(text, len("Fennick")) or (0, ())
    assert text[:end] == "Fennick, Maine" and [p.name for p in regions] == ["Maine"]
    assert region_after("Lorrimer CO weather", len("Lorrimer")) is not None
    # A lower-case word after a space is no abbreviation, nor a full name without a comma.
    assert region_after("Fennick me weather", len("Fennick")) is None
    assert region_after("Fennick Maine weather", len("Fennick")) is None
    before = region_before("浙江省璃川市", 3)
    assert before is not None and before[0] == 0


def test_pages_may_write_the_region_in_full_or_abbreviated() -> None:
    assert set(qualified_forms("Fennick, Maine")) == {"Fennick, Maine", "Fennick, ME"}
    assert set(qualified_forms("浙江省璃川市")) == {"浙江璃川", "浙江省璃川"}
    # An abbreviation of several regions is each one's name too ("Ashgrove NC" is written
    # "Ashgrove, North Carolina"); known places have their own names.
    assert {"Fennick, ME", "Fennick, Maine"} <= set(qualified_forms("Fennick, ME"))
    assert "Fennick, Oregon" not in qualified_forms("Fennick, ME")
    assert "Ashgrove, North Carolina" in qualified_forms("Ashgrove NC")
    assert qualified_forms("Portland, Maine") == ()
    assert qualified_forms("Fennick") == ()


def test_a_page_about_a_namesake_in_another_region_is_not_about_the_asked_town() -> None:
    maine = "Fennick, ME Weather Forecast\nFennick, Maine. Tomorrow: snow."
    oregon = "Fennick, OR Weather Forecast\nFennick, Oregon. Tomorrow: showers."
    assert names_the_place("Fennick, Maine", maine)
    assert not names_the_place("Fennick, Maine", oregon)
    assert names_the_place("浙江璃川", "浙江省璃川市 明天小雨")
    assert not names_the_place("浙江璃川", "黑龙江省璃川镇 明天晴")


def _page(url: str, title: str, snippet: str, *, hours_old: float = 3,
          retrieved: datetime = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)) -> ExternalEvidence:
    item = evidence(url, snippet, title=title).model_copy(update={"retrieved_at": retrieved})
    published = (retrieved - timedelta(hours=hours_old)).isoformat()
    return item.model_copy(update={"raw_metadata": {"published_at": published}})


def test_two_towns_of_one_name_are_asked_back_whatever_other_words_the_question_has() -> None:
    plan = plan_by_rules("What's the weather in Fennick tomorrow?", locale="en-US")
    pages = [_page("https://a.example/or", "Fennick, OR Weather Forecast", "Showers."),
             _page("https://a.example/me", "Fennick, ME Weather Forecast", "Snow.")]
    # "OR" is not written in "tomorrow": nothing in the question says which.
    assert ambiguous_place(plan, "What's the weather in Fennick tomorrow?", pages) == (
        [], ["OR", "ME"])
    chosen, readings = ambiguous_place(plan, "Fennick ME weather tomorrow", pages)
    assert [i.target_url for i in chosen] == ["https://a.example/me"] and readings == []
    zh = plan_by_rules("璃川明天天气怎么样", locale="zh-CN")
    pages = ["浙江省璃川市 明天小雨", "黑龙江省璃川镇 明天晴"]
    assert place_readings(zh, pages) == ["浙江", "黑龙江"]


# ---------------------------------------------------------------- days by the calendar

TODAY = date(2026, 12, 6)


@pytest.mark.parametrize(("line", "days"), [
    ("Monday, Dec 7: snow, high 27°F.", {date(2026, 12, 7)}),
    ("Tomorrow (Sun, Dec. 6): windy.", {date(2026, 12, 6)}),
    ("12月7日（周一）：小雨", {date(2026, 12, 7)}),
    ("3 December: dry", {date(2026, 12, 3)}),
    ("Jan 2: cold", {date(2027, 1, 2)}),  # the year that puts it nearest today
    ("updated at 10:30 Dec 8", {date(2026, 12, 8)}),
    ("temperatures 5 may rise", set()),  # a verb, not the month
    ("明天：多云", set()),
])
def test_the_days_a_line_prints(line: str, days: set[date]) -> None:
    assert days_printed(line, TODAY) == days


def test_a_page_written_days_ago_speaks_of_days_by_its_own_calendar() -> None:
    # Yesterday's page: its "Tomorrow (Sun, Dec 6)" is today, its "明天" too.
    assert offsets_spoken_of("Tomorrow (Sun, Dec 6): windy", TODAY, 1) == {0}
    assert offsets_spoken_of("明天：多云", TODAY, 1) == {0}
    assert offsets_spoken_of("明天：多云", TODAY, 0) == {1}
    assert offsets_spoken_of("Monday: snow", TODAY, 1) == {1}  # 2026-12-06 is a Sunday
    assert (day_offset("tomorrow", TODAY), day_offset("mon", TODAY), day_offset(None, TODAY),
            day_offset("period", TODAY)) == (1, 1, 0, None)


LORRIMER = ("Lorrimer, Colorado. Today (Sat, Dec 5): sunny, high 41°F. Tomorrow (Sun, Dec 6): "
            "windy, high 38°F. Monday, Dec 7: snow, high 27°F. Tuesday, Dec 8: partly cloudy, "
            "high 33°F.")


@pytest.mark.parametrize(("question", "says", "never"), [
    ("Lorrimer, Colorado weather tomorrow", ["27°F"], ["38°F", "41°F"]),
    ("Lorrimer, Colorado weather today", ["38°F"], ["41°F", "27°F"]),
    ("Lorrimer, Colorado forecast for the next few days", ["38°F", "27°F", "33°F"], ["41°F"]),
])
def test_yesterdays_forecast_page_answers_by_the_days_it_prints(
        question: str, says: list[str], never: list[str]) -> None:
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://skycast.example/co/lorrimer", "Lorrimer, CO Weather Forecast",
                 LORRIMER, hours_old=22)
    answer = compose_extractive(question, plan, [page]).answer
    assert all(s in answer for s in says) and not any(n in answer for n in never), answer


def test_a_fresh_page_is_read_by_its_words_for_days_as_before() -> None:
    plan = plan_by_rules("Lorrimer, Colorado weather tomorrow", locale="en-US")
    page = _page("https://skycast.example/co/lorrimer", "Lorrimer, CO Weather Forecast",
                 LORRIMER, hours_old=3)
    assert "38°F" in compose_extractive("Lorrimer, Colorado weather tomorrow", plan,
                                        [page]).answer


def test_a_game_already_played_does_not_answer_when_they_play_next() -> None:
    question = "When do the Hallowmere Comets play next?"
    assert asks_a_schedule(question)
    plan = plan_by_rules(question, locale="en-US")
    preview = _page("https://hoops.test/preview", "Preview: Kestrels at Comets",
                    "The Hallowmere Comets host the Brisendale Kestrels on Saturday, Dec. 5, "
                    "at 7 p.m. at Millrace Arena.", hours_old=40)
    recap = _page("https://courier.example/recap", "Comets hold off Kestrels",
                  "Corey Lindqvist scored 31 points as the Hallowmere Comets held off the "
                  "Kestrels 108-101 on Saturday night. The Comets next host the Pellingford "
                  "Rivermen on Tuesday, Dec. 8, at 7:30 p.m.", hours_old=13)
    answer = compose_extractive(question, plan, [preview, recap]).answer
    assert "Dec. 8" in answer and "Dec. 5" not in answer
    # Only a page from an earlier day is read by the real calendar.
    fresh = _page(preview.target_url, preview.title, preview.snippet, hours_old=3)
    assert "Dec. 5" in compose_extractive(question, plan, [fresh]).answer


# ---------------------------------------------------------------- what the figure is of


def test_a_sentence_under_another_editions_title_is_not_the_asked_editions_figure() -> None:
    question = "星弧X5 Pro多少钱"
    plan = plan_by_rules(question, locale="zh-CN")
    max_page = evidence("https://a.example/max",
                        "星弧X5 Max配备13英寸屏幕。12GB+256GB版本售价4599元。"
                        "官方表示，X5 Pro版本将于明年上市，价格暂未公布。", title="星弧X5 Max评测")
    assert "4599" not in compose_extractive(question, plan, [max_page]).answer
    asked_max = plan_by_rules("星弧X5 Max售价多少", locale="zh-CN")
    assert "4599元" in compose_extractive("星弧X5 Max售价多少", asked_max, [max_page]).answer


def test_units_sold_are_not_revenue_and_a_policy_rate_is_not_gdp_growth() -> None:
    assert other_figure("What was Quillmark Studios' revenue last quarter?",
                        "The game has sold 1.2 million copies.") is not None
    assert other_figure("What was Quillmark's revenue?", "Net sales rose to $3.2 billion.") is None
    gdp = "维斯塔尼亚第三季度GDP增速是多少"
    assert other_figure(gdp, "央行将基准利率下调25个基点至3.75%。") is not None
    assert other_figure(gdp, "第三季度GDP同比增长2.1%。") is None


def test_a_revenue_in_billions_is_no_quoted_market_level() -> None:
    assert not quotes_a_level("third-quarter revenue rose 8% to $1.38 billion")
    assert quoted_levels("Shares rose 2% to $231.40.") == [231.4]
    assert quoted_levels("The index closed at 4,512.3.") == [4512.3]
    assert quoted_levels("碳酸锂期货主力合约收报7.965万元/吨") == [7.965]  # 万元/吨 is a price


def test_a_time_word_after_a_chinese_name_is_not_part_of_it() -> None:
    plan = plan_by_rules("岚澈精密去年全年营收多少", locale="zh-CN")
    assert plan.subject_entities == ["岚澈精密"]


def test_a_quote_ages_only_on_trading_days() -> None:
    market = plan_by_rules("岚澈精密现在股价多少", locale="zh-CN")
    sunday = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
    friday_close = sunday - timedelta(hours=52)
    # Friday's close is the latest price on Sunday; the same age on weekdays is stale.
    assert freshness_score(friday_close, market, sunday) >= 0.5
    assert freshness_score(friday_close + timedelta(days=3), market,
                           sunday + timedelta(days=3)) < 0.5
    news = plan_by_rules("岚澈精密最新新闻", locale="zh-CN")
    assert freshness_score(friday_close, news, sunday) == freshness_score(
        friday_close + timedelta(days=3), news, sunday + timedelta(days=3))


# ---------------------------------------------------------------- from blind set 8


def test_a_town_named_after_a_known_name_is_the_town() -> None:
    assert plan_by_rules("石门坎镇明天会下雨吗？", locale="zh-CN").location_hint == "石门坎镇"
    assert plan_by_rules("石门明天天气", locale="zh-CN").location_hint == "石门"


def test_a_neighbouring_towns_forecast_is_not_the_asked_towns() -> None:
    plan = plan_by_rules("石门坎镇明天会下雨吗？", locale="zh-CN")
    page = "云桥县天气预报\n湖南云桥县明天（12月7日）小到中雨。云桥县城距石门坎镇约20公里。"
    assert off_topic(plan, page) is not None
    # A site's name or a country's forecast is not another place.
    assert off_topic(plan, "中国天气网\n石门坎镇明天小雨。") is None


def test_two_towns_of_one_name_with_its_suffix_are_asked_back() -> None:
    plan = plan_by_rules("青岚镇明天天气怎么样？", locale="zh-CN")
    assert place_readings(plan, ["四川青岚镇天气预报", "浙江青岚镇天气预报"]) == ["四川", "浙江"]


def test_a_namesake_companys_page_is_not_about_the_asked_company() -> None:
    plan = plan_by_rules("What revenue did Tessaro Motors report for the third quarter?",
                         locale="en-US")
    page = ("Tessaro Marine posts quarterly results\nTessaro Marine, a boat maker unrelated to "
            "Tessaro Motors, reported third-quarter revenue of $86.4 million.")
    assert off_topic(plan, page) is not None
    same = "Tessaro Motors Inc. posts quarterly results\nTessaro Motors reported revenue of $1B."
    assert off_topic(plan, same) is None


def test_what_a_question_asks_of_a_name_must_be_in_the_answer() -> None:
    assert possessed_words("What was Vessaria's trade balance in October?") == ("trade", "balan")
    for asks_anything in ("What's Tesla's latest news?", "What is Tesla's stock price?",
                          "What is Apple's revenue?", "Who is Acme's chief executive?",
                          "Moravia Falcons men's volleyball result"):
        assert possessed_words(asks_anything) == ()
    question = "What was Vessaria's trade balance in October?"
    plan = plan_by_rules(question, locale="en-US")
    jobless = evidence("https://a.example/jobs", "Vessaria's unemployment rate fell to 4.7% in "
                       "October.", title="Vessaria jobless rate falls")
    assert compose_extractive(question, plan, [jobless]).answer == ""


def test_a_regulation_asked_without_brackets_is_its_own_name() -> None:
    question = "珀溪市建筑垃圾管理条例规定的最高罚款是多少？"
    plan = plan_by_rules(question, locale="zh-CN")
    assert plan.subject_entities == ["珀溪市建筑垃圾管理条例"]
    assert plan_by_rules("我想了解深圳市控烟条例", locale="zh-CN").subject_entities == [
        "深圳市控烟条例"]
    assert off_topic(plan, "《珀溪市生活垃圾分类管理条例》明年起施行\n拒不改正的处200元以下罚款。")
    # Spelt shorter than its title, it is still the same regulation.
    assert names("江西物业条例", "《江西省物业管理条例》修订通过")
    assert not names("珀溪市建筑垃圾管理条例", "《珀溪市生活垃圾分类管理条例》")


def test_a_line_that_prints_another_day_than_the_asked_one_does_not_answer() -> None:
    question = "江屿飞鱼12月5日的比分是多少？"
    plan = plan_by_rules(question, locale="zh-CN")
    page = _page("https://a.example/game", "江屿飞鱼比赛",
                 "12月4日晚，江屿飞鱼以99比90战胜北原猎鹰。12月5日晚，江屿飞鱼在主场以108比97战胜南湾海狮。")
    answer = compose_extractive(question, plan, [page]).answer
    assert "108比97" in answer and "99比90" not in answer


def test_a_year_at_the_end_of_a_sentence_is_a_year() -> None:
    from pmflow_gateway.contract.qualifiers import years_of
    from pmflow_gateway.contract.slots import Slot, fills

    assert years_of("Revenue rose 8% in 2025.") == {"2025"}
    assert years_of("version 2025.1 is out") == set()
    # "How many moons" is not answered by the years a spacecraft flew.
    assert not fills(Slot.quantity, "Cassini studied Saturn and its moons from 2004 to 2017.")
    assert fills(Slot.quantity, "Saturn has 146 known moons.")


HARLOW = ("Harlow Falls, Maine: Today, Sunday, December 6, clear and cold with a high of 26°F. "
          "Monday, December 7: light snow developing in the afternoon, with a high of 30°F.")


def test_a_fresh_page_that_names_tomorrow_by_its_weekday_answers_tomorrow() -> None:
    question = "What's tomorrow's forecast for Harlow Falls, Maine?"
    plan = plan_by_rules(question, locale="en-US")
    page = _page("https://a.example/me", "Harlow Falls, Maine weather", HARLOW)
    assert off_topic(plan, f"{page.title}\n{page.snippet}") is None
    answer = compose_extractive(question, plan, [page]).answer
    assert "30°F" in answer and "26°F" not in answer
    # A page that says "tomorrow" is read by that word, as before: the calendar only when
    # no line says it.
    worded = _page("https://a.example/me2", "Harlow Falls, Maine weather",
                   "Tomorrow: light snow, high 31°F. Sunday, December 13: sunny, high 35°F.")
    assert "31°F" in compose_extractive(question, plan, [worded]).answer


def test_on_saturdays_is_not_about_sunday() -> None:
    sunday = date(2026, 12, 6)
    assert offsets_spoken_of("On Saturdays the library is open from 10 a.m.", sunday, 0) == {6}
    assert offsets_spoken_of("Open every weekend", sunday, 0) == {0, 6}


def test_a_forecast_for_a_town_written_with_its_state_in_full_is_another_towns() -> None:
    plan = plan_by_rules("Will it rain in Ostrander Mills tomorrow?", locale="en-US")
    page = ("Pellham Junction, Ohio weather\nMonday, December 7: rain likely. Pellham Junction "
            "is the county seat, about 14 miles north of Ostrander Mills.")
    assert off_topic(plan, page) is not None


def test_a_population_is_a_count_of_people() -> None:
    from pmflow_gateway.contract.slots import Slot, asked_slot

    assert asked_slot("What's the population of Marrowby?") is Slot.quantity
    assert asked_slot("珀溪市人口多少") is Slot.quantity
    question = "What's the population of Marrowby?"
    plan = plan_by_rules(question, locale="en-US")
    census = evidence("https://a.example/census", "Marrowby, Idaho, had 48,310 residents in the "
                      "2025 census.", title="Census: Marrowby keeps growing")
    assert "48,310" in compose_extractive(question, plan, [census]).answer


@pytest.mark.parametrize(("follow_up", "previous", "asked"), [
    ("And the Max?", "How much does the base Lumora X7 cost?",
     "How much does the Lumora X7 Max cost?"),
    ("what about the Pro?", "How much is the Pixel 11?", "How much is the Pixel 11 Pro?"),
    ("那Ultra呢", "Galaxy S26 Pro多少钱", "Galaxy S26 Ultra多少钱"),
    ("Pro版呢", "星弧X5标准版多少钱", "星弧X5 Pro多少钱"),
])
def test_an_edition_asked_after_a_question_is_that_question_about_the_edition(
        follow_up: str, previous: str, asked: str) -> None:
    from pmflow_gateway.handlers.planners.rules import follow_up_question

    assert follow_up_question(follow_up, previous) == asked


def test_a_side_that_plays_next_states_a_schedule_not_a_result() -> None:
    from pmflow_gateway.contract.qualifiers import clash
    from pmflow_gateway.handlers.planners.rules import follow_up_question

    asked = "How did the Dunmore Harriers Women do?"
    assert clash(asked, "The women's side plays next on Sunday, Dec. 13, at Brackwater.")
    assert clash(asked, "Dunmore Harriers Women drew 2-2 with Ashgrove City Women.") is None
    # A team's side is asked in the follow-up's own words, not the previous question's.
    assert "do?" in follow_up_question("How did the women's team do?",
                                       "Did the Dunmore Harriers win last night?")


def test_an_economy_figure_after_a_chinese_name_is_not_part_of_it() -> None:
    plan = plan_by_rules("塔里维亚失业率是多少", locale="zh-CN")
    assert plan.subject_entities == ["塔里维亚"]
    assert off_topic(plan, "卡洛维亚失业率小幅回落\n卡洛维亚10月失业率为5.8%。") is not None
