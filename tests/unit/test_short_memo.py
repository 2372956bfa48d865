"""`cached_if_short`: the same results as the function, at most `maxsize` kept, the oldest
going first, and nothing kept for a text over `MAX_CACHED_KEY_CHARS`."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.memo import MAX_CACHED_KEY_CHARS, cached_if_short


def _counted(maxsize: int) -> tuple[list[str], object]:
    calls: list[str] = []

    @cached_if_short(maxsize=maxsize)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()
    return calls, upper


def test_a_kept_result_is_not_worked_out_again() -> None:
    calls, upper = _counted(4)
    assert [upper("a"), upper("b"), upper("a")] == ["A", "B", "A"]  # type: ignore[operator]
    assert calls == ["a", "b"]


def test_at_most_maxsize_kept_and_the_oldest_goes_first() -> None:
    calls, upper = _counted(2)
    for text in ["a", "b", "c", "b", "a"]:
        upper(text)  # type: ignore[operator]
    assert calls == ["a", "b", "c", "a"]  # "a" went when "c" came; "b" was still kept
    assert len(upper.__self__) == 2  # type: ignore[attr-defined]


def test_a_long_text_is_worked_out_every_time_and_never_kept() -> None:
    calls, upper = _counted(4)
    long = "x" * (MAX_CACHED_KEY_CHARS + 1)
    assert upper(long) == long.upper() and upper(long) == long.upper()  # type: ignore[operator]
    assert calls == [long, long]
    assert long not in upper.__self__  # type: ignore[attr-defined]


def test_an_error_is_raised_each_time_and_nothing_kept() -> None:
    calls: list[str] = []

    @cached_if_short(maxsize=4)
    def refuse(text: str) -> str:
        calls.append(text)
        raise ValueError(text)
    for _ in range(2):
        with pytest.raises(ValueError):
            refuse("a")
    assert calls == ["a", "a"]
