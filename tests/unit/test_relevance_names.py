"""Names the question contract reads without a list: short names in brackets, short names a
page declares, and a long rare name misspelt by one letter."""

from __future__ import annotations

from pmflow_gateway.contract.relevance import (
    name_forms,
    names,
    one_edit_apart,
    with_declared_aliases,
)
from pmflow_gateway.handlers.planners.rules import draft_plan
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind


def test_a_short_name_in_brackets_is_the_same_thing() -> None:
    assert set(name_forms("Orvik Lines (ORVK)")) >= {"Orvik Lines", "ORVK"}
    assert names("Orvik Lines (ORVK)", "ORVK closed at 41.20 crowns.")


def test_a_page_may_declare_the_short_name_of_an_asked_subject() -> None:
    plan = ExternalQueryPlan(query_kind=QueryKind.market, topic="orvik lines shares",
                             subject_entities=["orvik lines"])
    pages = ["Orvik Lines (OSE: ORVK) opened a new route.", "ORVK closed at 41.20 crowns."]
    assert with_declared_aliases(plan, pages).subject_entities == ["orvik lines (ORVK)"]
    assert with_declared_aliases(plan, pages[1:]) is plan


def test_a_long_rare_name_misspelt_by_one_letter_still_names_it() -> None:
    assert names("velotrix", "Velotrik recalls 900 scooters")
    assert not names("velotrix", "Velotrik recalls 900 scooters", exactly=True)
    assert not names("velo", "Vela recalls scooters")  # too short to guess
    assert one_edit_apart("abcdef", "abdcef") and not one_edit_apart("abcdef", "abxyef")


def test_a_model_number_may_be_written_apart_or_joined() -> None:
    assert names("note12", "The Qiyun Note 12 goes on sale.")
    assert names("Aero 7", "the aero7 headset")
    assert not names("note12", "The Note 13 goes on sale.")


def test_a_title_in_book_brackets_is_named_whatever_its_punctuation() -> None:
    assert names("《雾港 来信》", "电影《雾港·来信》上映首日票房破亿")
    assert names("《雾港·来信》", "雾港来信首周末票房2.1亿元")
    assert not names("《雾港 来信》", "电影《雾港·归人》上映首日票房破亿")
    plan, _ = draft_plan("《雾港 来信》评分几分", locale="zh-CN")
    assert plan.subject_entities == ["《雾港 来信》"]
