"""Planner rules found by use: filler words never cut a word, everyday words that are also
company names, markets by instrument, names that contain a kind word, and follow-ups."""

from __future__ import annotations

import pytest

from pmflow_gateway.handlers.planners.rules import RulesPlanner, follow_up_question, plan_by_rules
from pmflow_gateway.schemas import AnswerContract, QueryKind
from tests.support.builders import route


@pytest.mark.parametrize(("question", "word"), [
    ("腾讯最近的新闻", "新闻"),
    ("小红书最近有什么新闻", "新闻"),
    ("字节跳动有没有新的融资", "融资"),
    ("比特币现在多少钱", "比特币"),
])
def test_filler_words_never_cut_a_word_in_two(question: str, word: str) -> None:
    queries = plan_by_rules(question).search_queries
    assert any(word in q.split() for q in queries), queries
    assert "闻" not in {w for q in queries for w in q.split()}
    assert "钱" not in {w for q in queries for w in q.split()}


@pytest.mark.parametrize("question", ["苹果公司股价多少", "苹果股价今天怎么样", "苹果的市值是多少"])
def test_an_everyday_word_in_a_share_question_is_the_company(question: str) -> None:
    plan = plan_by_rules(question)
    assert plan.query_kind is QueryKind.market
    assert "Apple Inc. stock price" in plan.search_queries


def test_an_everyday_word_in_a_company_question_searches_the_company_name() -> None:
    plan = plan_by_rules("苹果公司最新财报怎么样")
    assert plan.query_kind is QueryKind.company
    assert "Apple Inc." in plan.search_queries


@pytest.mark.parametrize("question", ["苹果多少钱一斤", "小米粥怎么煮好喝"])
def test_an_everyday_word_alone_is_not_a_company(question: str) -> None:
    plan = plan_by_rules(question)
    assert plan.query_kind is QueryKind.generic_web
    assert not any("stock" in q or "股价" in q for q in plan.search_queries)


@pytest.mark.parametrize(("question", "query"), [
    ("What is the Bitcoin price now?", "Bitcoin price"),
    ("以太坊价格", "以太坊 价格"),
    ("今天美元兑人民币汇率是多少", "美元兑人民币 汇率"),
    ("USD/CNY exchange rate today", "USD/CNY exchange rate"),
    ("EUR/USD rate right now", "EUR/USD exchange rate"),
    ("英镑兑人民币汇率", "英镑兑人民币 汇率"),
])
def test_coins_and_currencies_are_markets_not_shares(question: str, query: str) -> None:
    plan = plan_by_rules(question)
    assert plan.query_kind is QueryKind.market
    assert query in plan.search_queries
    assert not any("stock" in q or "股价" in q or "行情" in q for q in plan.search_queries)
    assert not {"nasdaq.com", "nyse.com", "sse.com.cn", "szse.cn"} & set(plan.preferred_domains)


def test_a_share_still_prefers_the_exchanges() -> None:
    plan = plan_by_rules("What is Tesla's stock price?")
    assert "Tesla stock price" in plan.search_queries
    assert "nasdaq.com" in plan.preferred_domains


@pytest.mark.parametrize("question", [
    "What is the Model Context Protocol?",
    "How does the Open Systems Interconnection Model work?",
])
def test_a_kind_word_inside_a_longer_name_does_not_decide_the_kind(question: str) -> None:
    assert plan_by_rules(question).query_kind is QueryKind.generic_web


def test_a_real_model_question_is_still_one() -> None:
    assert plan_by_rules("What is OpenAI's latest model?").query_kind is QueryKind.model
    assert plan_by_rules("GPT-5 context window").query_kind is QueryKind.model


@pytest.mark.parametrize(("question", "previous", "merged"), [
    ("那明天呢", "深圳今天天气怎么样", "深圳明天天气怎么样"),
    ("后天呢？", "北京明天会下雪吗", "北京后天会下雪吗"),
    ("what about tomorrow?", "What's the weather in Tokyo today?",
     "What's the weather in Tokyo tomorrow?"),
    ("how about next week?", "weather in Berlin", "weather in Berlin next week"),
    ("它的股价呢", "苹果公司最新财报怎么样", "苹果 它的股价呢"),
    # A follow-up that asks no metric of its own asks the previous one's.
    ("And for the whole of 2025?", "What was Brenholt Marine's revenue in Q3 2026?",
     "Brenholt Marine revenue And for the whole of 2025?"),
    ("那上半年呢", "澄河电子第三季度营收多少", "澄河电子 营收 那上半年呢"),
    ("它的股价呢", "澄河电子第三季度营收多少", "澄河电子 它的股价呢"),
])
def test_a_follow_up_is_asked_as_a_whole_question(question: str, previous: str,
                                                  merged: str) -> None:
    assert follow_up_question(question, previous) == merged


async def test_a_follow_up_with_the_previous_question_is_planned_with_its_subject() -> None:
    follow_up = route("那明天呢", previous_question="深圳今天天气怎么样")
    plan, info = await RulesPlanner().plan(follow_up)
    assert (plan.query_kind, plan.location_hint, plan.time_range_hint) == (
        QueryKind.weather, "深圳", "明天")
    assert plan.answer_contract is not AnswerContract.clarify
    assert info.reason and "深圳明天" in info.reason


async def test_a_question_that_goes_on_from_the_last_is_about_its_subject() -> None:
    follow_up = route("And for the whole of 2025?",
                      previous_question="What was Brenholt Marine's revenue in Q3 2026?")
    plan, _ = await RulesPlanner().plan(follow_up)
    assert plan.subject_entities == ["Brenholt Marine"] and "revenue" in plan.topic
    alone, _ = await RulesPlanner().plan(route("how tall is the Brenholt tower",
                                               previous_question="Orvik Lines revenue"))
    assert "Orvik" not in alone.topic


@pytest.mark.parametrize(("question", "previous"), [
    ("那明天呢", None), ("and its share price?", None), ("那明天呢", "嗯"),
])
async def test_a_follow_up_without_a_usable_thread_asks_to_clarify(
        question: str, previous: str | None) -> None:
    plan, info = await RulesPlanner().plan(route(question, previous_question=previous))
    assert plan.answer_contract is AnswerContract.clarify
    assert info.reason


@pytest.mark.parametrize(("question", "locale", "queries"), [
    ("东京明天天气怎么样", "zh-CN", ["东京 明天天气", "Tokyo weather tomorrow", "东京 天气预报"]),
    ("伦敦未来3天天气", "zh-CN", ["伦敦 未来3天天气", "London weather next 3 days",
                             "伦敦 天气 3日预报"]),
    ("Shenzhen weather tomorrow", "en-US", ["Shenzhen weather tomorrow", "深圳 明天天气",
                                            "Shenzhen weather forecast"]),
])
def test_a_place_abroad_is_also_searched_in_its_own_language(question: str, locale: str,
                                                            queries: list[str]) -> None:
    assert plan_by_rules(question, locale=locale).search_queries == queries


@pytest.mark.parametrize(("question", "locale"), [
    ("帮我看看未来 5 天的广州天气如何", "zh-CN"), ("Paris weather tomorrow", "en-US")])
def test_a_place_asked_in_its_own_language_gets_no_extra_query(question: str,
                                                              locale: str) -> None:
    assert len(plan_by_rules(question, locale=locale).search_queries) == 2
