"""`CaseBlind` finds what its flagged pattern finds: the same place, the same groups."""

from __future__ import annotations

import importlib
import itertools
import json
import pkgutil
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pmflow_gateway
from pmflow_gateway.contract.caseblind import CaseBlind, first_filtered
from pmflow_gateway.contract.text import split_sentences

DATA = Path(__file__).resolve().parents[1] / "data"


def _every_case_blind() -> list[tuple[str, CaseBlind]]:
    found: dict[int, tuple[str, CaseBlind]] = {}

    def walk(value: object, name: str, depth: int) -> None:
        if isinstance(value, CaseBlind):
            found.setdefault(id(value), (name, value))
        elif depth < 3 and isinstance(value, tuple | list):
            for i, item in enumerate(value):
                walk(item, f"{name}[{i}]", depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{name}[{key!r}]", depth + 1)
        elif depth < 3 and hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
            for field in value.__dataclass_fields__:
                walk(getattr(value, field), f"{name}.{field}", depth + 1)

    for module in pkgutil.walk_packages(pmflow_gateway.__path__, "pmflow_gateway."):
        loaded = importlib.import_module(module.name)
        for attribute, value in vars(loaded).items():
            walk(value, f"{module.name}.{attribute}", 0)
    return sorted(found.values(), key=lambda pair: pair[0])


PATTERNS = _every_case_blind()

# Letters the flag folds in ways plain lower-casing might not: dotted and dotless i, long s,
# the Kelvin sign, full-width Latin, Greek final sigma, German sharp s, a ligature.
TRICKY = ["İSTANBUL Mayor-Elect WON the Runoff", "ıt ſnowed 5 KELVIN", "ＷＯＮ the ＦＩＮＡＬ",
          "ΣΊΣΥΦΟΣ straße ﬁnal score", "Q3 FY26 EPS $1.2B, UP 12% YoY", "TODAY: High 31°F",
          "今天 Updated 9:30 A.M. EST Friday, Dec. 4, 2026", "NO RELATION to the Separate fire"]


def _sample_texts(limit: int = 1500) -> list[str]:
    texts: list[str] = []
    for path in sorted(DATA.glob("answer_corpus*.json")):
        pages = json.loads(path.read_text("utf-8")).get("pages", [])
        for page in pages:
            texts += [page.get("title", ""), *split_sentences(page.get("body", ""))[:4]]
    for path in sorted(DATA.glob("answers*.jsonl")):
        texts += [json.loads(line)["question"] for line in path.read_text("utf-8").splitlines()
                  if line.strip()]
    step = max(1, len(texts) // limit)
    return TRICKY + [t for t in texts[::step] if t][:limit]


def _same(found: re.Match[str] | None, expected: re.Match[str] | None) -> bool:
    if found is None or expected is None:
        return found is expected
    return (found.span(), found.groups()) == (expected.span(), expected.groups())


def test_the_package_compiles_its_case_insensitive_word_lists_quick():
    assert len(PATTERNS) > 200
    quick = [name for name, pattern in PATTERNS if pattern._quick is not None]
    assert len(quick) > 0.9 * len(PATTERNS)


@pytest.mark.parametrize("chunk", range(4))
def test_every_package_pattern_finds_what_its_flag_finds(chunk):
    texts = _sample_texts()
    differ = [(name, text) for name, pattern in PATTERNS[chunk::4] for text in texts
              if not _same(pattern.search(text), pattern.flagged.search(text))]
    assert differ == []


def test_capitals_are_searched_in_lower_case_but_escapes_and_group_names_keep_theirs():
    pattern = CaseBlind(r"(?P<Tick>[A-Z]{2,})\s\S+|CEO\b")
    assert pattern._quick is not None
    assert pattern._quick.pattern.endswith(r"(?:(?P<Tick>[a-z]{2,})\s\S+|ceo\b)")
    found = pattern.search("the eps rose")
    assert found is not None and found.group("Tick") == "the"
    assert pattern.search("our Ceo") is not None


def test_a_case_sensitive_part_or_a_capital_of_another_script_keeps_the_flag():
    assert CaseBlind(r"(?-i:eps) growth")._quick is None
    assert CaseBlind(r"(?-i:Eps)").search("EPS") is None
    assert CaseBlind(r"ÉTÉ")._quick is None
    assert CaseBlind(r"ÉTÉ").search("été") is not None


def test_a_match_reads_the_text_as_given():
    found = CaseBlind(r"(?<![a-z])(won|beat) (\w+)").search("Harlow WON Saturday")
    assert found is not None and found.group(0) == "WON Saturday"
    assert found.groups() == ("WON", "Saturday")
    assert CaseBlind(r"evidence").sub("x", "an EVIDENCE tag") == "an x tag"


_WORDS = st.sampled_from(["won", "WON", "Won", "İ", "ı", "ſ", "K", "ﬁ", "ß", "final", "FINAL",
                          "eps", "ＥＰＳ", "今天", "updated", "UTC", "a.m.", "12", " ", ",", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=12).map("".join))
@example("KELVIN İS won")
def test_a_search_agrees_with_the_flag_on_any_text(text):
    for source in (r"(?<![a-z])(?:won|final|eps)(?![a-z])", r"updated|utc|今天",
                   r"\b(?:[ap]\.m\.)", r"k\w*|i\s|s\b"):
        pattern = CaseBlind(source)
        assert _same(pattern.search(text), pattern.flagged.search(text)), (source, text)


def test_flagged_and_quick_compile_from_one_source():
    pattern = CaseBlind(r"final (score)")
    assert pattern.pattern == pattern.flagged.pattern == r"final (score)"
    assert pattern.flagged.flags & re.IGNORECASE
    assert list(itertools.islice(pattern.finditer("Final score, FINAL SCORE"), 3))[1].group(1) \
        == "SCORE"


_WIDE_LETTERS = [*"ＡＢｃｄ１２，。：（）！？\u3000ａ", "\u0301", "\u0308", "℃", "①", "ﬁ", "Ｋ",
                 "e", " ", "广", "州"]
_WIDE_TEXT = st.text(alphabet=st.sampled_from(_WIDE_LETTERS), max_size=20)


@settings(max_examples=300, deadline=None)
@given(_WIDE_TEXT)
@example("Ａ\u0301，　ｅ\u0308")
def test_folded_reads_full_width_text_as_nfkc_does(text):
    from pmflow_gateway.contract.text import _ANY_CONFUSABLE, _CONFUSABLE_LATIN, folded

    nfkc = unicodedata.normalize("NFKC", text).lower()
    expected = nfkc.translate(_CONFUSABLE_LATIN) if _ANY_CONFUSABLE.search(nfkc) else nfkc
    assert folded(text) == expected


def test_a_pattern_reads_each_text_as_its_own():
    pattern = CaseBlind(r"won")
    assert pattern.search("WON") is not None
    assert pattern.search("lost") is None  # not the form of the text before
    assert pattern.search("WON").group(0) == "WON"


# -- the look-ahead at a match's first characters ------------------------------------------

_FILTERED = [
    r"(?<![a-z])(?:won|beat|网传|据传)(?![a-z])",  # a word list behind a look-behind
    r"(?:检察院|公诉机关)[^，。]{0,6}建议|(?<![a-z0-9])(?:rumou?r(?:s|ed)?|leaked)",
    r"(?<![\d.])\+?\(?\d[\d\s()-]{2,8}\d",  # optional openings: each may be the first
    r"(?:(?:a|b)?c|d*e)f",  # nested optional openings
    r"(?:\s|^)(?:x|y)\b",
    r"(?>ab|ac)d|(?P<n>z+)q",  # an atomic group, a named one
]
_LEFT_AS_IS = [
    (r"won|beat", "opens with a choice of characters: re skips by itself"),
    (r"[0-9]+x", "opens with a run of a set"),
    (r"x?", "can match nothing"),
    (r"(?<![a-z])(?:.{2}|won)", "can start with any character"),
    (r"(?<!a)[^b]c", "a negated set"),
    (r"(?i)won|(?<!x)beat", "a flag for the whole pattern"),
    (r"(?<!x)\W+|won", "a set of everything but some"),
]


@pytest.mark.parametrize("source", _FILTERED)
def test_a_pattern_without_an_opening_the_engine_skips_by_gets_the_look_ahead(source):
    filtered = first_filtered(source)
    assert filtered.pattern.startswith("(?=[") and filtered.pattern.endswith(f"(?:{source})")
    assert filtered.groupindex == re.compile(source).groupindex


@pytest.mark.parametrize(("source", "why"), _LEFT_AS_IS)
def test_a_pattern_the_look_ahead_cannot_help_is_compiled_as_it_is(source, why):
    assert first_filtered(source).pattern == source, why


_PIECES = st.sampled_from(["won", "beat", "网传", "据传", "检察院", "建议", "，", "。", "rumours",
                           "leaked", "+", "(", ")", "12", "3", "-", " ", "\n", "x", "y", "a",
                           "b", "c", "d", "e", "f", "z", "q", "ab", "acd", "zzq", "Won"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=16).map("".join))
@example("检察院 ，建议 rumoured +(12) 3-4 won")
def test_the_look_ahead_finds_every_match_the_pattern_finds(text):
    for source in _FILTERED:
        plain, filtered = re.compile(source), first_filtered(source)
        assert ([(m.span(), m.groups()) for m in filtered.finditer(text)]
                == [(m.span(), m.groups()) for m in plain.finditer(text)]), (source, text)


def test_the_hearsay_list_is_searched_with_the_look_ahead():
    from pmflow_gateway.contract.qualifiers import _UNCONFIRMED

    assert _UNCONFIRMED._quick is not None and _UNCONFIRMED._quick.pattern.startswith("(?=[")
    assert _UNCONFIRMED.search("据传该公司将于下月发布新品") is not None
    assert _UNCONFIRMED.search("The deal was REPORTEDLY close").group(0) == "REPORTEDLY"
