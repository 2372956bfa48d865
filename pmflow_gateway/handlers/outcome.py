"""Outcome stage: RouteOutcomeReported -> the tenant's route memories.

PMFlow answers internal routes itself; when it reports how such a question (or one it sent
elsewhere) ended, the outcome is recorded beside our own answers under the same memory rules,
so the route prior and the similar-question priors weigh both sides, and feedback on it lands
like feedback on ours.
"""

from __future__ import annotations

from pmflow_gateway.ports import MemoryStore
from pmflow_gateway.schemas import RouteOutcomeReported


async def remember_outcome(event: RouteOutcomeReported, *, store: MemoryStore) -> bool:
    """Persist the outcome; False when it was already recorded (a redelivery) or is older than
    what the question already holds."""
    return await store.record_outcome(event)
