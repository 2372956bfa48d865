"""The rules planner and the gateway step that finishes every plan."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the test extras
from hypothesis import given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract.currencies import currency_names
from pmflow_gateway.contract.gazetteer import COMPANIES, MARKET_NAMES, MODELS
from pmflow_gateway.handlers.plan import finish_plan, is_for_us, plan_question
from pmflow_gateway.handlers.planners.rules import RulesPlanner, draft_plan, plan_by_rules
from pmflow_gateway.handlers.planners.words import latin, one_of
from pmflow_gateway.ports import PlanDefaults
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    QueryKind,
)
from pmflow_gateway.schemas.events import QueryProfile
from tests.fakes import FixedClock
from tests.support.builders import route

SCHEMA = jsonschema.Draft202012Validator(ExternalQueryPlan.model_json_schema())



def test_the_seed_example_is_planned_exactly_as_the_contract_shows() -> None:
    # The contract's example plan, with one deliberate difference: the rules planner always
    # sets clarify_on_ambiguity, because when the evidence reads the place two ways asking
    # which one beats both guessing and refusing.
    plan = plan_by_rules("帮我看看未来 5 天的广州天气如何")
    assert plan.model_dump(mode="json", exclude={"preferred_domains"}) == {
        "plan_version": "v1", "query_kind": "weather", "answer_contract": "summary_with_sources",
        "freshness_required": True, "topic": "广州未来5天天气", "subject_entities": ["广州"],
        "location_hint": "广州", "time_range_hint": "未来5天",
        "search_queries": ["广州 未来5天天气", "广州 天气 5日预报"], "result_limit": 3,
        "requires_multi_source": False, "clarify_on_ambiguity": True}
    assert plan.preferred_domains == ["weather.com.cn", "nmc.cn"]


async def test_a_question_without_a_subject_is_planned_as_clarify_with_the_reason() -> None:
    plan, info = await RulesPlanner().plan(route("最新消息呢"))
    assert plan.answer_contract is AnswerContract.clarify
    assert plan.clarify_on_ambiguity and plan.search_queries == []
    assert info.mode == "rules" and info.reason and "subject" in info.reason


async def test_weather_without_a_place_asks_for_the_place() -> None:
    plan, info = await RulesPlanner().plan(route("明天会下雨吗"))
    assert plan.answer_contract is AnswerContract.clarify
    assert info.reason == "weather question without a place"


def test_freshness_can_come_from_the_route_profile_alone() -> None:
    assert not plan_by_rules("腾讯的 CEO 是谁").freshness_required
    assert plan_by_rules("腾讯的 CEO 是谁", needs_freshness=True).freshness_required


def test_a_comparison_asks_for_several_sources_and_phrases_the_comparison() -> None:
    plan = plan_by_rules("Claude Opus vs GPT-5 for coding", locale="en-US")
    assert plan.answer_contract is AnswerContract.compare_with_sources
    assert plan.requires_multi_source and plan.result_limit == 5
    assert "Claude Opus vs GPT-5" in plan.search_queries
    assert plan.preferred_domains == ["anthropic.com", "openai.com"]


def test_names_keep_the_users_spelling_and_places_the_tables() -> None:
    assert plan_by_rules("is nvidia stock up today").subject_entities == ["nvidia"]
    # A place the place table knows is written as pages write it.
    assert plan_by_rules("weather in singapore today").subject_entities == ["Singapore"]
    assert plan_by_rules("tromso weather tomorrow").location_hint == "Tromsø"


def test_an_unknown_chinese_company_is_found_by_its_shape() -> None:
    assert plan_by_rules("泡泡玛特最近股价").subject_entities == ["泡泡玛特"]
    assert plan_by_rules("这家理想汽车怎么样").subject_entities == ["理想汽车"]


def test_preferred_domains_are_configurable() -> None:
    domains = {(QueryKind.weather, "zh"): ("example.cn",)}
    plan, _ = draft_plan("北京明天天气", domains=domains)
    assert plan.preferred_domains == ["example.cn"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_gets_a_plan_that_validates_against_the_schema(question: str) -> None:
    plan, _ = draft_plan(question)
    SCHEMA.validate(plan.model_dump(mode="json"))
    finished = finish_plan(plan, route("x"), PlanDefaults())
    SCHEMA.validate(finished.model_dump(mode="json"))
    ExternalQueryPlan.model_validate(finished.model_dump())


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1000, max_size=4000))
def test_long_text_is_planned_too(question: str) -> None:
    ExternalQueryPlan.model_validate(plan_by_rules(question).model_dump())


def test_planning_is_fast() -> None:
    questions = ["帮我看看未来 5 天的广州天气如何", "Claude Opus vs GPT-5 for coding",
                 "今天美元兑人民币汇率是多少", "What's Nvidia's market cap right now?",
                 "最新消息呢", "x" * 4000, "天气" * 2000]
    started = time.perf_counter()
    for _ in range(50):
        for question in questions:
            plan_by_rules(question)
    per_plan_ms = (time.perf_counter() - started) * 1000 / (50 * len(questions))
    # Generous: a plan costs well under a millisecond; this only catches a pathological regex.
    assert per_plan_ms < 20, per_plan_ms


def test_finish_plan_clamps_drops_caps_and_normalises() -> None:
    proposed = ExternalQueryPlan(
        search_queries=["", "  广州   天气 ", "广州 天气", "x" * 300, "a", "b", "c"],
        subject_entities=[" 广州", "广州", "", "GPT-4o", "gpt-4o"],
        location_hint="  ", time_range_hint=" 明天 ", topic="  ")
    proposed = proposed.model_copy(update={"result_limit": 50})
    plan = finish_plan(proposed, route("广州天气"), PlanDefaults())
    assert plan.search_queries == ["广州 天气", "a", "b"]
    assert plan.subject_entities == ["广州", "GPT-4o"]
    assert plan.result_limit == 10
    assert plan.location_hint is None and plan.time_range_hint == "明天"
    assert plan.topic == "广州天气"
    low = finish_plan(proposed.model_copy(update={"result_limit": -3}), route("q"), PlanDefaults())
    assert low.result_limit == 1


def test_finish_plan_gives_a_searchable_plan_a_query_but_leaves_clarify_empty() -> None:
    empty = ExternalQueryPlan(search_queries=[])
    assert finish_plan(empty, route("广州 天气"), PlanDefaults()).search_queries == ["广州 天气"]
    clarify = ExternalQueryPlan(answer_contract=AnswerContract.clarify)
    finished = finish_plan(clarify, route("最新消息呢"), PlanDefaults())
    assert finished.search_queries == [] and finished.clarify_on_ambiguity


def test_finish_plan_respects_the_configured_caps() -> None:
    proposed = ExternalQueryPlan(search_queries=["one query", "two", "three q", "four"])
    plan = finish_plan(proposed, route("q"), PlanDefaults(max_queries=2, max_query_chars=8))
    assert plan.search_queries == ["two", "three q"]


async def test_plan_question_uses_the_planner_and_skips_internal_routes() -> None:
    clock = FixedClock()
    created = await plan_question(
        route("帮我看看未来 5 天的广州天气如何",
              query_profile=QueryProfile(needs_freshness=True)),
        planner=RulesPlanner(), clock=clock, defaults=PlanDefaults())
    assert created is not None
    assert created.plan.location_hint == "广州" and created.planner.mode == "rules"
    assert not is_for_us(route("内部问题", route_mode="internal"))
    assert await plan_question(route("内部问题", route_mode="internal"), planner=RulesPlanner(),
                               clock=clock, defaults=PlanDefaults()) is None


def test_finish_plan_keeps_only_bare_preferred_domains() -> None:
    proposed = ExternalQueryPlan(preferred_domains=[
        "https://www.NMC.cn/forecast", "nmc.cn", "weather.com.cn", "javascript:alert(1)",
        "localhost", "evil example.com", ""])
    plan = finish_plan(proposed, route("q"), PlanDefaults())
    assert plan.preferred_domains == ["nmc.cn", "weather.com.cn"]


def _alternation(names: set[str]) -> re.Pattern[str]:
    """The names as one plain alternation, longest first: what `one_of` must match alike."""
    return re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))


_NAME_SETS = {
    "models": {n.lower() for n in MODELS}, "companies": {n.lower() for n in COMPANIES},
    "markets": {n.lower() for n in [*MARKET_NAMES, *currency_names()]},
}


def _questions() -> list[str]:
    data = Path(__file__).resolve().parents[1] / "data"
    lines = [line for path in sorted(data.glob("*.jsonl"))
             for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [json.loads(line)["question"].lower() for line in lines]


def test_a_trie_of_names_matches_what_their_alternation_matches() -> None:
    questions = _questions()
    assert len(questions) > 500
    for names in _NAME_SETS.values():
        trie, plain = re.compile(one_of(names)), _alternation(names)
        wrapped, plain_wrapped = re.compile(latin(one_of(names))), re.compile(latin(plain.pattern))
        for text in [*questions, *names, " ".join(sorted(names)[:50])]:
            assert [m.span() for m in trie.finditer(text)] == [
                m.span() for m in plain.finditer(text)], text
            assert [m.span() for m in wrapped.finditer(text)] == [
                m.span() for m in plain_wrapped.finditer(text)], text


@given(st.text(alphabet="abcd 1", max_size=12), st.sets(st.text(alphabet="abcd", min_size=1,
                                                                   max_size=4), min_size=1))
@settings(max_examples=400, deadline=None)
def test_a_trie_of_any_words_matches_their_alternation(text: str, names: set[str]) -> None:
    for pattern, plain in ((one_of(names), _alternation(names).pattern),
                           (latin(one_of(names)), latin(_alternation(names).pattern))):
        assert [m.span() for m in re.finditer(pattern, text)] == [
            m.span() for m in re.finditer(plain, text)]


@given(day=st.sampled_from(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                            "Saturday", "Sunday", "December", "May", "October"]),
       form=st.sampled_from(["Will it rain on {d}?", "What's the forecast for {d}?",
                             "Weather for {d}", "What's the weather this {d}?"]))
@settings(max_examples=40, deadline=None)
def test_a_day_or_month_is_never_the_place_of_a_weather_question(day: str, form: str) -> None:
    """A capitalised day or month names a time: a weather question with nothing else in it
    asks back for the place instead of searching a place called "Sunday"."""
    plan = plan_by_rules(form.format(d=day))
    assert plan.query_kind is QueryKind.weather
    assert plan.location_hint is None and plan.subject_entities == []
    assert plan.answer_contract is AnswerContract.clarify


def test_a_day_or_month_within_a_name_stays_in_the_name() -> None:
    assert plan_by_rules("What's the weather on Friday in Leeds?").location_hint == "Leeds"
    assert plan_by_rules("News about Apple on Monday").subject_entities == ["Apple"]
    assert plan_by_rules("What happened on Black Friday?").subject_entities == ["Black Friday"]
    assert plan_by_rules("What did Theresa May say?").subject_entities == ["Theresa May"]
