"""How the stages are wired to Kafka: topics, codec, consume loops, runners, the workers."""
