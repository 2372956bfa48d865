"""PMFlow external query gateway: a Kafka stream processor."""

SERVICE_NAME = "pmflow-gateway"
"""The name traces are reported under, unless OTEL_SERVICE_NAME says otherwise; here rather
than in the tracing module so that the CLI's parser can show it without loading OpenTelemetry."""
