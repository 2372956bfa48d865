"""Variants: a longer name that contains the asked one (an edition, a women's team, a fork
of a coin, a shadow office) is not a mention of the asked one."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from pmflow_gateway.contract.relevance import fits_the_question, off_topic
from pmflow_gateway.contract.variants import asked_models, asked_titles, only_variants
from pmflow_gateway.handlers.planners.rules import RulesPlanner, plan_by_rules
from pmflow_gateway.schemas import AnswerContract, ExternalQueryPlan, QueryKind, RouteDecided


@pytest.mark.parametrize(("name", "text"), [
    ("Pixel 10 Pro", "The Pixel 10 Pro XL starts at $1,199."),
    ("Pixel 10 Pro", "The Pixel 10 starts at $799."),
    ("Galaxy S26", "The Galaxy S26 Ultra has a 200MP camera."),
    ("Galaxy S26", "Galaxy S26 Edge is thinner."),
    ("Dimensity 9500", "The Dimensity 9500 Plus runs at 3.7GHz."),
    ("Exynos 2600", "Exynos 2600 Lite ships in cheaper phones."),
    ("Juventus", "Juventus Women won 4-1 on Saturday."),
    ("尤文图斯", "尤文图斯女足4比1获胜。"),
    ("Litecoin", "Litecoin Cash (LCC) rose 5%."),
    ("Ethereum", "Ethereum Classic (ETC) trades at $18."),
    ("Claude 4", "Claude 4.5 is available in the API."),
    ("home secretary", "The shadow home secretary criticised the plan."),
    ("prime minister", "The former prime minister said the deal was weak."),
])
def test_a_longer_name_is_not_the_asked_one(name: str, text: str) -> None:
    assert only_variants(name, text)


@pytest.mark.parametrize(("name", "text"), [
    ("Pixel 10 Pro", "The Pixel 10 Pro starts at $999, the Pixel 10 Pro XL at $1,199."),
    ("Galaxy S26 Ultra", "The Galaxy S26 Ultra has a 200MP camera."),
    ("Juventus", "Juventus beat Roma 2-0."),
    ("尤文图斯", "尤文图斯2比0击败罗马。"),
    ("Litecoin", "Litecoin (LTC) trades at $85."),
    ("Nvidia", "Nvidia Corp (NVDA) rose 2%."),
    ("home secretary", "The home secretary announced new visa rules."),
    ("Juventus", "Roma won 1-0 at home."),
])
def test_the_asked_name_itself_is_a_mention(name: str, text: str) -> None:
    assert not only_variants(name, text)


def test_model_names_and_offices_are_read_from_the_question() -> None:
    assert asked_models("dimensity 9500 benchmark score", []) == ["dimensity 9500"]
    assert asked_models("Galaxy S26 Ultra battery life", []) == ["Galaxy S26 Ultra"]
    assert asked_models("Galaxy S26 Ultra battery life", ["Galaxy S26 Ultra"]) == []
    assert asked_titles("what did the home secretary say") == ["home secretary"]


def _plan(subject: str, topic: str) -> ExternalQueryPlan:
    return ExternalQueryPlan(query_kind=QueryKind.generic_web,
                             answer_contract=AnswerContract.summary_with_sources, topic=topic,
                             subject_entities=[subject] if subject else [],
                             search_queries=[topic])


def test_a_sentence_about_a_variant_does_not_answer() -> None:
    plan = _plan("Juventus", "Juventus result last game")
    assert not fits_the_question(plan, "Juventus Women beat Milan Women 2-0.")
    assert fits_the_question(plan, "Juventus beat Roma 2-0 on Sunday.")
    chip = _plan("", "dimensity 9500 clock speed")
    assert not fits_the_question(chip, "The Dimensity 9500 Plus runs at up to 4.2GHz.")
    assert fits_the_question(chip, "The Dimensity 9500 runs at up to 4.0GHz.")
    office = _plan("", "what did the home secretary announce")
    assert not fits_the_question(office, "The shadow home secretary said it will fail.")


def test_a_page_only_about_a_variant_is_off_topic() -> None:
    plan = _plan("Litecoin", "Litecoin price")
    why = off_topic(plan, "Litecoin Cash (LCC) price today\nLitecoin Cash (LCC) trades at $2.")
    assert why is not None and "longer name" in why
    assert off_topic(plan, "Litecoin price today\nLitecoin (LTC) trades at $85.") is None


def test_a_bare_edition_follows_up_on_the_previous_subject() -> None:
    route = RouteDecided.model_validate({
        "event_id": "e-1", "question_id": "q-1", "tenant_id": "t", "schema_version": 1,
        "occurred_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat(), "question": "Ultra呢",
        "locale": "zh-CN", "thread_id": "t-1", "previous_question": "Galaxy S26 多少钱",
        "route_mode": "external", "effective_source_policy": "external_only",
        "decision_origin": "probe", "reply_contract": "external_realtime",
        "query_profile": {"needs_private_context": False, "needs_freshness": True,
                          "referenced_objects": []}})
    plan, _ = asyncio.run(RulesPlanner().plan(route))
    assert any("S26" in s and "Ultra" in s for s in plan.subject_entities), plan



def test_an_edition_alone_is_asked_back() -> None:
    # An edition of what? Any page about any Pro would pass as evidence.
    for question in ["那个Pro版多少钱", "How much is the Pro version?", "Ultra呢"]:
        plan = plan_by_rules(question)
        assert plan.answer_contract is AnswerContract.clarify, question
        assert plan.search_queries == [], question
    # A known name that is also an edition word is a name: gold the commodity.
    assert plan_by_rules("gold price today").answer_contract is not AnswerContract.clarify
