"""How the stages are wired to Kafka: topics, codec, runners, the FastStream app."""
