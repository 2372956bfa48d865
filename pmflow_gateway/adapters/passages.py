"""Passages of fetched pages, which of them answer the plan best (BM25), and what a page
gives as evidence: its lead and its best passages, in page order.

Passages are runs of whole sentences (where `contract.text.split_sentences` ends them), so a
snippet never starts mid-sentence. Tokens are lowercased words for alphabetic scripts and
character bigrams for Chinese, Japanese and Korean, which have no spaces to split on.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pmflow_gateway.adapters.page_lead import lead_indices
from pmflow_gateway.contract.text import CJK_CHARS, split_sentences

CJK_RUN = rf"[{CJK_CHARS}]+"
TOKEN = re.compile(rf"{CJK_RUN}|[a-z0-9]+(?:[.'][a-z0-9]+)*", re.IGNORECASE)
CJK_ONLY = re.compile(CJK_RUN)
CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef]")
# Between passages that are not next to each other on the page: a line of its own each, so
# that no reader takes the end of one and the start of the next for one sentence.
PASSAGE_BREAK = "\n"
# A real sentence can run past a passage's size (422 characters in a newspaper column); only
# text longer than this, a table or a page without stops, is cut.
MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True, kw_only=True)
class Passage:
    """Consecutive sentences of a page: `sentences[start:end]` of its `PagePassages`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, kw_only=True)
class PagePassages:
    """A page's text as sentences, packed into passages, with the positions of its lead."""

    sentences: tuple[str, ...]
    passages: tuple[Passage, ...]
    lead: tuple[int, ...]


def read_passages(text: str, *, target_chars: int = 300, max_chars: int = 400) -> PagePassages:
    """The page's sentences, its passages of about `target_chars` (never over `max_chars`
    but for one long sentence) and its lead."""
    sentences = _sentences(text, max(max_chars, MAX_SENTENCE_CHARS))
    return PagePassages(sentences=tuple(sentences),
                        passages=tuple(_pack(sentences, target_chars, max_chars)),
                        lead=tuple(lead_indices(sentences)))


def chunk_text(text: str, *, target_chars: int = 500, max_chars: int = 600) -> list[str]:
    """Whole sentences packed into chunks of about `target_chars`, never over `max_chars`."""
    return [p.text for p in _pack(_sentences(text, max_chars), target_chars, max_chars)]


def evidence_text(page: PagePassages, best: Iterable[Passage], *, max_chars: int) -> str:
    """The page's lead and then as many of its `best` passages (best first) as fit in
    `max_chars`, in page order; runs that are not adjacent on the page stand on lines of
    their own."""
    chosen = set(page.lead)
    size = sum(len(page.sentences[n]) for n in chosen)
    for passage in best:
        new = [n for n in range(passage.start, passage.end) if n not in chosen]
        added = sum(len(page.sentences[n]) + 1 for n in new)
        if new and size + added <= max_chars:
            chosen.update(new)
            size += added
    return _render(page.sentences, sorted(chosen))


def _sentences(text: str, max_chars: int) -> list[str]:
    """Sentences, a sentence longer than `max_chars` cut into pieces no longer, at a space
    where one is near the cut."""
    pieces = []
    for sentence in split_sentences(text):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", max_chars // 2, max_chars) + 1 or max_chars
            pieces.append(sentence[:cut].rstrip())
            sentence = sentence[cut:]
        pieces.append(sentence)
    return pieces


def _pack(sentences: Sequence[str], target_chars: int, max_chars: int) -> list[Passage]:
    passages: list[Passage] = []
    start, current = 0, ""
    for number, sentence in enumerate(sentences):
        joiner = _joiner(current, sentence)
        if current and len(current) + len(joiner) + len(sentence) > max_chars:
            passages.append(Passage(start=start, end=number, text=current))
            start, current, joiner = number, "", ""
        current += joiner + sentence
        if len(current) >= target_chars:
            passages.append(Passage(start=start, end=number + 1, text=current))
            start, current = number + 1, ""
    if current:
        passages.append(Passage(start=start, end=len(sentences), text=current))
    return passages


def _render(sentences: Sequence[str], positions: Sequence[int]) -> str:
    text = ""
    for previous, number in zip([None, *positions], positions, strict=False):
        if previous is None:
            text = sentences[number]
        elif number == previous + 1:
            text += _joiner(text, sentences[number]) + sentences[number]
        else:
            text += PASSAGE_BREAK + sentences[number]
    return text


def _joiner(left: str, right: str) -> str:
    """A sentence that does not end in a stop ended at a line break (a heading, a table
    cell): the break stays, or the heading would read as the start of the next sentence."""
    if not left:
        return ""
    if not _SENTENCE_STOP.search(left):
        return "\n"
    return "" if _is_cjk_boundary(left, right) else " "


_SENTENCE_STOP = re.compile(r"[。！？；!?;.…]$")


def _is_cjk_boundary(left: str, right: str) -> bool:
    """Chinese text joins without a space after a Chinese character or full-width mark."""
    return bool(CJK_ONLY.fullmatch(left[-1]) or CJK_PUNCTUATION.fullmatch(left[-1])
                or CJK_ONLY.fullmatch(right[0]))


def tokens(text: str) -> list[str]:
    """Lowercased words, and overlapping bigrams of each CJK run (a lone character stays)."""
    out: list[str] = []
    for match in TOKEN.finditer(text):
        run = match.group(0)
        if CJK_ONLY.fullmatch(run):
            out.extend(run[i:i + 2] for i in range(max(len(run) - 1, 1)))
        else:
            out.append(run.lower())
    return out


@dataclass(frozen=True, kw_only=True)
class ScoredPassage:
    index: int  # position in the corpus given to `rank`
    score: float


class BM25:
    """Okapi BM25 over a fixed corpus of passages."""

    def __init__(self, passages: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._docs = [Counter(tokens(p)) for p in passages]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._average = (sum(self._lengths) / len(self._docs)) if self._docs else 0.0
        document_frequency: Counter[str] = Counter()
        for doc in self._docs:
            document_frequency.update(doc.keys())
        n = len(self._docs)
        self._idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5))
                     for term, df in document_frequency.items()}

    def score(self, query_terms: Counter[str], index: int) -> float:
        doc, length = self._docs[index], self._lengths[index]
        norm = self._k1 * (1 - self._b + self._b * length / (self._average or 1.0))
        total = 0.0
        for term, weight in query_terms.items():
            tf = doc.get(term, 0)
            if tf:
                total += weight * self._idf[term] * tf * (self._k1 + 1) / (tf + norm)
        return total

    def rank(self, queries: Iterable[str]) -> list[ScoredPassage]:
        """Every passage with a positive score against all queries together, best first."""
        query_terms: Counter[str] = Counter()
        for query in queries:
            query_terms.update(set(tokens(query)))  # a term counts once per query phrase
        scored = [ScoredPassage(index=i, score=round(self.score(query_terms, i), 4))
                  for i in range(len(self._docs))]
        return sorted((s for s in scored if s.score > 0), key=lambda s: (-s.score, s.index))
