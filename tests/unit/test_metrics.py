"""Metrics and periods: a question that names a figure is answered only by that figure, and a
night question only by the night's line."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.metrics import (
    asked_metrics,
    asked_periods,
    asks_a_change,
    other_figure,
)
from pmflow_gateway.contract.relevance import off_topic
from pmflow_gateway.contract.when import speaks_of
from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.schemas import AnswerContract, ExternalQueryPlan, QueryKind
from tests.fakes import evidence
from tests.support.builders import weather_plan


@pytest.mark.parametrize(("question", "metrics"), [
    ("Nintendo net income last quarter", {"profit"}), ("宁德时代净利润多少", {"profit"}),
    ("Siemens revenue 2025", {"revenue"}), ("比亚迪营收", {"revenue"}),
    ("What is Adobe's market cap", {"market_cap"}), ("茅台市值", {"market_cap"}),
    ("How many people live in Porto?", {"population"}), ("成都人口多少", {"population"}),
    ("Intel latest earnings", set()), ("Oslo weather tomorrow", set()),
    ("《雾港》评分几分", {"rating"}), ("how is Tidewater Blue rated", {"rating"}),
    ("《雾港》票房多少", {"box_office"}),
])
def test_the_asked_metric_is_read_in_both_languages(question: str, metrics: set[str]) -> None:
    assert asked_metrics(question) == metrics


@pytest.mark.parametrize(("question", "periods"), [
    ("Nike revenue last quarter", {"quarter"}), ("海尔第二季度营收", {"quarter"}),
    ("Nike annual revenue", {"year"}), ("Nike anual revenue", {"year"}),
    ("Nike first-half revenue", {"half"}), ("Nike revenue for the whole of 2025", {"year"}),
    ("海尔去年全年营收", {"year"}), ("Nike revenue", set()),
])
def test_the_asked_period_is_read(question: str, periods: set[str]) -> None:
    assert asked_periods(question) == periods


@pytest.mark.parametrize(("question", "sentence"), [
    ("Nintendo net profit last quarter", "Nintendo posted quarterly revenue of $9.1 billion."),
    ("Adobe market cap", "ADBE last traded at $512.30, up 0.4%."),
    ("How many people live in Porto?", "The Porto marathon takes place on 2 November."),
    ("海尔去年全年营收多少", "海尔第二季度营收700亿元。"),
    ("Nike revenue last quarter", "Nike's full fiscal-year revenue reached $51 billion."),
    ("Nike annual revenue", "Nike reported fiscal second-quarter revenue of $12.4 billion."),
    ("《雾港》评分几分", "电影《雾港》上映第5天，累计票房突破2.3亿元。"),
])
def test_another_metric_or_period_is_not_the_answer(question: str, sentence: str) -> None:
    assert other_figure(question, sentence) is not None


@pytest.mark.parametrize(("question", "sentence"), [
    ("Nintendo net profit last quarter", "Nintendo's quarterly net income was $2.1 billion."),
    ("Adobe market cap", "Adobe is valued at about $230 billion."),
    ("How many people live in Porto?", "Porto has about 230,000 residents."),
    ("海尔去年全年营收多少", "海尔全年营收2800亿元。"),
    ("Intel latest earnings", "Intel reported quarterly revenue of $13 billion."),
    ("《雾港》评分几分", "该片在评分网站的评分为8.1分。"),
])
def test_the_asked_figure_may_answer(question: str, sentence: str) -> None:
    assert other_figure(question, sentence) is None


def test_the_composer_keeps_only_the_asked_period() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company,
                             answer_contract=AnswerContract.summary_with_sources,
                             topic="Nike revenue last quarter", subject_entities=["Nike"],
                             search_queries=["Nike revenue last quarter"])
    items = [evidence("https://a.example.org/1",
                      "Nike reported quarterly revenue of $12.4 billion."),
             evidence("https://b.example.org/2", "Nike's full-year revenue reached $51 billion.")]
    draft = compose_extractive("Nike revenue last quarter", plan, items)
    assert "12.4" in draft.answer and "51 billion" not in draft.answer


def test_a_profit_question_gets_no_revenue_line() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.company,
                             answer_contract=AnswerContract.direct_fact,
                             topic="Nintendo net profit", subject_entities=["Nintendo"],
                             search_queries=["Nintendo net profit"])
    items = [evidence("https://a.example.org/1", "Nintendo posted revenue of $9.1 billion.")]
    assert compose_extractive("Nintendo net profit", plan, items).answer == ""


def test_tonight_is_the_night_not_the_daytime() -> None:
    assert not speaks_of("哈尔滨今天白天晴，最高-8℃。", "tonight")
    assert speaks_of("哈尔滨今天夜间多云，最低-21℃。", "tonight")
    plan = weather_plan(location_hint="哈尔滨", subject_entities=["哈尔滨"], topic="哈尔滨今晚天气",
                        time_range_hint="今晚", answer_contract=AnswerContract.direct_fact,
                        search_queries=["哈尔滨 今晚天气"])
    items = [evidence("https://a.example.org/1", "哈尔滨今天白天晴，最高-8℃。")]
    assert compose_extractive("哈尔滨今晚多少度", plan, items).answer == ""


def test_a_market_cap_page_needs_no_quoted_price() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.market,
                             answer_contract=AnswerContract.direct_fact,
                             topic="Nvidia market cap", subject_entities=["Nvidia"],
                             search_queries=["Nvidia market cap"])
    page = "Nvidia market value\nNvidia's market capitalisation reached $4 trillion."
    assert off_topic(plan, page) is None
    price = plan.model_copy(update={"topic": "Nvidia share price"})
    assert off_topic(price, page) is not None


def test_attendance_is_not_a_population() -> None:
    assert asked_metrics("How many people attended Nvidia GTC?") == set()
    assert asked_metrics("How many people live in Valencia?") == {"population"}


def _quote(question: str, subject: str, page: str) -> str:
    """The extractive answer to a direct company question from one page."""
    plan = ExternalQueryPlan(query_kind=QueryKind.company,
                             answer_contract=AnswerContract.direct_fact, topic=question,
                             subject_entities=[subject], search_queries=[question])
    return compose_extractive(question, plan, [evidence("https://a.example.org/1", page)]).answer


@pytest.mark.parametrize(("question", "quoted", "left_out"), [
    ("澄河电子2027年营收目标是多少", "2027年营收目标为210亿元", "180亿元"),
    ("澄河电子预计2026年全年营收多少", "180亿元至186亿元", "210亿元"),
])
def test_one_fact_per_line_a_clause_with_another_years_figure_is_left_out(
        question: str, quoted: str, left_out: str) -> None:
    answer = _quote(question, "澄河电子",
                    "澄河电子表示，预计2026年全年营业收入为180亿元至186亿元，2027年营收目标为210亿元。")
    assert quoted in answer and left_out not in answer


def test_another_editions_clause_is_left_out_and_a_share_is_no_revenue() -> None:
    answer = _quote("What is the price of the base Tarrel Vista?", "Tarrel Vista",
                    "The base Tarrel Vista costs $899 with 16GB of memory, while the Vista Lite "
                    "starts at $549 with an 8-core chip.")
    assert "$899" in answer and "$549" not in answer
    share = "澄河电子表示，海外渠道收入占比提升至37%。"
    assert _quote("澄河电子上半年营收多少", "澄河电子", share) == ""


def test_a_change_in_percent_stays_with_its_figure() -> None:
    answer = _quote("澄河电子第三季度营收多少", "澄河电子",
                    "澄河电子第三季度实现营业收入41.2亿元，同比增长8.2%，前三季度累计营收112.9亿元。")
    assert "41.2亿元，同比增长8.2%" in answer and "112.9" not in answer


@pytest.mark.parametrize(("question", "sentence", "answers"), [
    ("What is Velsted's latest unemployment rate?",
     "Velsted National Bank lowered its policy rate to 3.25% on Thursday.", False),
    ("What is Velsted's latest unemployment rate?",
     "Velsted's jobless rate fell to 4.1% in November.", True),
    ("What is the latest inflation rate in Norway?",
     "The central bank raised its key rate to 4.5%.", False),
    ("What is the latest inflation rate in Norway?",
     "Consumer prices rose 3.1% from a year earlier.", True),
    ("What's the Fed's interest rate now?", "US inflation eased to 2.7% in November.", False),
    ("What's the Fed's interest rate now?", "The Fed held rates steady at 4.25%.", True),
    ("海南10月CPI同比涨多少", "10月份海南省居民消费价格同比上涨0.8%。", True),
    ("最新失业率是多少", "央行宣布降息25个基点。", False),
])
def test_one_rate_of_an_economy_is_no_answer_to_another(question: str, sentence: str,
                                                         answers: bool) -> None:
    assert (other_figure(question, sentence) is None) is answers
    assert asks_a_change(question)  # a rate is a percentage, not an amount
