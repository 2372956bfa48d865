"""What one fetched page gives as evidence: its lead (not the furniture around the article)
and its best passages, whole sentences in page order, each run on a line of its own."""

from __future__ import annotations

import pytest

from pmflow_gateway.adapters.page_lead import is_furniture, lead_indices
from pmflow_gateway.adapters.passages import BM25, evidence_text, read_passages
from pmflow_gateway.contract.text import split_sentences

ARTICLE = "\n".join([
    "Harbor Mills to double output at its Tacoma plant",
    "By Dana Reyes",
    "Published 3 hours ago | Updated Dec. 2, 2026 10:15 a.m.",
    "Photo: The Tacoma plant at dawn. (Harbor Mills Photo/Lee Chan)",
    "Related: Harbor Mills names a new chief financial officer",
    "Harbor Mills Co. said on Tuesday it would double the output of its Tacoma plant by 2028.",
    "The $410 million expansion adds two paper machines and 300 jobs.",
    "Chief executive Dana Reyes said demand for recycled board had outgrown the plant.",
    "The company's shares rose 4% in early trading.",
    "Analysts at Northbay Securities called the plan ambitious but affordable.",
    "Construction starts in the spring, pending a state permit for the new water intake.",
    "Read more: How paper mills went green",
    "Share this article",
])


@pytest.mark.parametrize("line", [
    "By Dana Reyes",
    "Published 3 hours ago | Updated Dec. 2, 2026 10:15 a.m.",
    "Updated: December 2, 2026, 10:15 AM",
    "发布时间：2026-12-02 10:15",
    "Photo: The Tacoma plant at dawn. (Harbor Mills Photo/Lee Chan)",
    "Workers leave the plant after a shift. Photograph: Lee Chan/Wire",
    "Related: Harbor Mills names a new chief financial officer",
    "[Related: Harbor Mills names a new chief financial officer]",
    "Read more: How paper mills went green",
    "Home | Business | Markets | Opinion",
    "相关阅读：造纸厂扩建",
    "Reading time: 4 minutes",
])
def test_page_furniture_is_told_from_prose(line: str) -> None:
    assert is_furniture(line)


@pytest.mark.parametrize("line", [
    "Harbor Mills Co. said on Tuesday it would double the output of its Tacoma plant by 2028.",
    "More than 300 workers will be hired when the plant reopens on 2 December 2026.",
    "By the end of 2028 the plant will make twice as much board as it does today.",
    "海港纸业周二表示，将在2028年前把塔科马工厂的产量翻一番。",
])
def test_article_sentences_are_no_furniture(line: str) -> None:
    assert not is_furniture(line)


def test_the_lead_is_the_first_prose_after_headline_byline_dates_captions_and_pointers() -> None:
    sentences = split_sentences(ARTICLE)
    assert [sentences[n] for n in lead_indices(sentences)] == [
        "Harbor Mills Co. said on Tuesday it would double the output of its Tacoma plant by 2028.",
        "The $410 million expansion adds two paper machines and 300 jobs."]


def test_a_page_without_prose_leads_with_its_first_line_that_is_no_furniture() -> None:
    sentences = split_sentences("Updated 2026-12-02 08:00\n广州 周三 多云 15-24℃\n周四 小雨 14-20℃")
    assert [sentences[n] for n in lead_indices(sentences)] == ["广州 周三 多云 15-24℃"]


def _evidence(text: str, query: str, max_chars: int = 400) -> str:
    page = read_passages(text, target_chars=80, max_chars=120)
    ranked = BM25([p.text for p in page.passages]).rank([query])
    return evidence_text(page, [page.passages[s.index] for s in ranked], max_chars=max_chars)


def test_a_pages_evidence_is_its_lead_and_best_passages_in_page_order() -> None:
    evidence = _evidence(ARTICLE, "Northbay Securities analysts")
    assert evidence.splitlines() == [
        "Harbor Mills Co. said on Tuesday it would double the output of its Tacoma plant by 2028."
        " The $410 million expansion adds two paper machines and 300 jobs.",
        "The company's shares rose 4% in early trading."
        " Analysts at Northbay Securities called the plan ambitious but affordable.",
    ]


def test_evidence_stays_within_its_bound_and_starts_every_line_with_a_whole_sentence() -> None:
    evidence = _evidence(ARTICLE, "plant output jobs shares permit", max_chars=300)
    assert len(evidence) <= 300
    sentences = set(split_sentences(ARTICLE))
    assert all(split_sentences(line)[0] in sentences for line in evidence.splitlines())


def test_a_long_sentence_is_kept_whole_and_only_text_without_stops_is_cut_at_a_space() -> None:
    long_sentence = "The plant, " + "which runs day and night, " * 16 + "will grow."
    page = read_passages(f"{long_sentence}\n" + "word " * 300, target_chars=80, max_chars=120)
    assert page.sentences[0] == long_sentence
    assert all(len(s) <= 600 and not s.startswith(" ") for s in page.sentences)
    assert all(s.endswith("word") for s in page.sentences[1:])
