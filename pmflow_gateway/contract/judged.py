"""Verdicts of pure checks, kept once worked out.

One question is judged by several stages: the evidence stage, the verifier and the answer's
support check each ask whether an item is about the question, and the answer stage and the
render stage each check the same answer text. Where the stages share a process, each verdict
is worked out once and kept under a digest of everything it was worked out from: 16 bytes a
key, so the bound holds however long the pages are. Each user sizes its own: a backlog puts
the evidence stage many questions ahead of the answer stage, and a bigger store than the lag
needs only costs memory (the `cpu` and `memory` scenarios of `bench/` measure both).
"""

from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from pydantic import BaseModel

V = TypeVar("V")
M = TypeVar("M", bound=BaseModel)


class Judged(Generic[V]):
    """At most `maxsize` verdicts, the oldest going first. Its users run on the event loop's
    thread only (page reading, the one work on other threads, judges nothing)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        # Not a dict: a dict finds its oldest key by walking past every slot deleted before it
        # (about 2 us an eviction at 4,096 entries); an OrderedDict unlinks it (0.2 us).
        self._kept: OrderedDict[bytes, V] = OrderedDict()

    def get(self, parts: Iterable[str | bytes], work: Callable[[], V]) -> V:
        """The verdict for `parts` (in order), working it out with `work` the first time."""
        key = _key(parts)
        try:
            return self._kept[key]
        except KeyError:
            pass
        verdict = work()
        self._keep(key, verdict)
        return verdict

    def kept(self, parts: Iterable[str | bytes]) -> V | None:
        """The verdict kept for `parts`, if any."""
        return self._kept.get(_key(parts))

    def keep(self, parts: Iterable[str | bytes], verdict: V) -> None:
        """Keep `verdict` for `parts`, worked out elsewhere."""
        self._keep(_key(parts), verdict)

    def _keep(self, key: bytes, verdict: V) -> None:
        self._kept[key] = verdict
        if len(self._kept) > self.maxsize:
            self._kept.popitem(last=False)  # the oldest verdict


def _key(parts: Iterable[str | bytes]) -> bytes:
    # SHA-256, cut to 16 bytes: collision-resistant as BLAKE2b's 16 bytes were, and about twice
    # as quick where the processor has SHA instructions (x86 since about 2017, ARMv8): 3.6
    # against 7.8 us for an event's 6 KB, hashed when encoded and again when read back.
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))  # no two lists read as one
        digest.update(data)
    return digest.digest()[:16]


def of_the_last(function: Callable[[M], V]) -> Callable[[M], V]:
    """A pure function of one frozen model, asked in a row for the same model (every sentence
    and item of a question is judged against its one plan): worked out once per model. The
    model is held with its result, so its identity cannot be reused by another; the result
    is shared, so it must not be mutated (return tuples and frozensets)."""
    last: list[tuple[M, V]] = []

    @functools.wraps(function)
    def call(model: M) -> V:
        if last and last[0][0] is model:
            return last[0][1]
        result = function(model)
        last[:] = [(model, result)]
        return result
    return call


@of_the_last
def json_of(model: BaseModel) -> bytes:
    """A frozen model's JSON, as a part of a key: a stage judges every item and sentence of a
    question against the one plan, so the plan it asked for last is serialized once."""
    return model.__pydantic_serializer__.to_json(model)
