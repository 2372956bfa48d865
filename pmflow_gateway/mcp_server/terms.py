"""Terms of a text for overlap ranking: English words and Chinese character bigrams.

Chinese has no spaces, so a run of Han characters is cut into overlapping bigrams
("广州天气" -> 广州, 州天, 天气); a lone Han character stays a unigram. Latin text and
digits split into lower-cased words.
"""

from __future__ import annotations

import re

_RUNS = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def terms(text: str) -> set[str]:
    found: set[str] = set()
    for run in _RUNS.findall(text):
        if _HAN.match(run):
            if len(run) == 1:
                found.add(run)
            found.update(run[i : i + 2] for i in range(len(run) - 1))
        else:
            found.add(run.lower())
    return found


def overlap(query_terms: set[str], text: str) -> float:
    """Share of the query's terms found in the text, 0..1."""
    if not query_terms:
        return 0.0
    return len(query_terms & terms(text)) / len(query_terms)
