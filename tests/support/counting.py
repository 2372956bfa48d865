"""The evidence adapters' transports, counted: every MCP `tools/call` a session passes on to
its server, and (through `LocalSite`'s request log) every HTTP request the live search sends."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult

from pmflow_gateway.adapters.mcp import ToolSession


class CountingSession:
    """A `ToolSession` that records each call before the real session sends it."""

    def __init__(self, inner: ToolSession) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def connects(self) -> int:
        return self.inner.connects

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((tool, dict(arguments)))
        return await self.inner.call_tool(tool, arguments)

    async def connect(self) -> None:
        await self.inner.connect()

    def retire(self) -> None:
        self.inner.retire()

    async def aclose(self) -> None:
        await self.inner.aclose()
