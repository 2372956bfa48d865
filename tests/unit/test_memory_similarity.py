"""Question keys and similarity: the route memories' notion of "the same" and "alike"."""

from __future__ import annotations

import itertools

from hypothesis import example, given
from hypothesis import strategies as st

from pmflow_gateway.contract.similarity import (
    MAX_KEY_CHARS,
    bigrams,
    most_similar,
    question_key,
    similarity,
)


def test_key_folds_case_punctuation_whitespace_and_width() -> None:
    assert question_key("  What is  the WEATHER, in Paris?!") == "what is the weather in paris"
    assert question_key("ＷＨＡＴ　ｉｓ") == "what is"
    assert question_key("帮我看看未来 5 天的广州天气如何") == "帮我看看未来5天的广州天气如何"
    assert question_key("帮我看看 未来5天的广州天气如何？") == "帮我看看未来5天的广州天气如何"
    assert question_key("GPT 4o 发布了吗") == "gpt 4o发布了吗"
    assert question_key("?!… ") == ""


def test_key_is_bounded_and_never_ends_in_a_space() -> None:
    key = question_key("word " * 400)
    assert len(key) <= MAX_KEY_CHARS
    assert key == key.strip()


@given(st.text(max_size=600))
@example("ß\u0326")  # case folding leaves a decomposed sequence behind
def test_key_is_stable_under_refolding(question: str) -> None:
    key = question_key(question)
    assert question_key(key) == key


@given(st.text(max_size=80), st.text(max_size=80))
def test_similarity_is_a_symmetric_score_between_zero_and_one(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0
    assert score == similarity(b, a)


def test_similarity_of_spellings_of_one_question_is_one() -> None:
    assert similarity("广州天气如何？", "广州 天气 如何") == 1.0
    assert similarity("", "") == 0.0


def test_similarity_ranks_closer_questions_higher() -> None:
    target = "未来5天广州天气如何"
    closer = similarity(target, "帮我看看未来 5 天的广州天气如何")
    assert closer > similarity(target, "深圳今天天气怎么样")
    assert similarity(target, "腾讯今天的股价是多少") == 0.0


def test_bigrams_of_short_keys() -> None:
    assert bigrams("") == frozenset()
    assert bigrams("a") == frozenset({"a"})
    assert bigrams("abc") == frozenset({"ab", "bc"})


def test_most_similar_orders_by_score_then_by_the_order_given() -> None:
    keys = ["深圳今天天气怎么样", "帮我看看未来5天的深圳天气如何", "帮我看看未来5天的广州天气如何",
            "腾讯今天的股价是多少", "帮我看看未来5天的广州天气如何吗"]
    found = most_similar("帮我看看未来5天的广州天气如何", keys, limit=3, min_similarity=0.2)

    assert [s.key for s in found] == [
        "帮我看看未来5天的广州天气如何",
        "帮我看看未来5天的广州天气如何吗",
        "帮我看看未来5天的深圳天气如何",
    ]
    assert found[0].similarity == 1.0
    assert all(a.similarity >= b.similarity for a, b in itertools.pairwise(found))


def test_most_similar_drops_what_is_below_the_threshold() -> None:
    assert most_similar("广州天气", ["腾讯股价"], limit=5, min_similarity=0.0) == []
    assert most_similar("广州天气", ["广州交通"], limit=5, min_similarity=0.5) == []
    assert [s.key for s in most_similar("广州天气", ["广州交通"], limit=5, min_similarity=0.1)] == [
        "广州交通"]
