"""Which MCP servers the evidence stage asks, read from a TOML file (`PMFLOW_MCP_CONFIG`).

Unset, the gateway asks none (the live search alone); `--demo` asks our own corpus server
over stdio instead of every real provider. See
`examples/mcp.toml` for every field and for configs of public servers.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pmflow_gateway.adapters.mcp_results import MAX_HITS

Transport = Literal["stdio", "http"]


class McpConfigError(ValueError):
    """The TOML file does not describe usable servers; raised at startup, never per question."""


class McpServerConfig(BaseModel):
    # Strict: a TOML string where a number or a list belongs (`timeout_s = "8"`,
    # `args = "-m foo"`) is a mistake to report at start-up, not a value to guess at.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    name: str
    """Shown in attempts and, when results carry no site, as the source label."""
    transport: Transport = "stdio"
    command: str | None = None
    """stdio: the program to start (once, then kept running)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: extra environment variables (the SDK passes only a safe subset of ours)."""
    url: str | None = None
    """http: the streamable HTTP endpoint, e.g. https://learn.microsoft.com/api/mcp."""
    search_tool: str | None = "search"
    """Tool run once per search query of the plan; None for fetch-only servers."""
    search_args: dict[str, Any] = Field(
        default_factory=lambda: {"query": "{query}", "limit": "{result_limit}"})
    """Tool arguments from plan fields. A value that is exactly one placeholder keeps the
    field's type ("{result_limit}" -> 3); other strings are formatted; non-strings pass as is.
    Placeholders: query, url and every ExternalQueryPlan field."""
    fetch_tool: str | None = None
    """Tool that returns one page's text for a URL (e.g. mcp-server-fetch's `fetch`)."""
    fetch_args: dict[str, Any] = Field(default_factory=lambda: {"url": "{url}"})
    fetch_results: bool = False
    """Search, then fetch: the top results' pages are read within the question's budget, with
    `fetch_tool` when set, else by the gateway's SSRF-safe fetcher, and their text (the lead
    and the passages that match the plan) is the evidence instead of the search snippets.
    For search tools that return short snippets (Brave's, Tavily's, SearXNG's servers)."""
    fetch_urls: list[str] = Field(default_factory=list)
    """Pages to fetch for every plan, as URL templates ("https://x/{location_hint}"); a
    template whose placeholder the plan leaves empty is skipped; values are URL-quoted."""
    max_queries: int = 3
    """At most this many of the plan's search_queries are run (concurrently)."""
    timeout_s: float = 8.0
    """Per tool call; the question's remaining budget shortens it."""
    failure_threshold: int = 3
    """Consecutive failed calls that open the circuit (calls in flight go on)."""
    cooldown_s: float = 1.0
    """While the circuit is open, one probe call goes out this often; one success closes it."""
    max_concurrent_calls: int = 64
    """Calls in flight to this server at once; more wait for a slot within their own time, so
    a stalled server holds only its own slots."""
    max_hits: int = MAX_HITS
    """Hits kept from one call; the rest of a longer result is never turned into evidence."""
    max_result_bytes: int = 1_000_000
    """Largest message read from the server (a result, a stdio line, an HTTP body); a larger
    one fails its call unread."""
    max_server_messages: int = 100
    """Requests and notifications the server may send us in one session; later ones are
    dropped unanswered and the next call opens a new connection."""

    @model_validator(mode="after")
    def _usable(self) -> Self:
        if self.transport == "stdio" and not self.command:
            raise ValueError("stdio needs `command`")
        if self.transport == "http" and not (self.url or "").startswith(("http://", "https://")):
            raise ValueError("http needs an http(s) `url`")
        if not self.search_tool and not (self.fetch_tool and self.fetch_urls):
            raise ValueError("needs `search_tool`, or `fetch_tool` with `fetch_urls`")
        if self.fetch_results and not self.search_tool:
            raise ValueError("fetch_results needs `search_tool`")
        counts = (self.max_queries, self.failure_threshold, self.max_concurrent_calls,
                  self.max_hits, self.max_result_bytes, self.max_server_messages)
        if self.timeout_s <= 0 or self.cooldown_s < 0 or min(counts) < 1:
            raise ValueError("timeout_s must be > 0, cooldown_s >= 0, and max_queries, "
                             "failure_threshold, max_concurrent_calls, max_hits, "
                             "max_result_bytes and max_server_messages >= 1")
        return self


def demo_servers() -> list[McpServerConfig]:
    """Our own server over the packaged demo corpus, started with this interpreter so it
    finds this package."""
    return [McpServerConfig(name="pmflow-corpus", transport="stdio", command=sys.executable,
                            args=["-m", "pmflow_gateway.mcp_server"], fetch_tool="fetch",
                            fetch_results=True)]


def _why(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in e['loc']) or 'entry'}: {e['msg']}".removeprefix(
            "entry: Value error, ")
        for e in error.errors(include_url=False, include_input=False))


def parse_servers(document: dict[str, Any]) -> list[McpServerConfig]:
    servers = []
    for index, entry in enumerate(document.get("servers", [])):
        if not isinstance(entry, dict):
            raise McpConfigError(f"[[servers]] #{index + 1} is not a table")
        try:
            servers.append(McpServerConfig.model_validate(entry))
        except ValidationError as exc:
            name = f" ({entry['name']})" if isinstance(entry.get("name"), str) else ""
            raise McpConfigError(f"[[servers]] #{index + 1}{name}: {_why(exc)}") from None
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise McpConfigError(f"MCP server names must be unique: {names}")
    return servers


def load_servers(path: Path | None) -> list[McpServerConfig]:
    """Servers from the TOML file; none when no file is configured."""
    if path is None:
        return []
    try:
        document = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise McpConfigError(f"cannot read MCP config {path}: {exc}") from exc
    return parse_servers(document)
