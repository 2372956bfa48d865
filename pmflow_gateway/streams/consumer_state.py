"""What a reader needs to know of the cluster, read through aiokafka's public API: a topic's
partitions, what a consumer group committed for a partition with the metadata committed
beside the offset, and which partitions have a transaction open.

`AIOKafkaConsumer.committed()` returns the offset alone; the exactly-once commits carry the
list of finished records after the offset in its metadata (`done_map`), so they are read with
`AIOKafkaAdminClient.list_consumer_group_offsets`, the same OffsetFetch request."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Protocol

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

NO_COMMIT = (-1, "")


async def partitions_of(bootstrap: str, topic: str) -> set[int] | None:
    """The partition ids of `topic`, or None when it does not exist. Asked from the metadata
    of every topic, which creates none (asking for one topic by name may auto-create it)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics()
    finally:
        await admin.close()
    for found in described:
        if found["topic"] == topic and not found["error_code"]:
            return {p["partition"] for p in found["partitions"]}
    return None


class CommittedOffsets(Protocol):
    async def committed(self, tp: TopicPartition) -> tuple[int, str]:
        ...

    async def close(self) -> None:
        ...


class GroupOffsets:
    """Reads one group's committed offsets; the admin client starts on first use."""

    def __init__(self, *, bootstrap: str, group_id: str, timeout_s: float = 30.0) -> None:
        self._bootstrap = bootstrap
        self._group_id = group_id
        self._timeout_s = timeout_s
        self._admin: AIOKafkaAdminClient | None = None
        self._coordinator: int | None = None

    async def _client(self) -> AIOKafkaAdminClient:
        if self._admin is None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self._bootstrap)
            try:
                await asyncio.wait_for(admin.start(), self._timeout_s)
            except BaseException:
                with contextlib.suppress(Exception):
                    await admin.close()
                raise
            self._admin = admin
        return self._admin

    async def committed(self, tp: TopicPartition) -> tuple[int, str]:
        """The group's committed offset of `tp` and its metadata; `NO_COMMIT` when there is
        none. A coordinator that moved or is loading is asked again (found anew) until the
        timeout, as the consumer's own coordinator does."""
        deadline = time.monotonic() + self._timeout_s
        delay = 0.05
        while True:
            try:
                admin = await self._client()
                if self._coordinator is None:
                    self._coordinator = await admin.find_coordinator(self._group_id)
                found = (await admin.list_consumer_group_offsets(
                    self._group_id, self._coordinator, partitions=[tp])).get(tp)
            except KafkaError:
                self._coordinator = None
                if time.monotonic() + delay > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            if found is None or found.offset < 0:
                return NO_COMMIT
            return found.offset, found.metadata or ""

    async def close(self) -> None:
        if self._admin is not None:
            admin, self._admin = self._admin, None
            with contextlib.suppress(Exception):
                await admin.close()


class OpenTransactions(Protocol):
    async def among(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        """The partitions with a transaction open."""
        ...

    async def stable(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """Each partition's last stable offset."""
        ...

    async def close(self) -> None:
        ...


class StableOffsets:
    """Where a `read_committed` reader's log ends (the last stable offset: before the first
    record of the oldest transaction still open), and whether that is before the end of the
    log (the high watermark): a transaction is open there. Read with two group-less
    consumers, one of each isolation level, started once on first use."""

    def __init__(self, *, bootstrap: str, timeout_s: float = 30.0) -> None:
        self._bootstrap = bootstrap
        self._timeout_s = timeout_s
        self._readers: tuple[AIOKafkaConsumer, AIOKafkaConsumer] | None = None
        self._starting = asyncio.Lock()  # the partitions of an assignment ask at once

    async def _clients(self) -> tuple[AIOKafkaConsumer, AIOKafkaConsumer]:
        async with self._starting:
            if self._readers is None:
                readers = [AIOKafkaConsumer(bootstrap_servers=self._bootstrap,
                                            enable_auto_commit=False, isolation_level=level,
                                            request_timeout_ms=int(self._timeout_s * 1000))
                           for level in ("read_committed", "read_uncommitted")]
                try:
                    await asyncio.wait_for(asyncio.gather(*(r.start() for r in readers)),
                                           self._timeout_s)
                except BaseException:
                    await _stopped(readers)
                    raise
                self._readers = (readers[0], readers[1])
            return self._readers

    async def stable(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        if not partitions:
            return {}
        committed, _ = await self._clients()
        ends = await asyncio.wait_for(committed.end_offsets(sorted(partitions)), self._timeout_s)
        return dict(ends)

    async def among(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        if not partitions:
            return set()
        stable, ends = await self._clients()
        wanted = sorted(partitions)
        committed, written = await asyncio.wait_for(
            asyncio.gather(stable.end_offsets(wanted), ends.end_offsets(wanted)), self._timeout_s)
        return {tp for tp in wanted if committed[tp] < written[tp]}

    async def close(self) -> None:
        async with self._starting:
            readers, self._readers = self._readers, None
        if readers is not None:
            await _stopped(list(readers))


async def _stopped(readers: list[AIOKafkaConsumer]) -> None:
    """Stop each reader, whatever state its start reached. Its background task is let begin
    first: a consumer stopped before it ran raises `CancelledError` from `stop()`."""
    await asyncio.sleep(0)
    for reader in readers:
        with contextlib.suppress(Exception):
            await reader.stop()
