"""PMFlow external query gateway: a Kafka stream processor."""

from pmflow_gateway.compiled import check as _check_compiled

SERVICE_NAME = "pmflow-gateway"
"""The name traces are reported under, unless OTEL_SERVICE_NAME says otherwise; here rather
than in the tracing module so that the CLI's parser can show it without loading OpenTelemetry."""

_check_compiled()  # before any compiled module can be imported
