"""How a stage's core is called: tried again after a failure, and its output named by its
content. The workers' runner and the in-process chain both call stages this way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pmflow_gateway.contract.envelopes import identified
from pmflow_gateway.ports import Deps, Unavailable, Unstorable
from pmflow_gateway.schemas.contracts import Frozen
from pmflow_gateway.schemas.events import Envelope
from pmflow_gateway.streams.stages import Stage

In = TypeVar("In", bound=Envelope)
Out = TypeVar("Out", bound=Frozen | None)


@dataclass(frozen=True, kw_only=True)
class Retries:
    """How often a failing core is tried again, and how long to wait before the first retry
    (doubling after each)."""

    retries: int = 3
    backoff_s: float = 0.2


OnRetry = Callable[[int, Exception], None]


async def call_stage(stage: Stage[In, Out], deps: Deps, event: In, retry: Retries,
                     on_retry: OnRetry | None = None) -> Out:
    """The core's output named by its content, trying again after a failure; the last
    failure is raised. A dependency that is away (`Unavailable`) or a record the store
    refuses for good (`Unstorable`) is raised at once: how long to wait for the one is the
    caller's decision, and no retry changes the other."""
    output = await _tries(stage, deps, event, retry, on_retry)
    return cast(Out, identified(output)) if output is not None else output


async def _tries(stage: Stage[Any, Out], deps: Deps, event: Envelope, retry: Retries,
                 on_retry: OnRetry | None) -> Out:
    delay = retry.backoff_s
    for attempt in range(1, retry.retries + 1):
        try:
            return await stage.handle(deps, event)
        except (Unavailable, Unstorable):
            raise
        except Exception as exc:
            if on_retry is not None:
                on_retry(attempt, exc)
            await asyncio.sleep(delay)
            delay *= 2
    return await stage.handle(deps, event)


def failure_reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
