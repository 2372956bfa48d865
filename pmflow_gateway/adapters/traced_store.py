"""Every write to the memory store in a span of its own, whichever store it is: the trace of
a question shows the write (and the SQL statements under it) below the stage that made it."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from pmflow_gateway import tracing
from pmflow_gateway.ports import Deps, MemoryStore, SimilarQuestion
from pmflow_gateway.schemas import AnswerReady, FeedbackGiven, RouteOutcomeReported


@dataclasses.dataclass(frozen=True)
class TracedStore:
    """The `MemoryStore` port around another one, each write in a `db write qa_records` span
    that says whether the write applied."""

    inner: MemoryStore

    async def record_answer(self, event: AnswerReady) -> bool:
        return await _written("record_answer", lambda: self.inner.record_answer(event))

    async def record_outcome(self, event: RouteOutcomeReported) -> bool:
        return await _written("record_outcome", lambda: self.inner.record_outcome(event))

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        return await _written("apply_feedback", lambda: self.inner.apply_feedback(event))

    async def similar(self, tenant_id: str, question: str, *,
                      limit: int = 5) -> list[SimilarQuestion]:
        return await self.inner.similar(tenant_id, question, limit=limit)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _written(operation: str, write: Callable[[], Awaitable[bool]]) -> bool:
    with tracing.span("db write qa_records", **{"db.operation.name": operation}) as span:
        applied = await write()
        span.set_attribute("pmflow.applied", applied)
        return applied


def traced(deps: Deps) -> Deps:
    """`deps` with its store's writes traced (unchanged when they already are)."""
    if isinstance(deps.store, TracedStore):
        return deps
    return dataclasses.replace(deps, store=TracedStore(deps.store))
