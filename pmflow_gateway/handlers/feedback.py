"""Feedback stage: FeedbackGiven -> the verdict written back onto the QA record and the
route memory, where the memory rules make it count (a `wrong_route` lowers the routing
prior of similar questions; an answer rated incorrect or unhelpful takes its domains' credit
back)."""

from __future__ import annotations

from pmflow_gateway.ports import MemoryStore
from pmflow_gateway.schemas import FeedbackGiven


async def remember_feedback(event: FeedbackGiven, *, store: MemoryStore) -> bool:
    """Write the user's feedback back; False when it was already applied, is older than the
    feedback already there, or waits for the QA record it rates (the store applies it when
    the record lands)."""
    return await store.apply_feedback(event)
