"""The labelled answer set through the real stage cores and our MCP server over stdio
(`python -m bench.answers` prints the same run as a table)."""

from __future__ import annotations

import pytest

from bench.answers import load_labels, run, score, summary

MIN_CORRECT = 0.90


def test_the_labelled_set_covers_every_kind_in_both_languages() -> None:
    labels = load_labels()
    assert len(labels) >= 60
    assert {row["locale"][:2] for row in labels} == {"zh", "en"}
    kinds = {row["kind"].split("_")[0] for row in labels}
    assert {"weather", "news", "company", "stock", "fx", "crypto", "model", "sports",
            "general", "follow"} <= kinds
    refusals = [r for r in labels if "answered" not in r["statuses"] and "clarify" not in
                r["statuses"]]
    assert len(refusals) >= 8
    assert any(r["statuses"] == ["clarify"] for r in labels)
    for row in labels:
        if "answered" in row["statuses"]:
            assert row["must"], row["question"]


@pytest.mark.parametrize(("status", "reply", "verdict"), [
    ("answered", "明天小雨 21~25℃", "correct"),
    ("answered", "今天 24~29℃；明天 21~25℃", "wrong"),
    ("answered", "多云", "wrong"),
    ("freshness_guard", "", "missed"),
])
def test_scoring_tells_correct_wrong_and_missed(status: str, reply: str, verdict: str) -> None:
    label = {"statuses": ["answered"], "must": ["21~25℃"], "must_not": ["24~29℃"]}
    assert score(label, status, reply)[0] == verdict


def test_a_refusal_label_counts_any_answer_as_wrong() -> None:
    label = {"statuses": ["freshness_guard", "failed"], "must": [], "must_not": []}
    assert score(label, "answered", "anything")[0] == "wrong"
    assert score(label, "failed", "")[0] == "correct"


async def test_answers_are_about_what_was_asked() -> None:
    scored = await run(load_labels())
    result = summary(scored)
    wrong = [(s.question, s.why) for s in scored if s.verdict == "wrong"]
    assert result["wrong"] == 0, wrong
    assert result["correct_share"] >= MIN_CORRECT, result
