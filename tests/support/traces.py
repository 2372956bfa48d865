"""One tracer provider for the whole test session (OpenTelemetry allows one per process):
spans go to memory, and to Jaeger over OTLP/HTTP when the stack is up."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pmflow_gateway.tracing import instrument_libraries

_exporter: InMemorySpanExporter | None = None
_provider: TracerProvider | None = None


def session_exporter() -> tuple[InMemorySpanExporter, TracerProvider]:
    global _exporter, _provider
    if _exporter is None or _provider is None:
        _exporter = InMemorySpanExporter()
        _provider = TracerProvider(resource=Resource.create({"service.name": "pmflow-gateway"}))
        _provider.add_span_processor(SimpleSpanProcessor(_exporter))
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            _provider.add_span_processor(
                BatchSpanProcessor(OTLPSpanExporter(), schedule_delay_millis=200))
        trace.set_tracer_provider(_provider)
        instrument_libraries()  # as a worker's start-up does
    return _exporter, _provider


def export_to(endpoint: str) -> None:
    """Send the session's spans (and the workers' it starts) to the OTLP/HTTP `endpoint`,
    e.g. a Jaeger started for the session."""
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    if _provider is not None:  # already made without it: add the exporter now
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        _provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces"), schedule_delay_millis=200))
