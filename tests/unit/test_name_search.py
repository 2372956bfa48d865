"""The substring test in front of each name pattern only saves work: for every known name and
any text, `_named` says what the pattern says, also for the letters a case-insensitive pattern
folds unlike `str.lower` (dotted and dotless i, long s, the Kelvin sign) and for names of
other scripts, acronyms and CJK."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract.relevance import (
    _fold,
    _form_pattern,
    _known_in,
    _known_names,
    _named,
)


def found(name: str, text: str) -> bool:
    """What a name's pattern finds: exact forms (CJK, acronyms) in the text as written, the
    rest in its accent-free casefold."""
    pattern = _form_pattern(name)
    exact = bool(re.search(r"[\u4e00-\u9fff]", name)) or not pattern.flags & re.IGNORECASE
    return bool(pattern.search(text if exact else _fold(text)))


NAMES = [name for name, _ in _known_names()] + ["US", "EU", "BTC", "Zürich", "São Paulo",
                                                "İstanbul", "iPhone手机", "AT&T", "O'Hare"]
TRICKY = "İıſKßÅ\u0307 .,-'&0123456789"


@st.composite
def text_around(draw: st.DrawFn) -> tuple[str, str]:
    """A name, and a text that may hold it as written, re-cased, glued to letters or with
    look-alike letters put in."""
    name = draw(st.sampled_from(NAMES))
    cased = draw(st.sampled_from([name, name.upper(), name.lower(), name.swapcase()]))
    swapped = "".join(draw(st.sampled_from([c, "İ", "ı"])) if c in "iI" else
                      draw(st.sampled_from([c, "ſ"])) if c in "sS" else
                      draw(st.sampled_from([c, "\u212a"])) if c in "kK" else c
                      for c in cased)
    filler = st.text(alphabet=st.sampled_from("abcxyz广州天气" + TRICKY), max_size=8)
    return name, draw(filler) + draw(st.sampled_from([cased, swapped, ""])) + draw(filler)


@settings(max_examples=3000, deadline=None)
@given(text_around())
def test_the_substring_test_never_changes_what_a_pattern_finds(case: tuple[str, str]) -> None:
    name, text = case
    assert _named(name, text, _fold(text)) == found(name, text)


def test_every_known_name_in_a_text_of_every_known_name() -> None:
    text = " ".join(NAMES)
    fold = _fold(text)
    for name in NAMES:
        assert _named(name, text, fold) == found(name, text), name
        assert _named(name, text.upper(), _fold(text.upper())) == found(name, text.upper()), name


@st.composite
def sentence(draw: st.DrawFn) -> str:
    """Filler with a few known names in it, each as written, re-cased or with look-alikes."""
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        _, text = draw(text_around())
        parts.append(text)
    return draw(st.sampled_from(["", "今日", "The report says "])) + " ".join(parts)


@settings(max_examples=1000, deadline=None)
@given(sentence())
def test_the_index_offers_every_known_name_a_text_names(text: str) -> None:
    fold = _fold(text)
    offered = {name for name, _ in _known_in(text, fold) if _named(name, text, fold)}
    assert offered == {name for name, _ in _known_names() if found(name, text)}


def test_a_name_matches_whatever_its_accents() -> None:
    assert _named("Tromso", "Tromsø IL won 2-0", _fold("Tromsø IL won 2-0"))
    assert _named("Zürich", "Zurich airport", _fold("Zurich airport"))
    assert not _named("Tromso", "Tromstad", _fold("Tromstad"))
