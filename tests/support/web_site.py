"""A tiny local web site for tests: real HTTP on 127.0.0.1, routes from a dict.

`routes` maps a path (with or without its query string) to `(status, headers, body)`. A
redirect is a 3xx with a `Location` header. A body is `str`, `bytes`, or a zero-argument
callable returning an iterable of byte chunks, streamed without a Content-Length (an endless
or slow one tests the fetcher's byte and time caps). Every request is logged, so a test can
assert which paths were (never) fetched and which Host header arrived.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from tests.support.http_server import LocalServer, QuietHandler

Body = str | bytes | Callable[[], Iterable[bytes]]
Route = tuple[int, dict[str, str], Body]


@dataclass(frozen=True)
class LoggedRequest:
    path: str  # with its query string
    host: str  # the Host header as sent
    headers: dict[str, str] = field(default_factory=dict)  # every header, names lower-cased


class LocalSite(LocalServer):
    def __init__(self, routes: dict[str, Route] | None = None, *,
                 tls: ssl.SSLContext | None = None) -> None:
        """`tls`: a server-side context to serve https instead of http."""
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[LoggedRequest] = []
        super().__init__(self._handler(), tls=tls)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def paths_requested(self) -> list[str]:
        return [r.path for r in self.requests]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                site.requests.append(LoggedRequest(
                    self.path, self.headers.get("Host", ""),
                    {k.lower(): v for k, v in self.headers.items()}))
                route = site.routes.get(self.path) or site.routes.get(urlsplit(self.path).path)
                status, headers, body = route or (404, {"Content-Type": "text/plain"}, "none")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if callable(body):
                    self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                    try:
                        for chunk in body():
                            self.wfile.write(chunk)
                            self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the client stopped reading, as the caps intend
                    return
                payload = body.encode() if isinstance(body, str) else body
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
