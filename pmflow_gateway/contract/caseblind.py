"""Case-insensitive patterns, searched quickly.

The `re` engine under `re.IGNORECASE` folds the case of every character it compares: two to
three times the cost of a search without the flag. A pattern with no upper-case letter finds
the same matches without the flag in the lower-cased text, so the answer rules' hundreds of
case-insensitive word lists are compiled as `CaseBlind`, and their searches read it.
"""

from __future__ import annotations

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
                       else re.compile(_lower_letters(source)))

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
