"""The shared rules of `pmflow_gateway.contract`: what a site is, and which asked slots a
piece of evidence mentions (one meaning, whichever adapter found the evidence)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pmflow_gateway.contract.scoring import (
    FRESH_ENOUGH,
    freshness_score,
    freshness_window,
    grounded_fields,
)
from pmflow_gateway.contract.text import is_cjk, split_sentences
from pmflow_gateway.contract.urls import canonical_url, registrable_domain, site_of
from pmflow_gateway.schemas import ExternalQueryPlan

WEATHER = ExternalQueryPlan(
    query_kind="weather", freshness_required=True, topic="广州未来5天天气",
    subject_entities=["广州"], location_hint="广州", time_range_hint="未来5天",
    search_queries=["广州 未来5天天气", "广州 天气 5日预报"], result_limit=3)
ALL = ["location_hint", "time_range_hint", "subject_entities"]


@pytest.mark.parametrize(("url", "site"), [
    ("https://mausam.imd.gov.in/forecast", "imd.gov.in"),
    ("https://www.bbc.co.uk/weather", "bbc.co.uk"),
    ("https://alice.github.io/post", "alice.github.io"),
    ("http://203.0.113.9/x", "203.0.113.9"),
    ("http://localhost:8080/", "localhost"),
    ("https://a.b.site.example/x", "site.example"),  # unknown suffix: its last two labels
    ("not a url", ""),
])
def test_site_of_is_the_public_suffix_plus_one_label(url: str, site: str) -> None:
    assert site_of(url) == site


def test_sites_under_a_shared_hosting_suffix_are_distinct() -> None:
    assert site_of("https://alice.github.io/") != site_of("https://bob.github.io/")
    assert registrable_domain("alice.github.io") == "alice.github.io"
    assert site_of("https://news.bbc.co.uk/") == site_of("https://www.bbc.co.uk/sport")


def test_canonical_url_ignores_case_fragment_and_trailing_slash() -> None:
    assert canonical_url("HTTPS://Example.COM/a/#top") == canonical_url("https://example.com/a")
    assert canonical_url("https://example.com/a?b=1") != canonical_url("https://example.com/a")


def test_cjk_class_and_sentence_splitter() -> None:
    assert is_cjk("東京の天気") and is_cjk("서울 날씨") and is_cjk("广州")
    assert not is_cjk("Guangzhou weather")
    assert split_sentences("第一句。第二句！Third one. v3.5 is out\nLast") == [
        "第一句。", "第二句！", "Third one.", "v3.5 is out", "Last"]


@pytest.mark.parametrize("sentence", [
    "Harbor Mills Co. chief executive Dana Reyes said output would double.",
    "Mr. Okafor and Mrs. Lindqvist met Dr. Haas in the U.S. capital on Friday.",
    "The vote is set for Dec. 15 at 2:30 p.m. local time, not 9 a.m. as planned.",
    "The No. 3 seed beat Rovers vs. the odds at St. Brendan's Park.",
    "Orbis Inc. and Talbot Jr. signed it, e.g. the lease on the Gen. Lee estate.",
    "J. Smith and A. B. Ortega wrote the report.",
])
def test_a_full_stop_after_an_abbreviation_or_initial_ends_no_sentence(sentence: str) -> None:
    assert split_sentences(f"{sentence} The next one starts here.") == [
        sentence, "The next one starts here."]


def test_a_sentence_may_end_in_an_abbreviation_or_a_quote() -> None:
    assert split_sentences("She moved to the U.S. Her firm followed.") == [
        "She moved to the U.S.", "Her firm followed."]
    assert split_sentences('"We will build it." Then the mayor left.') == [
        '"We will build it."', "Then the mayor left."]


def test_a_full_stop_inside_a_word_never_splits() -> None:
    # A host cut in two would slip past the link checks, which read one sentence at a time.
    assert split_sentences("Go to Evil.Com now. Pay 3.5 yuan.Then wait") == [
        "Go to Evil.Com now.", "Pay 3.5 yuan.Then wait"]
    assert split_sentences("价格3.5元。美国（U.S.）市场；另一句") == [
        "价格3.5元。", "美国（U.S.）市场；", "另一句"]
    # Nor does a dot written to slip past a filter: "。" between Latin letters, " . " apart.
    spelled = ["详见 harbor。shop 。", "详见 ｈａｒｂｏｒ。ｓｈｏｐ 。", "见 harbor . shop 。"]
    assert split_sentences("".join(spelled) + "完") == [*spelled, "完"]


def test_a_slot_is_mentioned_by_its_value_or_most_of_its_terms() -> None:
    assert grounded_fields(WEATHER, "广州未来5天：多云") == ALL
    assert grounded_fields(WEATHER, "北京天气") == []
    english = WEATHER.model_copy(update={"location_hint": "Tokyo", "subject_entities": ["Tokyo"],
                                         "time_range_hint": "next 3 days"})
    assert grounded_fields(english, "TOKYO forecast for the next 3 days") == ALL
    assert grounded_fields(english, "Weather in Osaka") == []


def test_spacing_does_not_hide_a_slot_and_a_named_day_speaks_to_the_time_slot() -> None:
    plan = ExternalQueryPlan(location_hint="广州", time_range_hint="未来 5天",
                             subject_entities=["广州", "白云区"])
    assert grounded_fields(plan, "广州 12月3日晴") == ALL
    assert grounded_fields(plan, "广州未来5天以晴为主") == ALL
    assert grounded_fields(plan, "深圳明天下雨") == ["time_range_hint"]
    assert grounded_fields(plan, "深圳常年多雨") == []


def test_a_named_day_does_not_ground_a_plan_that_asked_no_time() -> None:
    plan = WEATHER.model_copy(update={"time_range_hint": None})
    assert grounded_fields(plan, "广州 12月3日晴") == ["location_hint", "subject_entities"]


def test_both_adapters_score_with_the_one_definition() -> None:
    from pmflow_gateway.adapters import live_search, mcp
    from pmflow_gateway.contract import scoring

    assert mcp.grounded_fields is scoring.grounded_fields
    assert live_search.grounded_fields is scoring.grounded_fields


INTERNAL_PAGE = "https://intranet.example.com/pages/q3-plan"


@pytest.mark.parametrize("variant", [
    "https://intranet.example.com:443/pages/q3-plan", "https://intranet.example.com./pages/q3-plan",
    "http://intranet.example.com/pages/q3-plan", "http://intranet.example.com:80/pages/q3-plan",
    "https://intranet.example.com/pages/q3-plan?utm_source=x",
    "https://intranet.example.com/pages/q3-plan?fbclid=a&utm_medium=b",
    "https://intranet.example.com/pages/%71%33-plan", "https://intranet.example.com//pages/q3-plan",
    "https://intranet.example.com/./pages/q3-plan", "https://intranet.example.com/pages/x/../q3-plan",
    "https://intranet.example.com/pages/%2e/q3-plan", "HTTPS://INTRANET.EXAMPLE.COM/pages/q3-plan",
    "https://intranet.example.com/pages/q3-plan/#top",
])
def test_canonical_url_folds_every_cosmetic_variant(variant: str) -> None:
    assert canonical_url(variant) == canonical_url(INTERNAL_PAGE)


@pytest.mark.parametrize("other", [
    "https://intranet.example.com:8443/pages/q3-plan", "https://intranet.example.com/Pages/q3-plan",
    "https://intranet.example.com/pages/q3-plan?id=2", "https://intranet.example.com/pages/q3%2Dplan2",
    "ftp://intranet.example.com/pages/q3-plan",
])
def test_canonical_url_keeps_what_names_another_page(other: str) -> None:
    assert canonical_url(other) != canonical_url(INTERNAL_PAGE)


def test_canonical_url_sorts_parameters_and_keeps_reserved_escapes() -> None:
    assert canonical_url("https://a.example/p?b=2&a=1") == canonical_url("https://a.example/p?a=1&b=2")
    assert canonical_url("https://a.example/a%2fb") == "https://a.example/a%2Fb"



@pytest.mark.parametrize(("question", "window_days"), [
    ("Is the Harbor Mills strike still on?", 30),
    ("Do Ashby residents still have to boil water?", 30),
    ("平湖现在还限行吗", 30),
    ("Does Redis 8.0 still need Sentinel?", 365),  # a numbered release does not change
    ("When did Harbor Mills open its Tacoma plant?", 365),
    ("What is Quarrow's latest inflation rate?", 90),  # the latest figure: a quarter at most
    ("鹭港最新集装箱吞吐量是多少", 90),
    ("What is the latest news on the Quarrow port?", 365),  # no figure asked
])
def test_whether_a_state_still_holds_is_answered_by_a_page_of_the_last_month(
        question: str, window_days: int) -> None:
    plan = ExternalQueryPlan(query_kind="generic_web", freshness_required=True,
                             topic=question, search_queries=[question])
    assert freshness_window(plan) == timedelta(days=window_days)
    published = datetime(2026, 12, 2, tzinfo=UTC) - timedelta(days=45)
    stale = freshness_score(published, plan, datetime(2026, 12, 2, tzinfo=UTC)) < FRESH_ENOUGH
    assert stale == (window_days == 30)
