"""A tiny local website for tests: real HTTP on 127.0.0.1, a random port, a thread.

    with LocalSite({"/page": ("text/html; charset=utf-8", "<html>...</html>")}) as site:
        site.url("/page")  # http://127.0.0.1:PORT/page

Bodies are str or bytes; paths match with their query string first, then without it.
Unknown paths answer 404. Every requested path is kept in `requests`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

Page = tuple[str, str | bytes]


class LocalSite:
    def __init__(self, pages: Mapping[str, Page]) -> None:
        self.pages: dict[str, Page] = dict(pages)
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def __enter__(self) -> LocalSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:
                site.requests.append(self.path)
                page = site.pages.get(self.path) or site.pages.get(urlsplit(self.path).path)
                if page is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                content_type, body = page
                data = body.encode("utf-8") if isinstance(body, str) else body
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
