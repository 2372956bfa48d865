"""Terms of a text (`contract/terms.py`): lower-cased words and CJK bigrams."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.text import CJK, CJK_CHARS

# A run of CJK characters or a word: what terms were cut from, one run at a time.
_RUNS = re.compile(rf"[{CJK_CHARS}]+|[A-Za-z0-9]+(?:[.'][A-Za-z0-9]+)*")


def _run_by_run(text: str) -> set[str]:
    found: set[str] = set()
    for run in _RUNS.findall(text):
        if CJK.match(run):
            found.update([run] if len(run) == 1 else map(str.__add__, run, run[1:]))
        else:
            found.add(run.lower())
    return found


def test_words_are_lower_cased_and_chinese_is_cut_into_bigrams() -> None:
    assert terms("Apple's Q3 revenue: $94.9B") == {"apple's", "q3", "revenue", "94.9b"}
    assert terms("广州天气 Guangzhou") == {"广州", "州天", "天气", "guangzhou"}
    assert terms("雨") == {"雨"}


@given(st.text(alphabet="aBz Z9.'-\n广州雨あ한°İK", max_size=40))
@settings(max_examples=2000, deadline=None)
def test_the_passes_in_c_find_what_the_run_by_run_pass_finds(text: str) -> None:
    assert terms(text) == _run_by_run(text)
