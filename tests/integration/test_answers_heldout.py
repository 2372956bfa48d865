"""The held-out answer sets, each written blind to the answer path, over its own corpus, through
the real stage cores and our MCP server over stdio (`python -m bench.answers --labels ...
--corpus ...`):

- set 1: other cities, companies, instruments and phrasings than the labelled set the answer
  path was tuned on;
- set 2: people and organisations, product variants with near-identical names, revenue vs
  market cap vs share price, quarter vs year, look-alike indices, coins and currency pairs,
  which match and which season, opening hours and event dates, weekday words.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.answers import DATA, load_labels, main, run, summary

REFUSALS = {"freshness_guard", "failed", "rejected"}


@dataclass(frozen=True)
class HeldOut:
    labels: Path
    corpus: Path
    min_questions: int
    kinds: frozenset[str]


BASE_KINDS = {"weather", "news", "company", "stock", "market", "fx", "crypto", "model",
              "sports", "general", "follow"}
SETS = {
    "set1": HeldOut(DATA / "answers_heldout.jsonl", DATA / "answer_corpus_heldout.json", 45,
                    frozenset(BASE_KINDS)),
    "set2": HeldOut(DATA / "answers_heldout2.jsonl", DATA / "answer_corpus_heldout2.json", 50,
                    frozenset(BASE_KINDS | {"product", "travel", "event"})),
}


def _norm(text: str) -> str:
    return "".join(text.split()).casefold()


@pytest.mark.parametrize("name", SETS)
def test_the_held_out_set_is_broad_and_every_label_is_checkable(name: str) -> None:
    held = SETS[name]
    labels = load_labels(held.labels)
    assert len(labels) >= held.min_questions
    assert {row["locale"][:2] for row in labels} == {"zh", "en"}
    assert held.kinds <= {row["kind"].split("_")[0] for row in labels}
    assert sum(set(r["statuses"]) <= REFUSALS for r in labels) >= 10
    assert sum(r["statuses"] == ["clarify"] for r in labels) >= 3
    pages = json.loads(held.corpus.read_text("utf-8"))["pages"]
    assert all(p["url"].split("/")[2].endswith((".example", ".test")) for p in pages)
    world = _norm(" ".join(p["title"] + " " + p["body"] for p in pages))
    for row in labels:
        if "answered" in row["statuses"]:
            assert any(_norm(f) in world for f in row["must"]), row["question"]
        for fact in row["must_not"]:
            assert _norm(fact) in world, (row["question"], fact)
            assert not any(_norm(fact) in _norm(m) for m in row["must"]), row["question"]


def test_the_bench_refuses_a_missing_label_file_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["answers", "--labels", str(DATA / "no-such.jsonl"),
                                      "--corpus", str(SETS["set1"].corpus)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("name", SETS)
async def test_held_out_answers_are_about_what_was_asked(name: str) -> None:
    held = SETS[name]
    scored = await run(load_labels(held.labels), corpus=held.corpus)
    wrong = [(s.question, s.why) for s in scored if s.verdict == "wrong"]
    assert summary(scored)["wrong"] == 0, wrong
