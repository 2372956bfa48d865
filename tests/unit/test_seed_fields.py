"""The plan fields that steer the answer: requires_multi_source (two independent sites that
agree), preferred_domains and authority_score (which evidence is used first and kept)."""

from __future__ import annotations

from pmflow_gateway.contract.agreement import DISAGREE, disagreement, key_figures
from pmflow_gateway.contract.scoring import authority_score
from pmflow_gateway.contract.verify import verify_evidence
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerStatus,
    ExternalEvidence,
    ExternalQueryPlan,
    QueryKind,
)
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose, weather_plan

INDEX = ExternalQueryPlan(query_kind=QueryKind.market, answer_contract=AnswerContract.direct_fact,
                          freshness_required=True, topic="上证指数 收盘",
                          subject_entities=["上证指数"], search_queries=["上证指数 收盘"],
                          requires_multi_source=True)
TOMORROW = weather_plan(time_range_hint="明天", topic="广州明天天气",
                        search_queries=["广州 明天天气"], requires_multi_source=True)


def _index_page(url: str, level: str) -> ExternalEvidence:
    return evidence(url, f"今日A股收盘，上证指数收报{level}点，涨0.35%。")


async def test_two_sites_quoting_the_same_level_agree() -> None:
    items = [_index_page("https://markets.example/sse", "3412.56"),
             _index_page("https://quotes.example.net/sse", "3,412.60")]
    answer = await verify_and_compose(collected(items, plan=INDEX, question="上证指数收盘多少"),
                                      clock=CLOCK)
    assert answer.status is AnswerStatus.answered
    assert answer.verdict.multi_source_ok is True
    assert "未能多来源交叉验证" not in answer.answer


async def test_two_sites_quoting_different_levels_carry_the_disagreement_note() -> None:
    items = [_index_page("https://markets.example/sse", "3412.56"),
             _index_page("https://quotes.example.net/sse", "3290.10")]
    answer = await verify_and_compose(collected(items, plan=INDEX, question="上证指数收盘多少"),
                                      clock=CLOCK)
    assert answer.status is AnswerStatus.answered and answer.verdict.multi_source_ok is False
    assert answer.answer.endswith("（各来源给出的数字不一致，未能多来源交叉验证。）")
    [why] = [r for r in answer.verdict.dropped_reasons if r.startswith(DISAGREE)]
    assert "3412.56" in why and "3290.1" in why
    assert answer.verdict.dropped == len(answer.verdict.dropped_reasons) - 1


async def test_two_pages_of_one_registrable_domain_are_one_source() -> None:
    items = [_index_page("https://a.markets.example/sse", "3412.56"),
             _index_page("https://b.markets.example/sse", "3412.56")]
    answer = await verify_and_compose(collected(items, plan=INDEX, question="上证指数收盘多少"),
                                      clock=CLOCK)
    assert answer.verdict.multi_source_ok is False
    assert answer.answer.endswith("（仅找到一个来源，未能多来源交叉验证。）")


def test_for_one_asked_day_the_days_numbers_are_compared() -> None:
    ours = ("a.example", "广州今天晴，23~30℃；明天雷阵雨，22~28℃。")
    close = ("b.example", "广州明天有雷阵雨，气温22到28度；今天晴，30℃。")
    other = ("c.example", "广州明天晴，31~35℃。")
    assert key_figures(TOMORROW, ours[1]) == {22.0, 28.0}
    assert disagreement(TOMORROW, [ours, close]) is None
    assert (disagreement(TOMORROW, [ours, other]) or "").startswith(
        f"{DISAGREE}a.example 22/28 vs c.example 31/35")


def test_pages_without_key_figures_contradict_nothing() -> None:
    period = weather_plan(requires_multi_source=True)
    assert key_figures(period, "广州明天雷阵雨，22~28℃。") == set()
    assert disagreement(TOMORROW, [("a.example", "广州明天有雨。"),
                                   ("b.example", "广州明天雷阵雨，22~28℃。")]) is None


# ------------------------------------------------------------ preferred domains, authority


def test_a_preferred_domain_raises_authority_and_https_a_little() -> None:
    assert authority_score("https://www.nmc.cn/gz", ["nmc.cn"]) == 0.9
    assert authority_score("https://www.nmc.cn/gz", []) == 0.4
    assert authority_score("http://blog.example/gz", []) == 0.3


def _ranked(url: str, authority: float) -> ExternalEvidence:
    item = evidence(url, "广州未来5天以多云为主，气温18到25度。")
    return item.model_copy(update={"authority_score": authority})


def test_preferred_domains_come_first_then_authority_and_the_limit_keeps_them() -> None:
    items = [_ranked("https://blog.example/gz", 0.4), _ranked("https://gov.example.org/gz", 0.7),
             _ranked("https://www.nmc.cn/gz", 0.3), _ranked("https://forum.example/gz", 0.3)]
    kept, _ = verify_evidence(collected(items, plan=weather_plan(
        preferred_domains=["nmc.cn"], result_limit=3)))
    assert [i.target_url for i in kept] == ["https://www.nmc.cn/gz", "https://gov.example.org/gz",
                                            "https://blog.example/gz"]


async def test_the_answer_cites_the_preferred_source_first() -> None:
    items = [_ranked("https://blog.example/gz", 0.4), _ranked("https://www.nmc.cn/gz", 0.3)]
    answer = await verify_and_compose(collected(items, plan=weather_plan(
        preferred_domains=["nmc.cn"], answer_contract=AnswerContract.direct_fact)), clock=CLOCK)
    assert [s.url for s in answer.sources_used] == ["https://www.nmc.cn/gz"]
