"""Publishing events: key = question_id, idempotent producer, acks=all, delivery awaited."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer
from aiokafka import errors as kafka_errors
from aiokafka.errors import KafkaError
from aiokafka.partitioner import DefaultPartitioner, murmur2
from pydantic import BaseModel

from pmflow_gateway.ports import Unpublishable
from pmflow_gateway.streams.codec import encode
from pmflow_gateway.streams.transactional import Output, held_outputs
from pmflow_gateway.tracing import publishing

log = logging.getLogger(__name__)
Headers = Sequence[tuple[str, bytes]]



# Errors about the record itself or its topic: the same send fails the same way every time.
# aiokafka leaves many transient ones unmarked as retriable too (a broker restarting, a producer
# id the broker forgot), so only these end a record; everything else is retried.
FINAL_ERRORS: tuple[type[KafkaError], ...] = (
    kafka_errors.MessageSizeTooLargeError, kafka_errors.RecordTooLargeError,
    kafka_errors.RecordListTooLargeError, kafka_errors.InvalidTopicError,
    kafka_errors.TopicAuthorizationFailedError, kafka_errors.ClusterAuthorizationFailedError,
    kafka_errors.CorruptRecordException, kafka_errors.InvalidTimestampError,
    kafka_errors.UnsupportedForMessageFormatError, kafka_errors.PolicyViolationError,
)


def can_succeed_later(exc: KafkaError) -> bool:
    """Whether a retry may get this error's event through."""
    return not isinstance(exc, FINAL_ERRORS)


_CACHED_KEY_BYTES = 256  # question ids; a longer key is hashed each time


@functools.lru_cache(maxsize=4096)
def _key_hash(key: bytes) -> int:
    return int(murmur2(key)) & 0x7FFFFFFF


def key_partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """aiokafka's default choice (murmur2 of the key over every partition, so a key keeps its
    partition and its order), with the pure-Python hash computed once per key: every stage of
    a question sends under the same key."""
    if key is None or len(key) > _CACHED_KEY_BYTES:
        return int(DefaultPartitioner()(key, all_partitions, available))
    return all_partitions[_key_hash(key) % len(all_partitions)]


class EventPublisher:
    def __init__(self, bootstrap: str, *, linger_ms: int = 0) -> None:
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            enable_idempotence=True,  # implies acks=all: a retried send is not written twice
            acks="all",
            linger_ms=linger_ms,
            max_request_size=2 * 1024 * 1024,
            max_batch_size=512 * 1024,  # 256 sends in flight fit one batch: no drain-wait herd
            partitioner=key_partitioner,
        )

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def send(self, topic: str, key: str | None, event: BaseModel, *,
                   headers: Headers = ()) -> None:
        """Write one event and wait until the broker has it; retries while the broker is away.

        Never gives up on what can succeed later: the input offset is committed only after this
        returns, and losing the output is not an option, so a broker outage stalls the stage
        instead. An error no retry can fix raises `Unpublishable`.
        """
        value = encode(event)
        delay = 0.2
        with publishing(topic, key) as trace_headers:
            all_headers = [("event_type", type(event).__name__.encode()), *trace_headers, *headers]
            if (outbox := held_outputs()) is not None:  # exactly-once: the commit sends it
                outbox.append(Output(topic, key.encode() if key else None, value, all_headers))
                return
            while True:
                try:
                    await self._producer.send_and_wait(
                        topic, value, key=key.encode() if key else None, headers=all_headers)
                    return
                except KafkaError as exc:
                    if not can_succeed_later(exc):
                        raise Unpublishable(f"{type(exc).__name__}: {exc}") from exc
                    log.warning("publish to %s failed (%r); retrying in %.1fs", topic, exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
