"""Configuration, read once from `PMFLOW_*` environment variables (documented in the README)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PMFLOW_", extra="ignore")

    kafka_bootstrap: str = Field(default="127.0.0.1:9092", description="Kafka bootstrap servers.")
    topic_prefix: str = Field(default="pmflow.", description="Prefix of every topic name.")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL (postgresql+asyncpg://...). Unset: SQLite file "
        "under PMFLOW_DATA_DIR.",
    )
    data_dir: Path = Field(default=Path(".pmflow"), description="Where embedded state lives.")
    mcp_config: Path | None = Field(
        default=None,
        description="TOML file listing MCP servers. Unset: our own MCP server over stdio.",
    )
    deadline_ms: int = Field(default=20_000, ge=100, description="Default budget per question.")
    max_message_bytes: int = Field(default=1_048_576, description="Larger inputs dead-letter.")
    result_limit: int = Field(default=3, ge=1, le=10, description="Default evidence count.")
    in_flight: int = Field(default=256, ge=1, description="In-flight messages per slow stage.")
    processing_guarantee: Literal["exactly_once", "at_least_once"] = Field(
        default="at_least_once",
        description="exactly_once: each stage's outputs and input offsets commit in one Kafka "
        "transaction per partition (read them with isolation.level=read_committed); "
        "at_least_once: a crash may repeat outputs, with the same event_id.")
    fetch_allow_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts the SSRF guard lets through despite a private address (tests only).",
    )
    http_port: int | None = Field(
        default=9464, description="Port of /metrics, /healthz, /readyz (0: any free port; "
        "unset with an empty value: no server).")
    live_search_engine: Literal["duckduckgo", "searxng"] = Field(
        default="duckduckgo", description="Search endpoint kind of the live-search fallback.")
    live_search_endpoint: str | None = Field(
        default=None, description="DuckDuckGo HTML URL (default https://html.duckduckgo.com/html/)"
        " or SearxNG base URL (required for searxng).")
    live_search_max_queries: int = Field(default=2, ge=1, le=5, description="Searches a question.")
    live_search_max_pages: int = Field(default=4, ge=1, le=10, description="Pages per question.")
    live_search_max_bytes: int = Field(default=1_000_000, ge=10_000, description="Bytes per page.")
    live_search_fetch_timeout_s: float = Field(default=5.0, gt=0, description="Per page fetch.")
    live_search_timeout_s: float = Field(
        default=10.0, gt=0, description="Whole fallback per question (the deadline may cut it).")
    memory_domain_hints: bool = Field(
        default=False, description="Let the planner prefer domains that grounded well-rated "
        "answers to the tenant's similar past questions.")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint.")
    llm_model: str = Field(default="gpt-4o-mini", description="Model name sent to it.")
    llm_api_key: str | None = Field(default=None, description="Bearer token for it.")
    llm_timeout_s: float = Field(default=8.0, gt=0, description="Per model call.")
