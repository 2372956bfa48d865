"""What a send can expect: the largest record the producers write, which errors are final, and
which partition a key goes to."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence

from aiokafka import errors as kafka_errors
from aiokafka.errors import KafkaError
from aiokafka.partitioner import DefaultPartitioner, murmur2
from aiokafka.record.default_records import DefaultRecordBatchBuilder

from pmflow_gateway.ports import Unpublishable

# Every producer of the gateway uses this request limit; the broker's `message.max.bytes`
# should be at least as large, or it refuses what the producer lets through (a final error).
MAX_REQUEST_BYTES = 2 * 1024 * 1024

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


def can_succeed_later(exc: BaseException) -> bool:
    """Whether a retry may get this error's event through."""
    return not isinstance(exc, FINAL_ERRORS)


def refusal(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def check_size(key: bytes | None, value: bytes, headers: Sequence[tuple[str, bytes]]) -> None:
    """Refuse, as the producer would when sending, a record larger than any request may be.
    An output held for a transaction is checked when it is held: sent later, inside the
    commit, it would fail that transaction on every cycle and stall its partition."""
    size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, list(headers))
    if size > MAX_REQUEST_BYTES:
        raise Unpublishable(f"MessageSizeTooLargeError: the record is {size} bytes, more than "
                            f"the {MAX_REQUEST_BYTES} a request may carry")


class Refused(Exception):
    """The broker refused outputs for good; `reasons` by input offset."""

    def __init__(self, reasons: dict[int, str]) -> None:
        super().__init__(reasons)
        self.reasons = reasons


async def delivered(sent: list[tuple[int, asyncio.Future[object]]]) -> list[object]:
    """Wait for the sends and return what each delivered (its record's metadata); raise what
    no retry fixes as `Refused`, by input offset."""
    results = await asyncio.gather(*(future for _, future in sent), return_exceptions=True)
    refused: dict[int, str] = {}
    for (offset, _), result in zip(sent, results, strict=True):
        if isinstance(result, BaseException):
            if can_succeed_later(result):
                raise result
            refused.setdefault(offset, refusal(result))
    if refused:
        raise Refused(refused)
    return results


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
