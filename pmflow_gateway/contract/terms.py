"""Terms of a text for overlap ranking, shared by our MCP server and the MCP client: English
words and CJK character bigrams.

CJK scripts have no spaces, so a run of CJK characters is cut into overlapping bigrams
("广州天气" -> 广州, 州天, 天气); a lone CJK character stays a unigram. Latin text and
digits split into lower-cased words.
"""

from __future__ import annotations

import re

from pmflow_gateway.contract.text import CJK, CJK_CHARS

_RUNS = re.compile(rf"[{CJK_CHARS}]+|[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")
_LOWER_RUNS = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")


def terms(text: str) -> set[str]:
    if text.isascii():  # no CJK run, and lower case moves no word edge: one pass in C
        return set(_LOWER_RUNS.findall(text.lower()))
    found: set[str] = set()
    for run in _RUNS.findall(text):
        if CJK.match(run):
            if len(run) == 1:
                found.add(run)
            found.update(map(str.__add__, run, run[1:]))  # its bigrams
        else:
            found.add(run.lower())
    return found


def overlap(query_terms: set[str], text: str) -> float:
    """Share of the query's terms found in the text, 0..1."""
    if not query_terms:
        return 0.0
    return len(query_terms & terms(text)) / len(query_terms)
