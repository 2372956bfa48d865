"""Case-insensitive patterns, searched quickly.

The `re` engine under `re.IGNORECASE` folds the case of every character it compares: two to
three times the cost of a search without the flag. A pattern with no upper-case letter finds
the same matches without the flag in the lower-cased text, so the answer rules' hundreds of
case-insensitive word lists are compiled as `CaseBlind`, and their searches read it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from typing import Any

# The last text read and its form: a rule searches one text with many patterns in a row. One
# tuple, replaced whole, so a reader on another thread never pairs a text with another's form.
_LAST: tuple[str, str] = ("", "")


def _blind_form(text: str) -> str:
    global _LAST
    last = _LAST
    if last[0] == text:
        return last[1]
    form = case_blind(text)
    _LAST = (text, form)
    return form


def case_blind(text: str) -> str:
    """The text as a case-insensitive pattern of ASCII letters reads it, for a pattern of
    lower-case ASCII letters to search without the flag (several times quicker): lower case,
    and the four other letters such a pattern matches made the ASCII ones (İ and ı are i, ſ
    is s; the Kelvin sign lower-cases to k)."""
    form = text.lower()
    if form.isascii():
        return form
    return text.replace("İ", "i").lower().replace("ı", "i").replace("ſ", "s")


# A part that turns the flag off: such a pattern keeps it.
_CASE_SENSITIVE_PART = re.compile(r"\(\?[a-zA-Z]*-")
# What a source spells in capitals: escapes (`\S`, `\W`) and group names keep theirs, letters
# are made lower case (under the flag, "CEO" and "[A-Z]" match what "ceo" and "[a-z]" match).
_SPELLING = re.compile(r"\\N\{[^}]*\}|\\.|\(\?P[<=][^>)]*|[A-Z]+")


def _lower_letters(source: str) -> str:
    return _SPELLING.sub(lambda m: m.group(0) if m.group(0)[0] in "\\(" else m.group(0).lower(),
                         source)


class CaseBlind:
    """A case-insensitive pattern whose `search` reads the `case_blind` form of the text with
    the pattern in lower case, compiled without the flag: the same matches, two to three
    times quicker (the flag makes the engine fold every character it compares). A match is
    the flagged pattern's own, on the text as given, found again at the place the quick
    search found; every other method is the flagged pattern's. A pattern that turns the flag
    off for a part, or spells a capital of another script, keeps the flag."""

    __slots__ = ("_quick", "flagged")

    def __init__(self, source: str) -> None:
        self.flagged = re.compile(source, re.IGNORECASE)
        self._quick = (None if _CASE_SENSITIVE_PART.search(source)
                       or any(c.isupper() and not c.isascii() for c in source)
                       else first_filtered(_lower_letters(source)))

    def search(self, text: str, *bounds: int) -> re.Match[str] | None:
        if self._quick is None or bounds:
            return self.flagged.search(text, *bounds)
        found = self._quick.search(_blind_form(text))
        if found is None:
            return None
        return self.flagged.match(text, found.start()) or self.flagged.search(text)

    # Every other use is the flagged pattern's.
    @property
    def pattern(self) -> str:
        return self.flagged.pattern

    def match(self, text: str, *bounds: int) -> re.Match[str] | None:
        return self.flagged.match(text, *bounds)

    def fullmatch(self, text: str, *bounds: int) -> re.Match[str] | None:
        return self.flagged.fullmatch(text, *bounds)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.flagged.finditer(text)

    def findall(self, text: str) -> list[Any]:
        return self.flagged.findall(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.flagged.sub(repl, text, count)

    def split(self, text: str, maxsplit: int = 0) -> list[str | Any]:
        return self.flagged.split(text, maxsplit)


# -- where a match can start --------------------------------------------------------------
# `re` skips quickly to where a pattern can start only when it opens with a character, a set
# or a choice of characters. A word list opens with a look-behind ("(?<![a-z])") or with
# groups, so the engine tries every alternative at every place of the text: 12 us for a
# 57-character sentence against the eighty-odd phrases of the hearsay list. Opened with a
# look-ahead at the characters any match starts with, it tries them only where one stands
# (1.8 us). The matches are the same: the look-ahead only skips places where no match can
# start.

# `re`'s own parser and its names for what it parsed (Python 3.11 and later).
_parser: Any = importlib.import_module("re._parser")
sre: Any = importlib.import_module("re._constants")
_CATEGORIES = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_WORD: r"\w"}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_Firsts = tuple[list[str] | None, bool]  # the set's parts (None: any character), can be empty


def first_filtered(source: str) -> re.Pattern[str]:
    """`source` compiled, opened with a look-ahead at the characters its matches start with
    where the engine would otherwise try it at every place (see above)."""
    plain = re.compile(source)
    try:
        parsed = _parser.parse(source)
        if parsed.state.flags & ~(re.UNICODE | re.DEBUG) or _skips_by_itself(parsed):
            return plain
        firsts, can_be_empty = _sequence(list(parsed))
        if firsts is None or can_be_empty or not firsts:
            return plain
        return re.compile(f"(?=[{''.join(dict.fromkeys(firsts))}])(?:{source})")
    except (re.error, TypeError, ValueError, RecursionError):
        return plain


def _skips_by_itself(parsed: Any) -> bool:
    """Whether the pattern opens the way `re` already skips by (a character, a set, or a
    choice whose every alternative opens with a character), or as cheaply (a run of them)."""
    op: Any
    av: Any
    op, av = parsed[0] if len(parsed) else (None, None)
    while (op is sre.SUBPATTERN or (op in _REPEATS and av[0] >= 1)) and len(av[-1]):
        op, av = av[-1][0]
    if op in (sre.LITERAL, sre.IN):
        return True
    return op is sre.BRANCH and all(len(b) and b[0][0] is sre.LITERAL for b in av[1])


def _sequence(items: list[tuple[Any, Any]]) -> _Firsts:
    found: list[str] = []
    for op, av in items:
        firsts, can_be_empty = _one(op, av)
        if firsts is None:
            return None, False
        found += firsts
        if not can_be_empty:
            return found, False
    return found, True


def _one(op: Any, av: Any) -> _Firsts:
    if op is sre.LITERAL:
        return [_in_a_set(av)], False
    if op is sre.IN:
        return _set(av), False
    if op is sre.BRANCH:
        found: list[str] = []
        empty = False
        for branch in av[1]:
            firsts, can_be_empty = _sequence(list(branch))
            if firsts is None:
                return None, False
            found += firsts
            empty = empty or can_be_empty
        return found, empty
    if op is sre.SUBPATTERN:
        _, add_flags, del_flags, inner = av
        return (None, False) if add_flags or del_flags else _sequence(list(inner))
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(av))
    if op in _REPEATS:
        least, _, inner = av
        firsts, can_be_empty = _sequence(list(inner))
        return firsts, can_be_empty or least == 0
    if op in (sre.ASSERT, sre.ASSERT_NOT, sre.AT):
        return [], True  # takes no character: the match starts at what follows
    return None, False  # any character (".", "[^…]"), a back reference, a conditional


def _set(items: list[tuple[Any, Any]]) -> list[str] | None:
    parts = []
    for op, av in items:
        if op is sre.LITERAL:
            parts.append(_in_a_set(av))
        elif op is sre.RANGE:
            parts.append(f"{_in_a_set(av[0])}-{_in_a_set(av[1])}")
        elif op is sre.CATEGORY and av in _CATEGORIES:
            parts.append(_CATEGORIES[av])
        else:
            return None  # a negated set, "\D", "\S", "\W"
    return parts


def _in_a_set(code: int) -> str:
    return f"\\U{code:08x}"  # any character, written so that a set cannot misread it
