"""A `Processor` on the real broker with fakes for the outside world, for the tests that
exercise the Kafka wiring itself."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Literal

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.ports import (
    EvidenceAdapter,
    EvidenceCache,
    MemoryStore,
    PlanDefaults,
    Planner,
)
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.app import Processor
from pmflow_gateway.streams.runner import RunnerConfig
from tests.fakes import fake_deps

Guarantee = Literal["exactly_once", "at_least_once"]


@asynccontextmanager
async def running(bootstrap: str, topics: Topics, *,
                  adapters: Sequence[EvidenceAdapter] | None = None,
                  store: MemoryStore | None = None,
                  runner_config: RunnerConfig | None = None,
                  guarantee: Guarantee = "at_least_once",
                  plan_defaults: PlanDefaults | None = None,
                  planner: Planner | None = None,
                  memory_domain_hints: bool = False,
                  evidence_cache: EvidenceCache | None = None,
                  ) -> AsyncIterator[Processor]:
    """Every stage in this process; by default the MCP adapter answers with WEATHER."""
    gateway = fake_deps(clock=SystemClock(), planner=planner, adapters=adapters or None,
                        store=store, plan_defaults=plan_defaults or PlanDefaults(),
                        memory_domain_hints=memory_domain_hints, evidence_cache=evidence_cache)
    settings = Settings(kafka_bootstrap=bootstrap, topic_prefix=topics.prefix, http_port=0,
                        processing_guarantee=guarantee)
    proc = Processor(settings, deps=gateway, grace_s=5, runner_config=runner_config)
    await proc.start()
    try:
        yield proc
    finally:
        await proc.stop()
