"""Publishing events: key = question_id, idempotent producer, acks=all, delivery awaited."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, OutOfOrderSequenceNumber
from pydantic import BaseModel

from pmflow_gateway.ports import Unpublishable
from pmflow_gateway.streams.codec import encode, output_headers
from pmflow_gateway.streams.delivery import (
    MAX_REQUEST_BYTES,
    can_succeed_later,
    key_partitioner,
    refusal,
)
from pmflow_gateway.tracing import publishing

log = logging.getLogger(__name__)
Headers = Sequence[tuple[str, bytes]]


class EventPublisher:
    def __init__(self, bootstrap: str, *, linger_ms: int = 0) -> None:
        self._bootstrap = bootstrap
        self._linger_ms = linger_ms
        self._producer = self._new_producer(linger_ms)
        # The broker refuses a whole batch for one record it refuses, so a record refused in
        # a shared batch is sent again alone, one at a time: only that refusal is its own.
        self._alone: AIOKafkaProducer | None = None
        self._alone_lock = asyncio.Lock()
        self._renew_lock = asyncio.Lock()

    def _new_producer(self, linger_ms: int = 0) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            enable_idempotence=True,  # implies acks=all: a retried send is not written twice
            acks="all",
            linger_ms=linger_ms,
            max_request_size=MAX_REQUEST_BYTES,
            max_batch_size=512 * 1024,  # 256 sends in flight fit one batch: no drain-wait herd
            partitioner=key_partitioner,
        )

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()
        if self._alone is not None:
            await self._alone.stop()

    async def send(self, topic: str, key: str | None, event: BaseModel, *,
                   headers: Headers = ()) -> None:
        """Write one event and wait until the broker has it; retries while the broker is away.

        Never gives up on what can succeed later: the input offset is committed only after this
        returns, and losing the output is not an option, so a broker outage stalls the stage
        instead. An error no retry can fix, for this record alone, raises `Unpublishable`.
        """
        value = encode(event)
        key_bytes = key.encode() if key else None
        delay = 0.2
        alone = False
        with publishing(topic, key) as trace_headers:
            all_headers = output_headers(event, trace_headers, headers)
            stale: AIOKafkaProducer | None = None
            renewals = 0
            while True:
                try:
                    if stale is not None:
                        await self._renew(stale)
                        stale = None
                    producer = self._producer
                    if alone:
                        await self._send_alone(topic, value, key_bytes, all_headers)
                    else:
                        await producer.send_and_wait(topic, value, key=key_bytes,
                                                     headers=all_headers)
                    return
                except OutOfOrderSequenceNumber:
                    # A batch the broker refused for good had taken its sequence numbers, so
                    # the broker refuses every later batch of that partition as out of order;
                    # only a new producer (a new producer id) starts the sequence again.
                    log.warning("publish to %s out of sequence; renewing the producer", topic)
                    if not alone:  # the lone sender renews itself (`_send_alone`)
                        stale = producer
                    renewals += 1
                    if renewals > 1:  # a new producer did not help: the broker may be unwell
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, 5.0)
                except KafkaError as exc:
                    if not can_succeed_later(exc):
                        if alone:
                            raise Unpublishable(refusal(exc)) from exc
                        alone = True
                        continue
                    log.warning("publish to %s failed (%r); retrying in %.1fs", topic, exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)

    async def _renew(self, stale: AIOKafkaProducer) -> None:
        """Replace the shared producer `stale`, unless another send has already replaced it."""
        async with self._renew_lock:
            if stale is not self._producer:
                return
            fresh = self._new_producer(self._linger_ms)
            try:
                await fresh.start()
            except BaseException:
                await fresh.stop()
                raise
            self._producer = fresh
        await stale.stop()

    async def _send_alone(self, topic: str, value: bytes, key: bytes | None,
                          headers: list[tuple[str, bytes]]) -> None:
        async with self._alone_lock:
            if self._alone is None:
                producer = self._new_producer()
                await producer.start()
                self._alone = producer
            try:
                await self._alone.send_and_wait(topic, value, key=key, headers=headers)
            except OutOfOrderSequenceNumber:
                spent, self._alone = self._alone, None
                await spent.stop()
                raise
