"""The ports: the outside systems and strategies the stage cores talk to, as small Protocols,
and `Deps`, the container of one process's implementations of them.

Each outside system has one real implementation under `pmflow_gateway.adapters` and one
in-memory fake in `tests/fakes.py`. Only entry points (`bootstrap.py`, tests, bench) build a
`Deps`; the Kafka runtime (`streams/`) and the stage cores receive one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from pmflow_gateway.schemas import (
    AdapterAttempt,
    AnswerReady,
    ExternalEvidence,
    ExternalQueryPlan,
    FeedbackGiven,
    PlannerInfo,
    RouteDecided,
    RouteOutcomeReported,
)


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


@dataclass(frozen=True, kw_only=True)
class AdapterResult:
    """What one adapter returned: its evidence and one attempt record per call it made."""

    items: list[ExternalEvidence] = field(default_factory=list)
    attempts: list[AdapterAttempt] = field(default_factory=list)


class EvidenceAdapter(Protocol):
    """A way to get external evidence for a plan: an MCP server, the live-search fallback."""

    name: str

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        """Evidence for the plan within `timeout_s`. Failures are attempts, not exceptions."""
        ...

    async def aclose(self) -> None:
        """Release what the adapter holds (a server process, a connection pool)."""
        ...


Headers = Sequence[tuple[str, bytes]]


class Unpublishable(Exception):
    """The broker or the producer refused the event for good (too large, invalid topic, not
    authorised, ...): no retry changes that, so the record it answers ends here."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Publisher(Protocol):
    """Where the stage runner writes its results, dead letters and give-up answers."""

    async def start(self) -> None:
        ...

    async def stop(self) -> None:
        """Flush what is pending, then let go of the connection."""
        ...

    async def send(self, topic: str, key: str | None, event: BaseModel, *,
                   headers: Headers = ()) -> None:
        """Return once the event is durably written: the caller commits its input after."""
        ...


class ChatModel(Protocol):
    """An OpenAI-compatible chat model that answers with JSON matching a schema."""

    model: str

    async def complete_json(
        self,
        messages: Sequence[dict[str, str]],
        *,
        schema: dict[str, Any],
        schema_name: str,
        timeout_s: float,
    ) -> str:
        """The raw text of the model's reply (the caller validates it); raises when the reply
        holds no whole answer (a refusal, output cut at the token limit), saying which."""
        ...


@dataclass(frozen=True, kw_only=True)
class SimilarQuestion:
    """One of a tenant's past questions (its route memory), and how alike it is."""

    question: str
    query_kind: str
    route_mode: str
    hit_count: int
    outcomes: dict[str, int]
    feedback_counts: dict[str, int]
    feedback_outcome: str | None
    good_domains: list[str]
    similarity: float


class Unavailable(Exception):
    """An outside system a stage needs is away (refused, hung, locked, overloaded): the same
    call can succeed later, unchanged, so the record waits instead of being given up."""

    def __init__(self, dependency: str, reason: str) -> None:
        super().__init__(f"{dependency} unavailable: {reason}")
        self.dependency = dependency
        self.reason = reason


class Unstorable(Exception):
    """The store refuses the record for its content (a value it cannot hold even after the
    boundary cleaned it): no retry changes that, so the record ends here, with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MemoryStore(Protocol):
    """QA records and route memories, always scoped by tenant. A write raises `Unavailable`
    while the store is away and `Unstorable` for content it can never hold."""

    async def record_answer(self, event: AnswerReady) -> bool:
        """Persist the answer once; False when this event was already applied. Ratings that
        arrived before it are applied with it."""
        ...

    async def record_outcome(self, event: RouteOutcomeReported) -> bool:
        """Persist the outcome of a question PMFlow answered itself, under the same rules as
        an answer: once, never over a newer one, counted in the tenant's route memory."""
        ...

    async def apply_feedback(self, event: FeedbackGiven) -> bool:
        """Write feedback back; False when already applied, older than the feedback already
        there, or when the tenant has no record of the question yet: the rating then waits
        for it (bounded by the store's `feedback_wait`) and is applied when it lands."""
        ...

    async def similar(
        self, tenant_id: str, question: str, *, limit: int = 5
    ) -> list[SimilarQuestion]:
        """The tenant's most similar past questions, best first."""
        ...

    async def aclose(self) -> None:
        """Release the connection pool."""
        ...


class Planner(Protocol):
    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        """A plan for the question; never raises for a bad question (it plans `clarify`)."""
        ...


class EvidenceCache(Protocol):
    """Evidence already collected for a tenant's plan, kept a short while, so the external
    probe PMFlow asks for before deciding and the answer after it share one look-up."""

    def get(self, tenant_id: str, plan: ExternalQueryPlan) -> list[ExternalEvidence] | None:
        """The evidence collected for this very plan, if still fresh enough to reuse."""
        ...

    def put(self, tenant_id: str, plan: ExternalQueryPlan,
            items: Sequence[ExternalEvidence]) -> None:
        """Keep evidence that was about the plan."""
        ...


@dataclass(frozen=True, kw_only=True)
class PlanDefaults:
    deadline_ms: int = 20_000
    # How long a question may wait in the stages' queues on top of its budget before no
    # source is asked any more (it ends timed_out).
    max_wait_ms: int = 60_000
    result_limit: int = 3
    max_queries: int = 3
    max_query_chars: int = 200


@dataclass(frozen=True, kw_only=True)
class Draft:
    """An answer before the answer verifier has seen it."""

    answer: str
    cited: list[int] = field(default_factory=list)
    composer: str = "extractive"
    note: str | None = None  # why a model composer fell back, when it did


class Composer(Protocol):
    """Writes a draft from numbered, verified evidence (item n is `items[n - 1]`)."""

    async def compose(self, question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence], *, timeout_s: float) -> Draft:
        ...


@dataclass(kw_only=True)
class Deps:
    """Everything the stage cores need, built once per process by an entry point."""

    clock: Clock
    planner: Planner
    adapters: list[EvidenceAdapter]
    store: MemoryStore
    composer: Composer
    evidence_cache: EvidenceCache | None = None
    """Shared by the external probe and the evidence stage; None: every plan is looked up."""
    memory_domain_hints: bool = False
    remember_agent_questions: bool = False
    """Whether questions agents asked through the MCP tools are remembered."""
    plan_defaults: PlanDefaults = field(default_factory=PlanDefaults)
    # What else the process opened (a chat model shared by planner and composer), closed first.
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _closed: bool = field(default=False, init=False, repr=False)

    async def aclose(self) -> None:
        """Close the extra closers, the adapters, then the store; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        for close in [*reversed(self.closers), *(a.aclose for a in self.adapters),
                      self.store.aclose]:
            await close()
