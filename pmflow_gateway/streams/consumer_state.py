"""What a reader needs to know of the cluster, read through aiokafka's public admin API: a
topic's partitions, and what a consumer group committed for a partition with the metadata
committed beside the offset.

`AIOKafkaConsumer.committed()` returns the offset alone; the exactly-once commits carry the
list of finished records after the offset in its metadata (`done_map`), so they are read with
`AIOKafkaAdminClient.list_consumer_group_offsets`, the same OffsetFetch request."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Protocol

from aiokafka import TopicPartition
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
