"""The memo of the pure text functions, in a module of its own: the compiled build
(`pmflow_gateway/compiled.py`) leaves it interpreted, because a compiled class cannot extend
`OrderedDict`, and the memo's speed is the dict look-up it inherits."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

# Memoised text functions keep only short keys: a key is held as long as the cache, so an
# unbounded one would let a page's 200,000-character title cost megabytes per question.
MAX_CACHED_KEY_CHARS = 1000

_R = TypeVar("_R")


def cached_if_short(maxsize: int) -> Callable[[Callable[[str], _R]], Callable[[str], _R]]:
    """A memo for a pure function of one string that keeps at most `maxsize` results, the
    oldest going first, and none for a string over `MAX_CACHED_KEY_CHARS`: the memory it
    holds is bounded however long the texts are. A result already kept is found by the
    dict's own look-up, with no Python call at all (these functions are asked about 185
    times a question, mostly for what they have already worked out)."""
    def decorate(function: Callable[[str], _R]) -> Callable[[str], _R]:
        return _ShortMemo(function, maxsize).__getitem__
    return decorate


class _ShortMemo(OrderedDict[str, Any]):
    """`function`'s results by argument; the look-up calls `__missing__` only for one not
    kept. An OrderedDict drops its oldest entry in constant time, and finds a kept one as
    quickly as a dict (its look-up is the dict's). Safe from other threads: each dict
    operation holds the interpreter lock, and a result worked out twice is the same."""

    def __init__(self, function: Callable[[str], Any], maxsize: int) -> None:
        super().__init__()
        self.function = function
        self.maxsize = maxsize

    def __missing__(self, text: str) -> Any:
        result = self.function(text)
        if len(text) <= MAX_CACHED_KEY_CHARS:
            self[text] = result
            if len(self) > self.maxsize:
                self.popitem(last=False)
        return result
