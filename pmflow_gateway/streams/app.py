"""The FastStream app: one batch subscriber per stage, each its own consumer group."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from itertools import chain
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRecord
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from faststream import FastStream
from faststream.kafka import KafkaBroker
from faststream.middlewares import AckPolicy

from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.consumer_state import fetch_position
from pmflow_gateway.streams.health import CONSUMER_LAG, GUARANTEE, IN_FLIGHT, HealthServer
from pmflow_gateway.streams.parallel import OrderedExecutor
from pmflow_gateway.streams.publisher import EventPublisher
from pmflow_gateway.streams.runner import RunnerConfig, StageRunner, group_id
from pmflow_gateway.streams.stages import STAGES
from pmflow_gateway.streams.transactional import TransactionalCommits

log = logging.getLogger(__name__)
MAX_RECORDS = 500  # per poll of one stage


def topic_configs(topics: Topics, *, replication_factor: int, min_insync_replicas: int | None,
                  dead_letter_retention_ms: int) -> dict[str, dict[str, str]]:
    """Each topic's configs at creation: `min.insync.replicas` (our producers write with
    acks=all, so a write counts once that many replicas have it; by default one less than
    the replicas, so one broker may be down), and the dead-letter topic's retention."""
    isr = min_insync_replicas or max(1, replication_factor - 1)
    configs = {name: {"min.insync.replicas": str(isr)} for name in topics.all()}
    configs[topics.dead_letter]["retention.ms"] = str(dead_letter_retention_ms)
    return configs


def settings_topic_configs(settings: Settings, topics: Topics) -> dict[str, dict[str, str]]:
    return topic_configs(topics, replication_factor=settings.topic_replication_factor,
                         min_insync_replicas=settings.topic_min_insync_replicas,
                         dead_letter_retention_ms=settings.dead_letter_retention_ms)


async def ensure_topics(bootstrap: str, topics: Topics, *, partitions: int = 3,
                        replication_factor: int = 1,
                        configs: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Create the topics that are missing, with `configs` (name -> settings) or the defaults
    of `topic_configs`; returns the names it created. Existing topics are left as they are."""
    configs = configs or topic_configs(topics, replication_factor=replication_factor,
                                       min_insync_replicas=None,
                                       dead_letter_retention_ms=2_592_000_000)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in topics.all() if t not in existing]
        if missing:
            await admin.create_topics(
                [NewTopic(t, partitions, replication_factor, topic_configs=configs.get(t, {}))
                 for t in missing])
        return missing
    finally:
        await admin.close()


def _consume_directly(subscriber: Any, runner: StageRunner, *, max_records: int,
                      wait_ms: int) -> None:
    """The stage's records go from `getmany` straight to its runner. FastStream's own loop
    would (1) sleep `batch_timeout_ms` after every empty poll, so a record arriving during the
    sleep waited for it at each of the five stages, and (2) hand every batch through its
    parser, decoder, middlewares and dependency injection, which the runner does not use (it
    reads raw records, judges each one's headers and decodes it itself) and which at low
    rates, one record per batch, is paid per record at every stage. FastStream keeps what it
    is used for: the consumer's life (start, group membership, the rebalance listener, stop)
    and the AsyncAPI description. The poll waits up to `wait_ms` and goes straight back to
    polling: an idle stage wakes `1000 / wait_ms` times a second."""
    async def get_msg(consumer: Any) -> tuple[ConsumerRecord, ...]:
        batches = await consumer.getmany(timeout_ms=wait_ms, max_records=max_records)
        return tuple(chain.from_iterable(batches.values()))

    async def consume_one(records: tuple[ConsumerRecord, ...]) -> None:
        try:
            await runner.on_batch(records)
        except Exception:  # FastStream's loop would end without a word: say so first
            log.exception("stage %s stopped taking records", runner.stage.name)
            raise

    subscriber.get_msg = get_msg
    subscriber.consume_one = consume_one


class Processor:
    """The workers of the chosen stages in one process, on one FastStream broker."""

    def __init__(self, settings: Settings, *, stages: Sequence[str] = (),
                 deps: Deps | Callable[[], Awaitable[Deps]], grace_s: float = 10.0,
                 runner_config: RunnerConfig | None = None) -> None:
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown stage(s): {', '.join(sorted(unknown))}; "
                             f"choose from {', '.join(STAGES)}")
        self.settings = settings
        self.topics = Topics(prefix=settings.topic_prefix)
        # Built dependencies, or how to build them at start-up (inside the event loop, where
        # the clients they hold must be made): the entry point decides, never this module.
        self.deps: Deps | None = deps if isinstance(deps, Deps) else None
        self._make_deps = None if isinstance(deps, Deps) else deps
        self.grace_s = grace_s
        self.stage_names = list(stages) or list(STAGES)
        GUARANTEE.labels(settings.processing_guarantee).set(1)
        self.broker = KafkaBroker(settings.kafka_bootstrap, logger=None,
                                  description="PMFlow external query gateway")
        self.publisher = EventPublisher(settings.kafka_bootstrap)
        self.runners: list[StageRunner] = []
        self.health: HealthServer | None = None
        self._subscribers: list[Any] = []  # FastStream's subscriber type is internal
        config = runner_config or RunnerConfig(max_in_flight=settings.in_flight,
                                               max_message_bytes=settings.max_message_bytes)
        for name in self.stage_names:
            self._add_runner(name, config)
        # Our logger, not FastStream's coloured one: every line a worker writes is JSON.
        self.app = FastStream(self.broker, logger=logging.getLogger("pmflow_gateway.app"))
        self.app.on_startup(self._startup)
        self.app.after_startup(self._start_committing)
        self.app.on_shutdown(self._drain)
        self.app.after_shutdown(self._close)

    def _transactions(self, name: str, config: RunnerConfig) -> TransactionalCommits | None:
        if self.settings.processing_guarantee != "exactly_once":
            return None
        # Finished records wait for the slowest one before them: bound how many wait.
        return TransactionalCommits(bootstrap=self.settings.kafka_bootstrap,
                                    group_id=group_id(STAGES[name], self.topics), stage=name,
                                    max_held=4 * config.max_in_flight)

    def _add_runner(self, name: str, config: RunnerConfig) -> None:
        runner = StageRunner(STAGES[name], deps=self.deps,
                             publisher=self.publisher, topics=self.topics, config=config,
                             transactions=self._transactions(name, config))
        subscriber = self.broker.subscriber(
            runner.topic,
            group_id=runner.group_id,
            batch=True,  # polled by _consume_directly, below
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self.settings.kafka_fetch_max_wait_ms,
            isolation_level="read_committed",  # never act on outputs of aborted transactions
            ack_policy=AckPolicy.MANUAL,  # the runner commits the finished prefix itself
            listener=runner.rebalance_listener(),
            title=f"{name}:{runner.topic}",
            description=runner.stage.description,
        )

        async def on_batch(records: list[bytes]) -> None:  # described in AsyncAPI, never called
            raise AssertionError("records go to the runner directly (_consume_directly)")

        on_batch.__name__ = f"on_{name}_batch"
        subscriber(on_batch)
        _consume_directly(subscriber, runner, max_records=MAX_RECORDS,
                          wait_ms=self.settings.kafka_batch_timeout_ms)
        runner.find_consumer = lambda: subscriber.consumer  # a rebalance may precede start-up
        self.runners.append(runner)
        self._subscribers.append(subscriber)

    async def _startup(self) -> None:
        try:
            await self._open()
        except BaseException:
            await self._close()  # FastStream runs no shutdown hook after a failed start
            raise

    async def _open(self) -> None:
        created = await ensure_topics(
            self.settings.kafka_bootstrap, self.topics, partitions=self.settings.topic_partitions,
            replication_factor=self.settings.topic_replication_factor,
            configs=settings_topic_configs(self.settings, self.topics))
        if created:
            log.info("created topics: %s", ", ".join(created))
        if self.deps is None:
            assert self._make_deps is not None
            self.deps = await self._make_deps()
        for runner in self.runners:
            runner.deps = self.deps
        await self.publisher.start()

    async def _start_committing(self) -> None:
        for runner, subscriber in zip(self.runners, self._subscribers, strict=True):
            runner.start_committing(subscriber.consumer)
        if self.settings.http_port is not None:
            health = HealthServer(host=self.settings.http_host,
                                  port=self.settings.http_port, ready=self.ready,
                                  refresh=self.refresh_metrics)
            try:
                await health.start()
                self.health = health
            except OSError as exc:  # a taken port must not stop the workers
                log.warning("no /metrics server on port %s: %s", self.settings.http_port, exc)

    def ready(self) -> bool:
        return all(r.consumer is not None for r in self.runners) and not any(
            r.executor.closing for r in self.runners)

    def refresh_metrics(self) -> None:
        for runner in self.runners:
            IN_FLIGHT.labels(runner.stage.name).set(runner.executor.in_flight)
            if runner.consumer is not None:
                CONSUMER_LAG.labels(runner.stage.name).set(lag(runner.consumer, runner.executor))

    async def _drain(self) -> None:
        if self.health is not None:
            await self.health.stop()
        for runner in self.runners:
            await runner.drain(self.grace_s)

    async def _close(self) -> None:
        await self.publisher.stop()
        if self.deps is not None:
            await self.deps.aclose()

    async def start(self) -> None:
        """Start without FastStream's signal handling (tests and the in-process CLI)."""
        await self._startup()
        await self.broker.start()
        await self._start_committing()

    async def stop(self) -> None:
        await self._drain()
        await self.broker.stop()
        await self._close()


def lag(consumer: AIOKafkaConsumer, executor: OrderedExecutor) -> int:
    """Records of the consumer's partitions still to be done and committed: from the first
    whose commit is to come (or, on a partition nothing was taken from yet, from where the
    consumer fetches) to the partition's end as a read_committed reader sees it."""
    started = executor.not_committed_from()
    total = 0
    for tp in consumer.assignment():
        end = consumer.last_stable_offset(tp)
        end = consumer.highwater(tp) if end is None else end
        start = started.get(tp, fetch_position(consumer, tp))
        if end is not None and start >= 0:
            total += max(end - start, 0)
    return total
