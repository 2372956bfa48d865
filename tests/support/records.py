"""Consumer records built by hand for the runtime's unit tests."""

from __future__ import annotations

from aiokafka import ConsumerRecord


def record(offset: int, key: bytes | None, partition: int = 0) -> ConsumerRecord:
    return ConsumerRecord(topic="t", partition=partition, offset=offset, timestamp=0,
                          timestamp_type=0, key=key, value=b"", checksum=None,
                          serialized_key_size=0, serialized_value_size=0, headers=())
