"""Hypothesis draws made in a spawned process of their own.

Hypothesis fails a draw during which the global `random` changed. In the test process,
threads left by earlier tests (test servers' request threads, page extraction) may use it at
any moment, so a corpus drawn there fails at random. A fresh process has no such threads.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def drawn_apart(draw: Callable[..., T], *args: object, timeout_s: float = 600) -> T:
    """`draw(*args)` run in a spawned process; `draw` must be a module-level function."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(draw, *args).result(timeout=timeout_s)
