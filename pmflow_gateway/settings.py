"""Configuration, read once from `PMFLOW_*` environment variables (documented in the README)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PMFLOW_", extra="ignore")

    kafka_bootstrap: str = Field(default="127.0.0.1:9092", description="Kafka bootstrap servers.")
    topic_prefix: str = Field(default="pmflow.", description="Prefix of every topic name.")
    topic_partitions: int = Field(
        default=3, ge=1, description="Partitions of each topic created; the most workers a "
        "stage can use. Topics with more pass `doctor`.")
    topic_replication_factor: int = Field(
        default=1, ge=1, description="Replicas of each topic created (3 on a production cluster).")
    topic_min_insync_replicas: int | None = Field(
        default=None, ge=1, description="`min.insync.replicas` of each topic created: how many "
        "replicas must have a write before it counts (our producers use acks=all). Unset: one "
        "less than the replication factor, at least 1 (2 of 3).")
    dead_letter_retention_ms: int = Field(
        default=2_592_000_000, ge=3_600_000, description="`retention.ms` of the dead-letter "
        "topic when it is created: how long operators have to look at a refused record "
        "(default 30 days; the other topics keep the broker's default).")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL (postgresql+asyncpg://...). Unset: SQLite file "
        "under PMFLOW_DATA_DIR.",
    )
    data_dir: Path = Field(default=Path(".pmflow"), description="Where embedded state lives.")
    database_timeout_s: float = Field(
        default=10.0, gt=0, description="How long one store call may wait for the database "
        "(a connection, a lock, a statement) before the database counts as away: the memory "
        "and feedback stages then pause and try again later; nothing is dropped.")
    feedback_wait_s: float = Field(
        default=604_800.0, gt=0, description="How long a rating whose QA record has not "
        "been stored yet waits for it (kept in `pending_feedback`, applied when the record "
        "lands); after that it is dropped as an orphan and logged. Default 7 days.")
    mcp_config: Path | None = Field(
        default=None,
        description="TOML file listing MCP servers. Unset: none, the live search alone.",
    )
    demo: bool = Field(
        default=False, description="Answer from the packaged demo corpus only (invented pages "
        "on example hosts, every reply says so) instead of the real providers; `--demo`.")
    mcp_start_timeout_s: float = Field(
        default=30.0, gt=0, description="How long each MCP server may take to start when the "
        "process starts, before any question's clock runs.")
    deadline_ms: int = Field(
        default=20_000, ge=100, description="Default budget per question (when the event "
        "carries no deadline_ms). Time spent waiting for the evidence stage is not charged to it.")
    max_wait_ms: int = Field(
        default=60_000, ge=0, le=3_600_000, description="How long a question may wait in the "
        "stages' queues on top of its budget: one the evidence stage takes up later than "
        "budget + this after the gateway first saw it is not looked up and ends timed_out.")
    evidence_cache_s: float = Field(
        default=120.0, ge=0, le=3600, description="How long evidence found about a plan is "
        "reused for the same tenant and plan, so the external probe PMFlow asks for before it "
        "decides and the answer after it share one look-up (one process; 0: never reused).")
    max_message_bytes: int = Field(default=1_048_576, description="Larger inputs dead-letter.")
    result_limit: int = Field(default=3, ge=1, le=10, description="Default evidence count.")
    in_flight: int = Field(default=256, ge=1, description="In-flight messages per slow stage.")
    processing_guarantee: Literal["exactly_once", "at_least_once"] = Field(
        default="exactly_once",
        description="exactly_once: each stage's outputs and input offsets commit in one Kafka "
        "transaction per partition (read them with isolation.level=read_committed; the broker "
        "must grant transactional producers); at_least_once: no transactions, and a crash may "
        "repeat outputs, with the same event_id when their content is the same.")
    kafka_fetch_max_wait_ms: int = Field(
        default=500, ge=0, le=60_000,
        description="Longest a stage's fetch waits at the broker for new records; it also bounds "
        "how long a partition whose records were just handed over waits to be fetched again.")
    kafka_batch_timeout_ms: int = Field(
        default=100, ge=1, le=10_000,
        description="Longest a stage's poll waits when no record comes; a record ends the wait "
        "at once, and the stage polls again without sleeping.")
    fetch_allow_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="`host:port` entries the SSRF guard lets through despite a private address "
        "(tests only); a bare host means its default ports 80/443 only; comma-separated.",
    )
    http_port: int | None = Field(
        default=9464, description="Port of /metrics, /healthz, /readyz (0: any free port; "
        "unset with an empty value: no server).")
    http_host: str = Field(
        default="127.0.0.1", description="Address /metrics, /healthz, /readyz listen on "
        "(0.0.0.0: every interface, as a container needs for its probes and scrapes).")
    jaeger_url: str = Field(
        default="http://127.0.0.1:16686",
        description="Jaeger query API that `pmflow-gateway trace` reads.")
    live_search_engine: Literal["duckduckgo", "searxng", "brave"] = Field(
        default="duckduckgo", description="The live search's engine: searxng (your own "
        "instance, JSON), brave (the Brave Search API, PMFLOW_LIVE_SEARCH_API_KEY) or "
        "duckduckgo (its HTML page: zero configuration, not meant for production).")
    live_search_endpoint: str | None = Field(
        default=None, description="Where the engine is: the SearXNG instance's base URL (or "
        "its /search URL; required for searxng); defaults to DuckDuckGo's HTML page and "
        "Brave's web search API. A configured endpoint is trusted for the engine's requests "
        "even on a private or loopback address; page fetches still refuse that address.")
    live_search_api_key: SecretStr | None = Field(
        default=None, description="The engine's API key (brave); sent to its endpoint only, "
        "never logged or traced.")
    live_search_max_queries: int = Field(default=2, ge=1, le=5, description="Searches a question.")
    live_search_max_pages: int = Field(default=4, ge=1, le=10, description="Pages per question.")
    live_search_max_bytes: int = Field(default=1_000_000, ge=10_000, description="Bytes per page.")
    live_search_fetch_timeout_s: float = Field(default=5.0, gt=0, description="Per page fetch.")
    live_search_timeout_s: float = Field(
        default=10.0, gt=0, description="Whole fallback per question (the deadline may cut it).")
    live_search_engine_rate: float = Field(
        default=1.0, ge=0, description="Searches a second this process sends to the search "
        "engine, whatever the number of questions (0: no limit; raise it for your own SearXNG).")
    live_search_engine_burst: int = Field(
        default=4, ge=1, description="Searches that may go at once after a quiet spell.")
    live_search_host_rate: float = Field(
        default=2.0, ge=0, description="Page fetches a second this process sends to any one "
        "host (0: no limit).")
    live_search_host_burst: int = Field(
        default=4, ge=1, description="Page fetches to one host that may go at once.")
    memory_domain_hints: bool = Field(
        default=False, description="Let the planner prefer domains that grounded well-rated "
        "answers to the tenant's similar past questions.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Lowest level a worker logs (its log is JSON lines).")
    event_loop: Literal["uvloop", "asyncio"] = Field(
        default="uvloop", description="The workers' event loop: uvloop (libuv) or the "
        "standard library's; `asyncio` is the fallback where uvloop has no wheel.")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint "
                                     "(`.../v1`) of both the planner and the composer.")
    llm_model: str = Field(default="gpt-4o-mini", description="Model name sent to it.")
    llm_api_key: SecretStr | None = Field(
        default=None, description="Bearer token for it; never logged or traced.")
    llm_planner_base_url: str | None = Field(
        default=None, description="The planner's endpoint, if not PMFLOW_LLM_BASE_URL.")
    llm_planner_model: str | None = Field(
        default=None, description="The planner's model, if not PMFLOW_LLM_MODEL.")
    llm_planner_api_key: SecretStr | None = Field(
        default=None, description="The planner's token, if not PMFLOW_LLM_API_KEY.")
    llm_composer_base_url: str | None = Field(
        default=None, description="The composer's endpoint, if not PMFLOW_LLM_BASE_URL.")
    llm_composer_model: str | None = Field(
        default=None, description="The composer's model, if not PMFLOW_LLM_MODEL.")
    llm_composer_api_key: SecretStr | None = Field(
        default=None, description="The composer's token, if not PMFLOW_LLM_API_KEY.")
    llm_timeout_s: float = Field(default=8.0, gt=0, description="Per model call.")
    agent_tokens_file: Path | None = Field(
        default=None, description="TOML file of the bearer tokens `pmflow-gateway mcp --http` "
        "accepts, each issued for one tenant (`[[tokens]]` with `tenant` and `token` or its hex "
        "`sha256`); a caller's tenant is the one its token names. Required for --http.")
    agent_tenant: str = Field(
        default="local", min_length=1, max_length=200,
        description="The tenant of `pmflow-gateway mcp` over stdio (the local user).")
    agent_memory_writes: bool = Field(
        default=False, description="Remember questions asked through the MCP tools (QA record "
        "and route memory of the caller's tenant). In Kafka mode the workers read it.")
    agent_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Host header values `pmflow-gateway mcp --http` "
        "answers (`host:port`, `host:*`; comma-separated). Empty: this machine's names and the "
        "bind address only, whatever the bind address.")
    agent_sessions_per_tenant: int = Field(
        default=8, ge=1, description="MCP sessions one tenant may hold open over HTTP.")
    agent_session_idle_s: float = Field(
        default=60.0, gt=0, description="An MCP session with no request for this long closes.")

    @field_validator("fetch_allow_hosts", "agent_allowed_hosts", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # An environment variable is text: "a.test,b.test" (a JSON list still works).
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                import json

                return json.loads(value)
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.live_search_engine == "searxng" and not (self.live_search_endpoint or "").strip():
            raise ValueError("PMFLOW_LIVE_SEARCH_ENGINE=searxng needs PMFLOW_LIVE_SEARCH_ENDPOINT "
                             "(the SearXNG base URL)")
        if (self.topic_min_insync_replicas or 1) > self.topic_replication_factor:
            raise ValueError("PMFLOW_TOPIC_MIN_INSYNC_REPLICAS cannot exceed "
                             "PMFLOW_TOPIC_REPLICATION_FACTOR: no write could ever count")
        if self.live_search_engine == "brave" and not self.live_search_api_key:
            raise ValueError("PMFLOW_LIVE_SEARCH_ENGINE=brave needs PMFLOW_LIVE_SEARCH_API_KEY "
                             "(a Brave Search API key)")
        return self

    def model_endpoint(self, role: Literal["planner", "composer"]) -> ModelEndpoint | None:
        """Where the planner's or the composer's model is: its own settings, each falling
        back to the common one; None when neither names an endpoint (no model)."""
        base_url = getattr(self, f"llm_{role}_base_url") or self.llm_base_url
        if not base_url:
            return None
        return ModelEndpoint(base_url=base_url,
                             model=getattr(self, f"llm_{role}_model") or self.llm_model,
                             api_key=getattr(self, f"llm_{role}_api_key") or self.llm_api_key)


class ModelEndpoint(NamedTuple):
    """One role's model: where, which, and its key (a secret: never printed)."""

    base_url: str
    model: str
    api_key: SecretStr | None
