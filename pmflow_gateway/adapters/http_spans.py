"""HTTP client spans for the pinned transport, which the httpx instrumentation never sees
(it patches httpx's own transports). One span per request, named by its method, with the
stable HTTP client attributes; it lasts until the body is closed, so a slow download shows
as a long span rather than a short one followed by silence.

Query values are redacted in `url.full`: a search URL carries the user's question. No trace
context is sent: these are third-party sites, not services of ours.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

_tracer = trace.get_tracer("pmflow_gateway.http")


def redacted_url(url: httpx.URL) -> str:
    parts = urlsplit(str(url))
    query = urlencode([(k, "REDACTED") for k, _ in parse_qsl(parts.query,
                                                               keep_blank_values=True)])
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, query, ""))


def _fail(span: Span, error_type: str, message: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))


class _SpanUntilClosed(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, span: Span) -> None:
        self._inner = inner
        self._span = span

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._inner:
                yield part
        except Exception as exc:
            _fail(self._span, type(exc).__qualname__, str(exc))
            raise

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._span.end()


class TracedTransport(httpx.AsyncBaseTransport):
    """Wraps a transport so each request it sends is an HTTP client span."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        span = _tracer.start_span(request.method, kind=SpanKind.CLIENT, attributes={
            "http.request.method": request.method,
            "url.full": redacted_url(url),
            "server.address": url.host,
            "server.port": url.port or (443 if url.scheme == "https" else 80),
        })
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException as exc:  # a cancelled fetch is worth seeing too
            _fail(span, type(exc).__qualname__, str(exc))
            span.end()
            raise
        span.set_attribute("http.response.status_code", response.status_code)
        if response.status_code >= 400:
            _fail(span, str(response.status_code), f"HTTP {response.status_code}")
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _SpanUntilClosed(response.stream, span)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
