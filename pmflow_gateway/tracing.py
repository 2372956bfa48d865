"""One trace per question, as a chain: each stage's processing span is the child of the span
that published its input. Context crosses Kafka in the `traceparent`/`tracestate` headers.

Configured by the standard `OTEL_*` variables. Without `OTEL_EXPORTER_OTLP_ENDPOINT` (or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) no SDK is installed and the API's no-op tracer costs
next to nothing. A collector that is away never holds the process: each export waits at most
`OTEL_EXPORTER_OTLP_TIMEOUT` (default here 5 s), and the flush at shutdown at most
`SHUTDOWN_S`, after which the spans not yet sent are dropped.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from pmflow_gateway import SERVICE_NAME

tracer = trace.get_tracer("pmflow_gateway")
log = logging.getLogger(__name__)
_configured = False
SHUTDOWN_S = 5.0
EXPORT_TIMEOUT_S = 5.0  # the SDK's default is 10 s a request


def configure_tracing(service_name: str = SERVICE_NAME) -> bool:
    """Install the SDK with an OTLP/HTTP exporter when the environment asks for one."""
    global _configured
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT")
    if _configured or not endpoint or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return _configured
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME", service_name)
    timeout = None if _timeout_configured() else EXPORT_TIMEOUT_S
    # Not at exit: `shutdown_tracing` stops it, bounded; the SDK's own exit hook is not.
    provider = TracerProvider(resource=Resource.create({"service.name": name}),
                              shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(timeout=timeout)))
    trace.set_tracer_provider(provider)
    instrument_libraries()
    _configured = True
    return True


def instrument_libraries() -> None:
    """Client spans from httpx's own transports (MCP over HTTP, the model) and from every
    SQLAlchemy engine created from now on (one span per statement)."""
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    httpx_spans, sql_spans = HTTPXClientInstrumentor(), SQLAlchemyInstrumentor()
    if not httpx_spans.is_instrumented_by_opentelemetry:
        httpx_spans.instrument()
    if not sql_spans.is_instrumented_by_opentelemetry:
        # Its declared range stops short of SQLAlchemy 2.1, whose engine events it listens to
        # are unchanged; the statement spans are checked by the tracing tests.
        sql_spans.instrument(skip_dep_check=True)


def _timeout_configured() -> bool:
    return any(os.environ.get(name) for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                                 "OTEL_EXPORTER_OTLP_TIMEOUT"))


def shutdown_tracing(timeout_s: float = SHUTDOWN_S) -> bool:
    """Send the spans still queued and stop the exporter, waiting at most `timeout_s`; False
    when the collector did not take them in time (they are dropped, the process goes on)."""
    provider = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if not callable(shutdown):
        return True
    # The SDK's flush waits up to 30 s per batch for a collector that never answers; it runs
    # in a daemon thread so that only this wait bounds it.
    stopper = threading.Thread(target=shutdown, name="otel-shutdown", daemon=True)
    stopper.start()
    stopper.join(timeout_s)
    if stopper.is_alive():
        log.warning("the OTLP collector took no spans within %.1f s; the rest are dropped",
                    timeout_s)
        return False
    return True


Headers = Sequence[tuple[str, bytes]]


def _carrier(headers: Headers) -> dict[str, str]:
    return {k: v.decode("latin-1") for k, v in headers if k in ("traceparent", "tracestate")}


def _recording() -> bool:
    """Whether an SDK is installed; without one, spans are not worth their CPU (about a
    quarter of a stage's), only the caller's trace context is passed on."""
    # `get_tracer_provider()` reads os.environ on every call until a provider is set; the
    # API's global (set at most once per process) answers the same question without that.
    provider = getattr(trace, "_TRACER_PROVIDER", None)
    return provider is not None and not isinstance(provider, trace.NoOpTracerProvider)


@contextmanager
def consuming(*, topic: str, partition: int, offset: int, key: bytes | None, group: str,
              headers: Headers, stage: str) -> Iterator[Span]:
    """The span of one stage processing one record, child of the record's publisher."""
    if not _recording():
        carrier = _carrier(headers)
        token = otel_context.attach(propagate.extract(carrier)) if carrier else None
        try:
            yield trace.INVALID_SPAN
        finally:
            if token is not None:
                otel_context.detach(token)
        return
    parent = propagate.extract(_carrier(headers))
    attributes: dict[str, Any] = {
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": str(partition),
        "messaging.kafka.offset": offset,
        "messaging.consumer.group.name": group,
        "pmflow.stage": stage,
    }
    if key:
        attributes["messaging.kafka.message.key"] = key.decode("utf-8", "replace")
    with tracer.start_as_current_span(f"process {topic}", context=parent, kind=SpanKind.CONSUMER,
                                      attributes=attributes) as span:
        yield span


@contextmanager
def publishing(topic: str, key: str | None) -> Iterator[list[tuple[str, bytes]]]:
    """A producer span; yields the trace headers to put on the record."""
    if not _recording():
        passed_on: dict[str, str] = {}
        if trace.get_current_span().get_span_context().is_valid:
            propagate.inject(passed_on)  # an upstream trace goes on even without an SDK here
        yield [(k, v.encode("latin-1")) for k, v in passed_on.items()]
        return
    attributes: dict[str, Any] = {
        "messaging.system": "kafka",
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.destination.name": topic,
    }
    if key:
        attributes["messaging.kafka.message.key"] = key
    with tracer.start_as_current_span(f"send {topic}", kind=SpanKind.PRODUCER,
                                      attributes=attributes):
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        yield [(k, v.encode("latin-1")) for k, v in carrier.items()]


@contextmanager
def in_process(*, topic: str, stage: str, after: Span | None) -> Iterator[Span]:
    """The span of one stage run in process (the embedded `ask`): named after the topic a
    worker would read and chained to the stage `after` it, so the trace has the workers'
    shape without the Kafka sends in between."""
    parent = trace.set_span_in_context(after) if after is not None else None
    with tracer.start_as_current_span(f"process {topic}", context=parent,
                                      attributes={"pmflow.stage": stage}) as s:
        yield s


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    with tracer.start_as_current_span(name, attributes=attributes) as s:
        yield s


def mark_error(target: Span, message: str) -> None:
    target.set_status(Status(StatusCode.ERROR, message))

