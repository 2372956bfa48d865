"""What the benchmarks run against instead of the outside world: an MCP server that answers
at once, a store that only counts, and a local HTTP server. (The tests keep their own fakes;
the benchmarks import nothing from tests/.)"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

from pmflow_gateway.ports import AdapterResult
from pmflow_gateway.schemas import AdapterAttempt, ExternalEvidence, ExternalQueryPlan


@dataclass
class InstantAdapter:
    """An MCP server that answers every plan at once (or after `delay_s`) with
    `pages(plan, n)` on its n-th call, keeping nothing per question but the count."""

    pages: Callable[[ExternalQueryPlan, int], list[ExternalEvidence]]
    name: str = "mcp"
    delay_s: float = 0.0
    calls: int = 0

    async def collect(self, plan: ExternalQueryPlan, *, timeout_s: float) -> AdapterResult:
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        items = self.pages(plan, self.calls)
        return AdapterResult(items=items, attempts=[AdapterAttempt(
            adapter=self.name, outcome="ok", latency_ms=self.delay_s * 1000,
            evidence_count=len(items))])

    async def aclose(self) -> None:
        return None


@dataclass
class CountingStore:
    """The MemoryStore port that only counts, so a benchmark's memory stays its own."""

    answers: int = 0
    feedback: int = 0
    outcomes: int = 0

    async def record_answer(self, event: object) -> bool:
        self.answers += 1
        return True

    async def apply_feedback(self, event: object) -> bool:
        self.feedback += 1
        return True

    async def record_outcome(self, event: object) -> bool:
        self.outcomes += 1
        return True

    async def similar(self, tenant_id: str, question: str, *, limit: int = 5) -> list[object]:
        return []

    async def aclose(self) -> None:
        return None


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the output free of access logs."""

    def log_message(self, *args: object) -> None:
        return


class LocalServer:
    """Serves `handler` on a free port; `tls`, a server-side context, serves https."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *,
                 tls: ssl.SSLContext | None = None) -> None:
        self.scheme = "https" if tls else "http"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        # A short poll keeps shutdown() (hence each test's teardown) fast.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
