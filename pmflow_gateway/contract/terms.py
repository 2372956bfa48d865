"""Terms of a text for overlap ranking, shared by our MCP server and the MCP client: English
words and CJK character bigrams.

CJK scripts have no spaces, so a run of CJK characters is cut into overlapping bigrams
("广州天气" -> 广州, 州天, 天气); a lone CJK character stays a unigram. Latin text and
digits split into lower-cased words.
"""

from __future__ import annotations

import re

from pmflow_gateway.contract.text import CJK, CJK_CHARS

# Each kind of term found in one pass in C: every word, every two neighbouring CJK characters
# (a bigram never spans two runs), every CJK character alone between others.
_BIGRAMS = re.compile(rf"(?=([{CJK_CHARS}]{{2}}))")
_LONE = re.compile(rf"(?<![{CJK_CHARS}])[{CJK_CHARS}](?![{CJK_CHARS}])")
_WORDS = re.compile(r"[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")
_LOWER_WORDS = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")


def terms(text: str) -> set[str]:
    if text.isascii():  # no CJK, and lower case moves no word edge: the words at once
        return set(_LOWER_WORDS.findall(text.lower()))
    found = {word.lower() for word in _WORDS.findall(text)}
    if CJK.search(text):
        found.update(_BIGRAMS.findall(text))
        found.update(_LONE.findall(text))
    return found


def overlap(query_terms: set[str], text: str) -> float:
    """Share of the query's terms found in the text, 0..1."""
    if not query_terms:
        return 0.0
    return len(query_terms & terms(text)) / len(query_terms)
