"""Memory writer: AnswerReady and FeedbackGiven -> the QA record and route memories.

The store does the idempotent writes; this module decides what is written.
"""

from __future__ import annotations

from pmflow_gateway.handlers.ports import MemoryStore
from pmflow_gateway.schemas import AnswerReady, FeedbackGiven


async def remember_answer(event: AnswerReady, *, store: MemoryStore) -> bool:
    """Persist the answer; False when it was already recorded (a redelivery)."""
    return await store.record_answer(event)


async def remember_feedback(event: FeedbackGiven, *, store: MemoryStore) -> bool:
    """Write the user's feedback back onto the QA record and the route memory."""
    return await store.apply_feedback(event)
