"""A local OpenAI-compatible endpoint for tests: real HTTP, scripted replies.

Each request pops the next scripted reply: a string (returned as the message content), or
`("sleep", seconds)` to hang, or `("status", code)` to fail, or `("refusal", text)` for a
refusal, or `("length", text)` for output cut at the token limit. Every request body and its
headers are kept so a test can assert what the model was shown.
"""

from __future__ import annotations

import json
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.http_server import LocalServer, QuietHandler

Reply = str | tuple[str, float] | tuple[str, str]


class ScriptedOpenAI(LocalServer):
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        super().__init__(self._handler())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply: Reply = outer.replies.popleft() if outer.replies else "{}"
                if isinstance(reply, tuple) and reply[0] == "sleep":
                    time.sleep(reply[1])
                    reply = "{}"
                if isinstance(reply, tuple) and reply[0] == "status":
                    self.send_response(int(reply[1]))
                    self.end_headers()
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply}
                finish = "stop"
                if isinstance(reply, tuple) and reply[0] == "refusal":
                    message = {"role": "assistant", "content": None, "refusal": reply[1]}
                elif isinstance(reply, tuple) and reply[0] == "length":
                    message, finish = {"role": "assistant", "content": reply[1]}, "length"
                payload = json.dumps({"choices": [{"message": message,
                                                   "finish_reason": finish}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
