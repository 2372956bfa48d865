"""The composition root: builds the real `Deps` from settings. Only entry points import it
(the CLI, the workers' start-up, bench); tests build `Deps` with fakes instead."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.evidence_cache import RecentEvidence
from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.llm import OpenAIChatModel
from pmflow_gateway.adapters.mcp import McpAdapter, adapters_from_config
from pmflow_gateway.adapters.mcp_config import demo_servers
from pmflow_gateway.adapters.rate_limit import HostLimits
from pmflow_gateway.adapters.search_engines import (
    BraveSearch,
    DuckDuckGoHtml,
    SearchEngine,
    SearxngJson,
    engine_fetcher,
)
from pmflow_gateway.adapters.ssrf import SafeFetcher
from pmflow_gateway.adapters.store import open_store
from pmflow_gateway.handlers.model_composer import make_composer
from pmflow_gateway.handlers.planners.model import ModelPlanner
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps, EvidenceAdapter, PlanDefaults, Planner
from pmflow_gateway.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["SystemClock", "build_adapters", "build_deps", "build_engine", "build_model",
           "build_planner"]



async def _nothing() -> None:
    return None


def build_model(settings: Settings,
                role: Literal["planner", "composer"]) -> OpenAIChatModel | None:
    """The role's OpenAI-compatible model when an endpoint is set for it; None: no model."""
    endpoint = settings.model_endpoint(role)
    if endpoint is None:
        return None
    return OpenAIChatModel(base_url=endpoint.base_url, model=endpoint.model,
                           api_key=endpoint.api_key)


def build_planner(settings: Settings) -> tuple[Planner, Callable[[], Awaitable[None]]]:
    """The model planner when the planner has a model endpoint, else the rules planner."""
    model = build_model(settings, "planner")
    if model is None:
        return RulesPlanner(), _nothing
    return ModelPlanner(model=model, timeout_s=settings.llm_timeout_s), model.aclose


def build_adapters(settings: Settings) -> list[EvidenceAdapter]:
    """MCP servers first, in the config file's order, then the bounded live-search fallback;
    in demo mode the demo corpus server alone, so demo answers never mix with real ones."""
    if settings.demo:
        return [McpAdapter(config) for config in demo_servers()]
    engine = build_engine(settings)
    fallback = LiveSearchAdapter(
        engine=engine, engine_fetcher=build_engine_fetcher(settings, engine),
        allow_hosts=settings.fetch_allow_hosts,
        max_queries=settings.live_search_max_queries, max_pages=settings.live_search_max_pages,
        max_bytes_per_page=settings.live_search_max_bytes,
        fetch_timeout_s=settings.live_search_fetch_timeout_s,
        total_timeout_s=settings.live_search_timeout_s,
        # One adapter per process: its limits pace every question the process handles.
        engine_limits=HostLimits(settings.live_search_engine_rate,
                                 settings.live_search_engine_burst),
        page_limits=HostLimits(settings.live_search_host_rate, settings.live_search_host_burst))
    # Result pages of MCP search servers without a fetch tool: the live search's guard and caps.
    pages = SafeFetcher(allow_hosts=settings.fetch_allow_hosts,
                        max_bytes=settings.live_search_max_bytes, max_redirects=3,
                        timeout_s=settings.live_search_fetch_timeout_s)
    return [*adapters_from_config(settings.mcp_config, settings.fetch_allow_hosts, pages),
            fallback]


def build_engine(settings: Settings) -> SearchEngine:
    """The live search's engine, as configured."""
    endpoint = settings.live_search_endpoint
    if settings.live_search_engine == "searxng":
        return SearxngJson(endpoint or "")
    if settings.live_search_engine == "brave":
        key = settings.live_search_api_key.get_secret_value() if settings.live_search_api_key \
            else ""
        return BraveSearch(key, endpoint) if endpoint else BraveSearch(key)
    return DuckDuckGoHtml(endpoint) if endpoint else DuckDuckGoHtml()


def build_engine_fetcher(settings: Settings, engine: SearchEngine) -> SafeFetcher:
    """How the engine is asked: an endpoint the operator configured is trusted (its own
    SearXNG on a private address) for the engine's requests only."""
    return engine_fetcher(engine, trust_endpoint=bool(settings.live_search_endpoint),
                          max_bytes=settings.live_search_max_bytes,
                          timeout_s=settings.live_search_fetch_timeout_s)


async def start_mcp_servers(adapters: list[EvidenceAdapter], timeout_s: float) -> None:
    """Every MCP server started side by side before the first question."""
    mcp = [a for a in adapters if isinstance(a, McpAdapter)]
    failures = await asyncio.gather(*(a.warm_up(timeout_s) for a in mcp))
    for adapter, failure in zip(mcp, failures, strict=True):
        if failure:
            log.warning("MCP server %s did not start: %s", adapter.config.name, failure)


async def build_deps(settings: Settings) -> Deps:
    store = await open_store(settings)
    planner, close_planner = build_planner(settings)
    adapters = build_adapters(settings)
    await start_mcp_servers(adapters, settings.mcp_start_timeout_s)
    composer_model = build_model(settings, "composer")
    closers: list[Callable[[], Awaitable[None]]] = [close_planner]
    if composer_model is not None:
        closers.append(composer_model.aclose)
    composer = make_composer(composer_model, timeout_s=settings.llm_timeout_s)
    return Deps(
        clock=SystemClock(),
        planner=planner,
        adapters=adapters,
        store=store,
        composer=composer,
        evidence_cache=RecentEvidence(ttl_s=settings.evidence_cache_s)
        if settings.evidence_cache_s > 0 else None,
        memory_domain_hints=settings.memory_domain_hints,
        remember_agent_questions=settings.agent_memory_writes,
        plan_defaults=PlanDefaults(deadline_ms=settings.deadline_ms,
                                   max_wait_ms=settings.max_wait_ms,
                                   result_limit=settings.result_limit),
        closers=closers,
    )
