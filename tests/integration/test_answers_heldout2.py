"""The second held-out answer set, written blind to the answer path: people and organisations,
product variants with near-identical names, revenue vs market cap vs share price, quarter vs
year, look-alike indices, coins and currency pairs, which match and which season, opening
hours and event dates, and weekday words (周六, 下周三, this Saturday, tonight), over its own
corpus, through the real stage cores and our MCP server over stdio."""

from __future__ import annotations

import json

from bench.answers import DATA, load_labels, run, summary

LABELS = DATA / "answers_heldout2.jsonl"
CORPUS = DATA / "answer_corpus_heldout2.json"
REFUSALS = {"freshness_guard", "failed", "rejected"}


def _norm(text: str) -> str:
    return "".join(text.split()).casefold()


def test_the_second_held_out_set_is_broad_and_every_label_is_checkable() -> None:
    labels = load_labels(LABELS)
    assert len(labels) >= 50
    assert {row["locale"][:2] for row in labels} == {"zh", "en"}
    kinds = {row["kind"].split("_")[0] for row in labels}
    assert {"weather", "news", "company", "stock", "market", "fx", "crypto", "model",
            "product", "sports", "travel", "event", "general", "follow"} <= kinds
    assert sum(set(r["statuses"]) <= REFUSALS for r in labels) >= 10
    assert sum(r["statuses"] == ["clarify"] for r in labels) >= 3
    pages = json.loads(CORPUS.read_text("utf-8"))["pages"]
    assert all(p["url"].split("/")[2].endswith((".example", ".test")) for p in pages)
    world = _norm(" ".join(p["title"] + " " + p["body"] for p in pages))
    for row in labels:
        if "answered" in row["statuses"]:
            assert any(_norm(f) in world for f in row["must"]), row["question"]
        for fact in row["must_not"]:
            assert _norm(fact) in world, (row["question"], fact)
            assert not any(_norm(fact) in _norm(m) for m in row["must"]), row["question"]


async def test_second_held_out_answers_are_about_what_was_asked() -> None:
    scored = await run(load_labels(LABELS), corpus=CORPUS)
    wrong = [(s.question, s.why) for s in scored if s.verdict == "wrong"]
    assert summary(scored)["wrong"] == 0, wrong
