"""The consume loop of one stage: ours, on aiokafka's public API.

One `AIOKafkaConsumer` per stage, in the stage's own consumer group, subscribed with the
runner's rebalance listener; a task polls it with `getmany` and hands each batch straight to
the runner, which judges each record's headers, decodes it, runs it and commits the finished
prefix itself (no auto-commit). The poll waits up to `wait_ms` and goes straight back to
polling: a record that arrives during a poll is handed over as it arrives, and an idle stage
wakes `1000 / wait_ms` times a second. (quix-streams owns its poll loop on its client's
public API the same way.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from itertools import chain

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import ConsumerStoppedError, KafkaError

from pmflow_gateway.streams.runner import StageRunner

log = logging.getLogger(__name__)
MAX_RECORDS = 500  # per poll of one stage


class StagePoller:
    """Starts a stage's consumer, polls it for the runner, and stops it."""

    def __init__(self, runner: StageRunner, *, bootstrap: str, fetch_max_wait_ms: int,
                 wait_ms: int, max_records: int = MAX_RECORDS) -> None:
        self.runner = runner
        self._bootstrap = bootstrap
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self._wait_ms = wait_ms
        self._max_records = max_records
        self.consumer: AIOKafkaConsumer | None = None
        self.task: asyncio.Task[None] | None = None
        # One past the last record fetched, per partition: where lag counts from on a
        # partition whose records were all refused or not yet taken.
        self.fetched_to: dict[TopicPartition, int] = {}

    async def start(self) -> None:
        """Start the consumer: bootstrapped, in its group, partitions assigned. Nothing is
        polled yet (`poll`)."""
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            group_id=self.runner.group_id,
            enable_auto_commit=False,  # the runner commits the finished prefix itself
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self._fetch_max_wait_ms,
            isolation_level="read_committed",  # never act on outputs of aborted transactions
        )
        consumer.subscribe([self.runner.topic], listener=self.runner.rebalance_listener())
        self.consumer = self.runner.consumer = consumer  # a rebalance may precede the start
        await consumer.start()

    def poll(self) -> None:
        """Start polling the started consumer for the runner, and the runner's commits."""
        assert self.consumer is not None, "poll() before start()"
        self.task = asyncio.create_task(self._poll(self.consumer),
                                        name=f"poll-{self.runner.stage.name}")
        self.runner.start_committing()

    async def _poll(self, consumer: AIOKafkaConsumer) -> None:
        """Poll until stopped. A broker error is logged and the poll tried again after a
        pause; anything else is a bug that ends the loop (and, under `Processor.run`, the
        worker): carrying on could commit past a record that was never taken."""
        delay = 0.5
        while True:
            try:
                batches = await consumer.getmany(timeout_ms=self._wait_ms,
                                                 max_records=self._max_records)
            except ConsumerStoppedError:
                return
            except KafkaError as exc:
                log.error("poll of %s failed (%r); polling again in %.1fs",
                          self.runner.stage.name, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.5
            if not batches:
                continue
            for tp, records in batches.items():
                self.fetched_to[tp] = records[-1].offset + 1
            # No pause between the poll and the hand-over: the runner decides which records
            # it still takes as of this poll.
            await self.runner.on_batch(list(chain.from_iterable(batches.values())))

    async def stop_polling(self) -> None:
        """Take no more batches; records already taken go on."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def close(self) -> None:
        """Leave the group and close the consumer (aiokafka calls no rebalance listener on the
        way out: the drain has committed what finished before).

        aiokafka's `stop()` cancels its pending fetches and awaits them; a fetch that failed
        (the broker away) is pausing before its retry, outside its own cancel handling, so
        the CancelledError of that fetch comes out of `stop()`. It is no cancel of ours: it
        would end the caller's closing of the other consumers, the publisher and the
        dependencies, and hide the error a failed start raises. The consumer counts as
        closed (its `stop()` got that far); a cancel of this task still goes through."""
        await self.stop_polling()
        if self.consumer is not None:
            try:
                await self.consumer.stop()
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                log.warning("closing the %s consumer: a fetch's cancel came out of its stop()",
                            self.runner.stage.name)
