"""Passages of fetched pages, and which of them answer the plan best (BM25).

Chunks follow sentence ends (Chinese 。！？； and English .!?;) so a snippet reads as whole
sentences. Tokens are lowercased words for alphabetic scripts and character bigrams for
Chinese, Japanese and Korean, which have no spaces to split on.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pmflow_gateway.contract.text import CJK_CHARS, split_sentences

CJK_RUN = rf"[{CJK_CHARS}]+"
TOKEN = re.compile(rf"{CJK_RUN}|[a-z0-9]+(?:[.'][a-z0-9]+)*", re.IGNORECASE)
CJK_ONLY = re.compile(CJK_RUN)
CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef]")


def chunk_text(text: str, *, target_chars: int = 500, max_chars: int = 600) -> list[str]:
    """Whole sentences packed into chunks of about `target_chars`, never over `max_chars`."""
    chunks: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        pieces = [sentence[i:i + max_chars] for i in range(0, len(sentence), max_chars)]
        for piece in pieces:  # only a sentence longer than max_chars is cut mid-way
            joiner = _joiner(current, piece)
            if current and len(current) + len(joiner) + len(piece) > max_chars:
                chunks.append(current)
                current, joiner = "", ""
            current += joiner + piece
            if len(current) >= target_chars:
                chunks.append(current)
                current = ""
    if current:
        chunks.append(current)
    return chunks


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
