"""How common an English word is: a word no everyday text uses ("regus", "bozeman",
"halvora") is a name in a question typed in lower case.

The frequencies are wordfreq's (Robyn Speer; data CC BY-SA 4.0, built from Wikipedia,
subtitles, news, books, web text and more): its "small" English list, every word used at least
once per million words. The file is read directly in its documented cBpack format (a gzipped
msgpack list of frequency bins, one per centibel): importing wordfreq itself costs over a
second, the file about 15 ms.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
from pathlib import Path

import msgpack

COMMON_ZIPF = 3.0
"""Zipf frequency (log10 of uses per billion words) from which a word is everyday English:
3.0 is once per million words, the small list's floor."""


@functools.cache
def _english() -> dict[str, float]:
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the wordfreq package (word frequencies) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "small_en.msgpack.gz"
    bins = msgpack.loads(gzip.decompress(path.read_bytes()), raw=False)
    header, bins = bins[0], bins[1:]
    if not isinstance(header, dict) or header.get("format") != "cB":
        raise RuntimeError(f"unexpected word-frequency file format in {path}")
    return {word: 9.0 - centibels / 100 for centibels, words in enumerate(bins)
            for word in words}


def zipf(word: str) -> float:
    """How common an English word is (Zipf scale, 0 when it is not in the list)."""
    return _english().get(word.casefold(), 0.0)


def is_everyday_word(word: str) -> bool:
    return zipf(word) >= COMMON_ZIPF


TYPO_OF_ZIPF = 4.5
"""A rare word one letter away from a word at least this common (once per 30,000 words) is a
misspelling of it ("anual", "wether", "tomorow"), not a name."""
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_WORD_CHARS = 24  # longer tokens are no word anybody misspelt


def is_misspelling(word: str) -> bool:
    """Whether a word that is not everyday English is one edit (a letter dropped, added or
    two swapped) from a very common word."""
    word = word.casefold()
    if (len(word) > MAX_WORD_CHARS or is_everyday_word(word) or not word.isascii()
            or not word.isalpha()):
        return False
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    # No changed letter: "brann" is a name, not "brain"; typing drops, doubles and swaps.
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b for a, b in splits for c in _LETTERS}
    words = _english()
    return any(words.get(edit, 0.0) >= TYPO_OF_ZIPF for edit in edits - {word})
