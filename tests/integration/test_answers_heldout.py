"""The held-out answer set: other cities, companies, instruments and phrasings than the
labelled set the answer path was tuned on, over its own corpus, through the real stage cores
and our MCP server over stdio (`python -m bench.answers --labels ... --corpus ...`)."""

from __future__ import annotations

import json
import sys

import pytest

from bench.answers import DATA, load_labels, main, run, summary

LABELS = DATA / "answers_heldout.jsonl"
CORPUS = DATA / "answer_corpus_heldout.json"
REFUSALS = {"freshness_guard", "failed", "rejected"}


def _norm(text: str) -> str:
    return "".join(text.split()).casefold()


def test_the_held_out_set_is_broad_and_every_label_is_checkable() -> None:
    labels = load_labels(LABELS)
    assert len(labels) >= 45
    assert {row["locale"][:2] for row in labels} == {"zh", "en"}
    kinds = {row["kind"].split("_")[0] for row in labels}
    assert {"weather", "news", "company", "stock", "market", "fx", "crypto", "model",
            "sports", "general", "follow"} <= kinds
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


def test_the_bench_refuses_a_missing_label_file_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["answers", "--labels", str(DATA / "no-such.jsonl"),
                                      "--corpus", str(CORPUS)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert "no such file" in capsys.readouterr().err


async def test_held_out_answers_are_about_what_was_asked() -> None:
    scored = await run(load_labels(LABELS), corpus=CORPUS)
    wrong = [(s.question, s.why) for s in scored if s.verdict == "wrong"]
    assert summary(scored)["wrong"] == 0, wrong
