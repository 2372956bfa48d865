"""Question keys and how alike two questions are, for the route memories' similar-sample priors.

A memory is kept per (tenant, question key); the key is the question with the differences
that do not change its meaning folded away. Similarity is the Jaccard index of the keys'
character bigrams: it needs no tokenizer, so Chinese and English questions are handled alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from pmflow_gateway.contract.text import CJK_CHARS

# Long enough to tell real questions apart, short enough that (tenant_id, question_key) fits
# in a PostgreSQL btree entry (about 2.7 kB) even when every character takes 3 bytes.
MAX_KEY_CHARS = 500

# Spaces next to CJK text carry no meaning ("未来 5 天" and "未来5天" are the same question).
_SPACE_NEAR_CJK = re.compile(rf"(?<=[{CJK_CHARS}]) | (?=[{CJK_CHARS}])")


def question_key(question: str) -> str:
    """The memory key of a question: NFKC, case-folded, punctuation and symbols dropped,
    whitespace folded to single spaces (none next to CJK), at most `MAX_KEY_CHARS` long."""
    # One pass is not always a fixed point (case folding and NFKC can each undo the other's
    # work on rare sequences), and a key must be stable: fold until nothing changes.
    key = _fold_once(question)
    for _ in range(4):
        again = _fold_once(key)
        if again == key:
            break
        key = again
    return key


def _fold_once(question: str) -> str:
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", question).casefold())
    kept = [
        " " if ch.isspace() or unicodedata.category(ch)[0] in "PSZC" else ch for ch in text
    ]
    folded = " ".join("".join(kept).split())
    return _SPACE_NEAR_CJK.sub("", folded)[:MAX_KEY_CHARS].rstrip()


def bigrams(key: str) -> frozenset[str]:
    """Character bigrams of a key; a one-character key is its own single gram."""
    if len(key) < 2:
        return frozenset([key]) if key else frozenset()
    return frozenset(key[i : i + 2] for i in range(len(key) - 1))


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def similarity(question_a: str, question_b: str) -> float:
    """How alike two questions are, 0.0 to 1.0 (1.0: the same key)."""
    key_a, key_b = question_key(question_a), question_key(question_b)
    if key_a == key_b:
        return 1.0 if key_a else 0.0
    return jaccard(bigrams(key_a), bigrams(key_b))


@dataclass(frozen=True, kw_only=True)
class Scored:
    key: str
    similarity: float


def most_similar(
    question: str, keys: Iterable[str], *, limit: int, min_similarity: float
) -> list[Scored]:
    """The keys most like the question, best first; ties keep the order `keys` came in
    (callers pass the most recently used first)."""
    target_key = question_key(question)
    target = bigrams(target_key)
    scored: list[Scored] = []
    for key in keys:
        score = 1.0 if key == target_key else jaccard(target, bigrams(key))
        if score >= min_similarity and score > 0.0:
            scored.append(Scored(key=key, similarity=round(score, 4)))
    scored.sort(key=lambda item: item.similarity, reverse=True)  # stable: recency breaks ties
    return scored[:limit]
