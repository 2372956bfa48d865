"""The question contract, one mechanism per test: is this evidence about the asked place,
subject, instrument, year and day, and does the composer quote the lines that answer it?"""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.relevance import name_forms, off_topic, quoted_levels
from pmflow_gateway.contract.statuses import reply_locale
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerStatus,
    EvidenceCollected,
    ExternalQueryPlan,
    QueryKind,
)
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose, weather_plan


def place_plan(place: str, day: str | None = "今天", **changes: object) -> ExternalQueryPlan:
    fields: dict[str, object] = {
        "location_hint": place, "subject_entities": [place], "time_range_hint": day,
        "topic": f"{place}{day or ''}天气", "search_queries": [f"{place} 天气"]}
    return weather_plan(**{**fields, **changes})


def company_plan(subject: str, kind: QueryKind = QueryKind.company) -> ExternalQueryPlan:
    return ExternalQueryPlan(query_kind=kind, topic=f"{subject} 最新消息",
                             subject_entities=[subject], search_queries=[f"{subject} 最新消息"])


# ------------------------------------------------------------ place and subject


@pytest.mark.parametrize(("place", "text"), [
    ("深圳", "Shenzhen: cloudy today, 24 to 29C."), ("Shenzhen", "深圳今天多云，24~29℃。"),
    ("深圳市", "深圳今天多云，24~29℃。"), ("Paris", "巴黎今天晴，12℃。"),
])
def test_a_place_is_named_in_either_script_and_without_its_suffix(place: str, text: str) -> None:
    assert off_topic(place_plan(place), text) is None


@pytest.mark.parametrize(("place", "text"), [
    ("深圳", "广州今天多云，24~29℃。"), ("Paris", "London: rain today, 9C. Tokyo: sunny today."),
    ("深圳", "Guangzhou: cloudy today."),
])
def test_another_place_is_off_topic(place: str, text: str) -> None:
    assert (off_topic(place_plan(place), text) or "").startswith(
        "off-topic: does not mention the asked place")


@pytest.mark.parametrize(("subject", "text", "about"), [
    ("腾讯", "Tencent reported higher quarterly revenue.", True),
    ("Tencent", "腾讯发布第三季度财报。", True),
    ("腾讯", "Alibaba reported higher quarterly revenue.", False),
    ("OpenAI", "Qwen and DeepSeek released new models.", False),
])
def test_a_subject_is_named_by_its_aliases_only(subject: str, text: str, about: bool) -> None:
    assert (off_topic(company_plan(subject), text) is None) is about


def test_apple_is_the_company_only_in_company_and_market_questions() -> None:
    fruit = "苹果富含维生素C，秋季苹果价格回落。"
    company = "Apple Inc. reported record iPhone revenue; 苹果公司股价上涨。"
    assert "Apple Inc." in name_forms("苹果", QueryKind.company)
    assert "Apple Inc." not in name_forms("苹果", QueryKind.generic_web)
    assert off_topic(company_plan("苹果"), fruit) is not None
    assert off_topic(company_plan("苹果"), company) is None
    assert off_topic(company_plan("苹果", QueryKind.generic_web), fruit) is None


def test_a_market_page_must_quote_a_level_of_the_instrument() -> None:
    plan = company_plan("比特币", QueryKind.market)
    assert off_topic(plan, "Bitcoin is in the news again after an ETF filing.") == (
        "off-topic: quotes no price or level of the asked instrument")
    assert off_topic(plan, "Bitcoin traded at $97,250.5 this morning.") is None
    assert quoted_levels("上证指数收报3412.56点；Bitcoin traded at $97,250.5") == [3412.56,
                                                                                  97250.5]


def test_a_district_page_is_not_about_the_whole_city_unless_asked() -> None:
    page = "北京市朝阳区天气\n朝阳区今天晴，3~10℃。"
    assert off_topic(place_plan("北京"), page) == (
        "off-topic: about 朝阳区, a part of the asked place")
    assert off_topic(place_plan("北京", topic="北京朝阳区今天天气"), page) is None


def test_a_year_the_question_names_must_be_on_the_page() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.generic_web, topic="2026 World Cup champion",
                             subject_entities=["World Cup"],
                             search_queries=["2026 World Cup champion"])
    assert off_topic(plan, "Argentina won the 2022 World Cup final.") == (
        "off-topic: not about the asked year 2026")
    assert off_topic(plan, "Spain won the 2026 World Cup final.") is None


def test_a_question_that_names_nothing_needs_most_of_its_terms() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.generic_web, topic="quantum error correction",
                             search_queries=["quantum error correction progress"])
    assert off_topic(plan, "Progress in quantum error correction this year.") is None
    assert off_topic(plan, "Quantum computing stocks rallied.") is not None


# ------------------------------------------------------------ the asked day


def test_tomorrow_needs_a_page_that_speaks_of_tomorrow() -> None:
    plan = place_plan("深圳", "明天")
    assert off_topic(plan, "深圳今天多云，24~29℃。") == (
        "off-topic: says nothing about the asked day (明天)")
    assert off_topic(plan, "深圳后天阴，20~24℃。") is not None
    assert off_topic(plan, "深圳明天小雨，21~25℃；后天阴。") is None


def test_the_composer_answers_tomorrow_with_tomorrows_line() -> None:
    page = "深圳未来3天预报：今天多云，24~29℃；明天有小雨，21~25℃；后天阴，20~24℃。"
    draft = compose_extractive("深圳明天天气怎么样", place_plan("深圳", "明天"),
                               [evidence("https://a.example/sz", page)])
    assert draft.answer == "明天有小雨，21~25℃[1]"


def test_a_period_gives_every_day_one_line_each_with_its_citation() -> None:
    page = ("广州未来5天天气预报：今天晴，23~30℃；明天雷阵雨，22~28℃；后天多云，19~27℃；"
            "第四天阵雨，18~25℃；第五天晴，17~26℃。珠三角其他城市（深圳、佛山）请以当地预报为准。")
    draft = compose_extractive("广州未来5天天气", weather_plan(),
                               [evidence("https://a.example/gz", page)])
    assert draft.answer.splitlines() == [
        "广州未来5天天气预报：今天晴，23~30℃[1]", "明天雷阵雨，22~28℃[1]", "后天多云，19~27℃[1]",
        "第四天阵雨，18~25℃[1]", "第五天晴，17~26℃。[1]"]
    assert "深圳" not in draft.answer and draft.cited == [1]


def test_a_heading_that_repeats_the_title_is_not_a_fact() -> None:
    page = "广州未来5天天气预报\n广州未来5天天气：今天晴，气温15至24℃；明天多云，气温16至23℃。"
    item = evidence("https://a.example/gz", page, title="广州未来5天天气预报")
    draft = compose_extractive("广州未来5天天气", weather_plan(), [item])
    assert draft.answer.splitlines() == ["广州未来5天天气：今天晴，气温15至24℃[1]",
                                         "明天多云，气温16至23℃。[1]"]


def test_a_fact_two_pages_repeat_is_said_once() -> None:
    items = [evidence("https://a.example/gz", "广州明天雷阵雨，22~28℃。"),
             evidence("https://b.example/gz", "广州明天雷阵雨，22~28℃。广州后天多云，19~27℃。")]
    draft = compose_extractive("广州未来几天天气", weather_plan(), items)
    assert draft.answer.splitlines() == ["广州明天雷阵雨，22~28℃。[1]", "广州后天多云，19~27℃。[2]"]


def test_a_price_question_keeps_the_number() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.market,
                             answer_contract=AnswerContract.direct_fact, topic="比特币价格",
                             subject_entities=["比特币"], search_queries=["比特币 价格"])
    page = "比特币价格再度引发关注。截至今晨，比特币报价97250美元，24小时涨2%。"
    draft = compose_extractive("比特币现在多少钱", plan, [evidence("https://a.example/b", page)])
    assert "97250" in draft.answer


def test_a_line_about_another_place_on_a_shared_page_is_not_quoted() -> None:
    page = "长三角两城明天天气：杭州明天晴，9~18℃，适合出游；苏州明天小雨，8~13℃，湿冷。"
    draft = compose_extractive("苏州明天天气", place_plan("苏州", "明天"),
                               [evidence("https://a.example/hz-sz", page)])
    assert "8~13℃" in draft.answer and "9~18℃" not in draft.answer


# ------------------------------------------------------------ ambiguity and language


def _paris(question: str, *, clarify: bool = True) -> EvidenceCollected:
    plan = place_plan("Paris", "today", topic="Paris weather today",
                      clarify_on_ambiguity=clarify)
    items = [evidence("https://a.example/paris-fr", "Paris, France: sunny today, 12C."),
             evidence("https://b.example/paris-tx", "Paris, Texas: rain today, 20C.")]
    return collected(items, plan=plan, question=question, locale="en")


async def test_an_ambiguous_place_asks_which_one() -> None:
    answer = await verify_and_compose(_paris("Paris weather today?"), clock=CLOCK)
    assert answer.status is AnswerStatus.clarify and answer.sources_used == []
    assert "Paris, France" in answer.answer and "Paris, Texas" in answer.answer


async def test_an_ambiguous_place_without_clarify_is_refused_not_guessed() -> None:
    answer = await verify_and_compose(_paris("Paris weather today?", clarify=False),
                                      clock=CLOCK)
    assert answer.status is AnswerStatus.freshness_guard and answer.sources_used == []


async def test_a_question_that_says_which_one_is_answered_from_it() -> None:
    answer = await verify_and_compose(_paris("Paris, Texas weather today?"), clock=CLOCK)
    assert answer.status is AnswerStatus.answered
    assert [s.url for s in answer.sources_used] == ["https://b.example/paris-tx"]


@pytest.mark.parametrize(("question", "locale", "expected"), [
    ("what is the weather in Paris tomorrow", "zh-CN", "en"),
    ("深圳明天天气怎么样", "en-US", "zh-CN"), ("深圳明天天气怎么样", "zh-TW", "zh-TW"),
    ("What about AAPL?", "en-GB", "en-GB"), ("123", "zh-CN", "zh-CN"),
])
def test_the_reply_language_follows_the_question(question: str, locale: str,
                                                 expected: str) -> None:
    assert reply_locale(question, locale) == expected


async def test_an_english_question_with_a_chinese_locale_is_refused_in_english() -> None:
    answer = await verify_and_compose(collected(
        [], question="What is the weather in Guangzhou for the next 5 days?", locale="zh-CN"),
        clock=CLOCK)
    assert answer.status is AnswerStatus.freshness_guard
    assert answer.answer.startswith("No reliable real-time external data")


def _apple_news(*texts: str) -> EvidenceCollected:
    plan = company_plan("苹果", QueryKind.news).model_copy(update={"clarify_on_ambiguity": True})
    items = [evidence(f"https://s{n}.example/p", text) for n, text in enumerate(texts, start=1)]
    return collected(items, plan=plan, question="苹果最新消息")


async def test_an_everyday_word_read_both_ways_asks_which_one() -> None:
    answer = await verify_and_compose(_apple_news(
        "苹果公司今天发布了新款iPhone，起售价5999元。", "今年秋季苹果丰收，红富士苹果价格回落。"),
        clock=CLOCK)
    assert answer.status is AnswerStatus.clarify and answer.sources_used == []
    assert answer.answer == (
        "需要补充信息才能查询：指的是哪个苹果（Apple Inc.，还是日常所说的苹果）。")
    assert answer.reason == "ambiguous subject: 苹果 = Apple Inc. | 苹果"
    reply = render_reply(answer, clock=CLOCK)
    assert "指的是哪个苹果（Apple Inc.，还是日常所说的苹果）" in reply.text


async def test_an_everyday_word_read_one_way_is_answered() -> None:
    answer = await verify_and_compose(_apple_news("苹果公司今天发布了新款iPhone，起售价5999元。"),
                                      clock=CLOCK)
    assert answer.status is AnswerStatus.answered


async def test_a_company_question_is_not_ambiguous() -> None:
    event = _apple_news("苹果公司今天发布了新款iPhone。", "今年秋季苹果丰收，红富士苹果价格回落。")
    event = event.model_copy(update={"plan": company_plan("苹果")})
    answer = await verify_and_compose(event, clock=CLOCK)
    assert answer.status is AnswerStatus.answered
    assert [s.url for s in answer.sources_used] == ["https://s1.example/p"]
