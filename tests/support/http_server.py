"""A real HTTP server on 127.0.0.1 for tests, served from a daemon thread inside a `with`."""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test output free of access logs."""

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
