"""Builds the real object graph from settings; tests build a `Gateway` with fakes instead."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pmflow_gateway.handlers.plan import PlanDefaults, Planner
from pmflow_gateway.handlers.planner_rules import RulesPlanner
from pmflow_gateway.handlers.ports import ChatModel, Clock, EvidenceAdapter, MemoryStore
from pmflow_gateway.settings import Settings


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass(kw_only=True)
class Gateway:
    """Everything the stage cores need, built once per process."""

    clock: Clock
    planner: Planner
    adapters: list[EvidenceAdapter]
    store: MemoryStore
    composer_model: ChatModel | None = None
    plan_defaults: PlanDefaults = field(default_factory=PlanDefaults)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def aclose(self) -> None:
        for close in reversed(self.closers):
            await close()
        self.closers.clear()


async def _nothing() -> None:
    return None


def build_planner(settings: Settings) -> tuple[Planner, Callable[[], Awaitable[None]]]:
    """The model planner when PMFLOW_LLM_BASE_URL is set, else the rules planner."""
    return RulesPlanner(), _nothing


async def build_gateway(settings: Settings) -> Gateway:
    from pmflow_gateway.adapters.store import open_store

    store = await open_store(settings)
    planner, close_planner = build_planner(settings)
    gateway = Gateway(
        clock=SystemClock(),
        planner=planner,
        adapters=[],
        store=store,
        plan_defaults=PlanDefaults(deadline_ms=settings.deadline_ms,
                                   result_limit=settings.result_limit),
        closers=[store.aclose, close_planner],
    )
    return gateway
