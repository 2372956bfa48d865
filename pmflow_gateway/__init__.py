"""PMFlow external query gateway: a Kafka stream processor."""
