"""Prometheus `/metrics`, `/healthz` and `/readyz` for one worker process, and its JSON logs.

A deliberately tiny HTTP/1.0 server on asyncio: three GET routes do not justify a web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable

import orjson
from opentelemetry import trace
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

QUESTIONS = Counter("pmflow_questions_total", "Answers produced, by status", ["status"])
ADAPTER_ATTEMPTS = Counter("pmflow_adapter_attempts_total", "Evidence adapter attempts",
                           ["adapter", "outcome"])
STAGE_SECONDS = Histogram("pmflow_stage_seconds", "Time to process one record, by stage",
                          ["stage"], buckets=(.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
DEAD_LETTERS = Counter("pmflow_dead_letters_total", "Records sent to the dead-letter topic",
                       ["stage"])
IN_FLIGHT = Gauge("pmflow_in_flight", "Records in flight, by stage", ["stage"])
GUARANTEE = Gauge("pmflow_processing_guarantee",
                  "1 for the processing guarantee this worker runs with", ["guarantee"])
TRANSACTIONS = Counter("pmflow_transactions_total",
                       "Exactly-once commit transactions, by stage and outcome",
                       ["stage", "outcome"])
CONSUMER_LAG = Gauge("pmflow_consumer_lag",
                     "Records of the assigned partitions not yet done and committed, by stage",
                     ["stage"])
QUEUE_WAIT = Histogram("pmflow_queue_wait_seconds",
                       "Time from a record's write to its stage taking it up, by stage",
                       ["stage"], buckets=(.01, .05, .1, .5, 1, 5, 10, 30, 60, 120, 300))
PAUSED_PARTITIONS = Gauge("pmflow_paused_partitions",
                          "Partitions a stage takes no records from while a dependency it "
                          "needs (the database) is away, by stage", ["stage"])

log = logging.getLogger(__name__)

question_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("question_id",
                                                                            default=None)


def record_outcome(output: object) -> None:
    """Count what a stage produced: answers by status, adapter attempts by outcome."""
    from pmflow_gateway.schemas import AnswerReady, EvidenceCollected

    if isinstance(output, AnswerReady):
        QUESTIONS.labels(str(output.status)).inc()
    elif isinstance(output, EvidenceCollected):
        for attempt in output.attempts:
            ADAPTER_ATTEMPTS.labels(attempt.adapter, attempt.outcome).inc()


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line, with the trace and question it belongs to."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": self.formatTime(record), "level": record.levelname, "logger": record.name,
                "msg": record.getMessage()}
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            line["trace_id"] = format(ctx.trace_id, "032x")
            line["span_id"] = format(ctx.span_id, "016x")
        if (question_id := question_id_var.get()) is not None:
            line["question_id"] = question_id
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


def configure_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)


class HealthServer:
    """Serves the three routes; `ready` says whether every consumer has its assignment."""

    def __init__(self, *, port: int, host: str = "127.0.0.1", ready: Callable[[], bool],
                 refresh: Callable[[], None] = lambda: None) -> None:
        self._port = port
        self._host = host
        self._ready = ready
        self._refresh = refresh
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            try:
                request = await asyncio.wait_for(reader.readline(), 5)
            except ValueError:  # a line past the reader's limit
                request = b""
            path = request_path(request)
            if path is None:
                # Anyone who can reach the port can send this: not worth more than a line.
                log.debug("malformed request on the metrics port: %r", request[:80])
                status, ctype, body = "400 Bad Request", "text/plain", b"bad request\n"
            else:
                status, ctype, body = self._route(path)
            writer.write(f"HTTP/1.0 {status}\r\nContent-Type: {ctype}\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
        writer.close()

    def _route(self, path: str) -> tuple[str, str, bytes]:
        if path == "/metrics":
            self._refresh()
            return "200 OK", CONTENT_TYPE_LATEST, generate_latest()
        if path == "/healthz":
            return "200 OK", "text/plain", b"ok\n"
        if path == "/readyz":
            return ("200 OK", "text/plain", b"ready\n") if self._ready() else \
                ("503 Service Unavailable", "text/plain", b"not ready\n")
        return "404 Not Found", "text/plain", b"not found\n"


def request_path(line: bytes) -> str | None:
    """The path of a `GET /path HTTP/1.x` request line; None for anything else."""
    parts = line.split()
    if len(parts) != 3 or parts[0] != b"GET" or not parts[2].startswith(b"HTTP/") \
            or not parts[1].startswith(b"/") or not parts[1].isascii():
        return None
    return parts[1].decode("ascii").split("?", 1)[0]
