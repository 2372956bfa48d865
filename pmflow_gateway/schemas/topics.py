"""Topic names, one per event the stages exchange. The prefix is configurable; the rest is
fixed, because PMFlow and the other consumers subscribe by these names."""

from __future__ import annotations

from dataclasses import dataclass

ROUTE_DECIDED = "query.route-decided.v1"
PLAN_CREATED = "query.plan-created.v1"
EVIDENCE_COLLECTED = "query.evidence-collected.v1"
EVIDENCE_VERIFIED = "query.evidence-verified.v1"
ANSWER_READY = "query.answer-ready.v1"
REPLY_RENDERED = "query.reply-rendered.v1"
FEEDBACK = "query.feedback.v1"
ROUTE_OUTCOME = "query.route-outcome.v1"
PROBE_REQUESTED = "query.probe-requested.v1"
PROBE_COMPLETED = "query.probe-completed.v1"
DEAD_LETTER = "query.dead-letter.v1"


@dataclass(frozen=True, kw_only=True)
class Topics:
    """The full topic names for one prefix."""

    prefix: str = "pmflow."

    def _name(self, suffix: str) -> str:
        return f"{self.prefix}{suffix}"

    @property
    def route_decided(self) -> str:
        return self._name(ROUTE_DECIDED)

    @property
    def plan_created(self) -> str:
        return self._name(PLAN_CREATED)

    @property
    def evidence_collected(self) -> str:
        return self._name(EVIDENCE_COLLECTED)

    @property
    def evidence_verified(self) -> str:
        return self._name(EVIDENCE_VERIFIED)

    @property
    def answer_ready(self) -> str:
        return self._name(ANSWER_READY)

    @property
    def reply_rendered(self) -> str:
        return self._name(REPLY_RENDERED)

    @property
    def feedback(self) -> str:
        return self._name(FEEDBACK)

    @property
    def route_outcome(self) -> str:
        return self._name(ROUTE_OUTCOME)

    @property
    def probe_requested(self) -> str:
        return self._name(PROBE_REQUESTED)

    @property
    def probe_completed(self) -> str:
        return self._name(PROBE_COMPLETED)

    @property
    def dead_letter(self) -> str:
        return self._name(DEAD_LETTER)

    def all(self) -> list[str]:
        suffixes = (ROUTE_DECIDED, PLAN_CREATED, EVIDENCE_COLLECTED, EVIDENCE_VERIFIED,
                    ANSWER_READY, REPLY_RENDERED, FEEDBACK, ROUTE_OUTCOME, PROBE_REQUESTED,
                    PROBE_COMPLETED, DEAD_LETTER)
        return [self._name(s) for s in suffixes]
