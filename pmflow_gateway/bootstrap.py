"""The composition root: builds the real `Deps` from settings. Only entry points import it
(the CLI, the workers' start-up, bench); tests build `Deps` with fakes instead."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.evidence_cache import RecentEvidence
from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.llm import OpenAIChatModel
from pmflow_gateway.adapters.mcp import McpAdapter, adapters_from_config
from pmflow_gateway.adapters.mcp_config import demo_servers
from pmflow_gateway.adapters.rate_limit import HostLimits
from pmflow_gateway.adapters.search_engines import DuckDuckGoHtml, SearxngJson
from pmflow_gateway.adapters.store import open_store
from pmflow_gateway.handlers.model_composer import make_composer
from pmflow_gateway.handlers.planners.model import ModelPlanner
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps, EvidenceAdapter, PlanDefaults, Planner
from pmflow_gateway.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["SystemClock", "build_adapters", "build_deps", "build_model", "build_planner"]



async def _nothing() -> None:
    return None


def build_model(settings: Settings) -> OpenAIChatModel | None:
    """The OpenAI-compatible model when PMFLOW_LLM_BASE_URL is set; None means no model."""
    if not settings.llm_base_url:
        return None
    return OpenAIChatModel(base_url=settings.llm_base_url, model=settings.llm_model,
                           api_key=settings.llm_api_key)


def build_planner(settings: Settings) -> tuple[Planner, Callable[[], Awaitable[None]]]:
    """The model planner when PMFLOW_LLM_BASE_URL is set, else the rules planner."""
    model = build_model(settings)
    if model is None:
        return RulesPlanner(), _nothing
    return ModelPlanner(model=model, timeout_s=settings.llm_timeout_s), model.aclose


def build_adapters(settings: Settings) -> list[EvidenceAdapter]:
    """MCP servers first, in the config file's order, then the bounded live-search fallback;
    in demo mode the demo corpus server alone, so demo answers never mix with real ones."""
    if settings.demo:
        return [McpAdapter(config) for config in demo_servers()]
    engine = (SearxngJson(settings.live_search_endpoint or "")
              if settings.live_search_engine == "searxng"
              else DuckDuckGoHtml(settings.live_search_endpoint or "https://html.duckduckgo.com/html/"))
    fallback = LiveSearchAdapter(
        engine=engine, allow_hosts=settings.fetch_allow_hosts,
        max_queries=settings.live_search_max_queries, max_pages=settings.live_search_max_pages,
        max_bytes_per_page=settings.live_search_max_bytes,
        fetch_timeout_s=settings.live_search_fetch_timeout_s,
        total_timeout_s=settings.live_search_timeout_s,
        # One adapter per process: its limits pace every question the process handles.
        engine_limits=HostLimits(settings.live_search_engine_rate,
                                 settings.live_search_engine_burst),
        page_limits=HostLimits(settings.live_search_host_rate, settings.live_search_host_burst))
    return [*adapters_from_config(settings.mcp_config, settings.fetch_allow_hosts), fallback]


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
    composer_model = build_model(settings)
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
