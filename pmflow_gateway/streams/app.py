"""The workers of one process: topics, a consume loop per stage, start and graceful stop."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pmflow_gateway.adapters.traced_store import traced
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.commits import AtLeastOnce, CommitStrategy
from pmflow_gateway.streams.health import CONSUMER_LAG, GUARANTEE, IN_FLIGHT, HealthServer
from pmflow_gateway.streams.parallel import OrderedExecutor
from pmflow_gateway.streams.partition_producers import check_transactions
from pmflow_gateway.streams.polling import StagePoller
from pmflow_gateway.streams.publisher import EventPublisher
from pmflow_gateway.streams.runner import RunnerConfig, StageRunner, group_id
from pmflow_gateway.streams.stages import STAGES
from pmflow_gateway.streams.transactional import ExactlyOnce

log = logging.getLogger("pmflow_gateway.app")


# A question allocates about 450 containers, all freed by reference counting: no collection
# in `bench cpu` finds any garbage. What a collection of the first generation walks is the
# work in flight (a task, its coroutines and its events for each of up to 256 records a
# stage), 10,000 to 45,000 objects however low the threshold: the threshold only sets how
# often. The default (700) ran one about every question; at 10,000, 70 of about 12 ms for
# 5,000 questions (0.17-0.21 ms of CPU a question); at 50,000, 6 of about 50 ms (0.06 ms).
# Such a pause comes in a backlog, where a reply waits for the queue anyway; at a steady
# rate little is in flight and collections are rare and short.
GC_THRESHOLDS = (50_000, 10, 10)
# How long a start waits for the broker's first transactional producer (exactly-once): the
# first one on a new cluster creates the transaction log, which takes seconds.
START_CHECK_S = 30.0


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop a worker process runs on (`PMFLOW_EVENT_LOOP`), for `asyncio.Runner`.
    uvloop: a bare aiokafka transaction costs about a quarter less CPU than on the standard
    loop; inside the worker the difference stays within bench's run-to-run noise so far."""
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as missing:
        raise RuntimeError("PMFLOW_EVENT_LOOP=uvloop, but uvloop is not installed here: "
                           "install it, or set PMFLOW_EVENT_LOOP=asyncio") from missing
    return uvloop.new_event_loop


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


class Processor:
    """The workers of the chosen stages in one process: a consumer, a consume loop and a
    runner per stage (`polling.StagePoller`), one shared publisher, the health server."""

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
        self.publisher = EventPublisher(settings.kafka_bootstrap)
        self.health: HealthServer | None = None
        config = runner_config or RunnerConfig(max_in_flight=settings.in_flight,
                                               max_message_bytes=settings.max_message_bytes)
        self.runners = [self._runner(name, config) for name in self.stage_names]
        self.pollers = [StagePoller(runner, bootstrap=settings.kafka_bootstrap,
                                    fetch_max_wait_ms=settings.kafka_fetch_max_wait_ms,
                                    wait_ms=settings.kafka_batch_timeout_ms)
                        for runner in self.runners]
        self._started = False

    def _commits(self, name: str, config: RunnerConfig) -> CommitStrategy:
        if self.settings.processing_guarantee != "exactly_once":
            return AtLeastOnce(interval_s=config.commit_interval_s)
        # Finished records wait for the slowest one before them: bound how many wait.
        return ExactlyOnce(bootstrap=self.settings.kafka_bootstrap,
                           group_id=group_id(STAGES[name], self.topics), stage=name,
                           writes_to=STAGES[name].writes_to(self.topics),
                           max_held=4 * config.max_in_flight,
                           interval_s=config.commit_interval_s)

    def _runner(self, name: str, config: RunnerConfig) -> StageRunner:
        return StageRunner(STAGES[name], deps=self.deps, publisher=self.publisher,
                           topics=self.topics, config=config,
                           commits=self._commits(name, config))

    async def start(self) -> None:
        """Create the missing topics, build the dependencies, start the publisher, then every
        stage's consumer at once, and only when all of them are in their groups every
        stage's consume loop; then the health server. A worker takes no record before its
        start is done: once it answers, a broker that goes away is ridden out by running
        consumers, never met by a start half way (a consumer that cannot reach the broker
        at all fails the start). A start that fails closes what it opened."""
        try:
            await self._open()
            await start_together([poller.start() for poller in self.pollers])
        except BaseException:
            await self._close_all()
            raise
        # What the start built (settings, dependencies, compiled patterns, clients) lives as
        # long as the worker: out of the collector's generations, a full collection no longer
        # walks it (5.8 -> 5.6 ms of CPU a question, 7.5 -> 6.8 ms with tracing; bench cpu).
        gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        for poller in self.pollers:
            poller.poll()
        self._started = True
        await self._serve_health()

    async def _open(self) -> None:
        created = await ensure_topics(
            self.settings.kafka_bootstrap, self.topics, partitions=self.settings.topic_partitions,
            replication_factor=self.settings.topic_replication_factor,
            configs=settings_topic_configs(self.settings, self.topics))
        if created:
            log.info("created topics: %s", ", ".join(created))
        if self.settings.processing_guarantee == "exactly_once":
            # A broker that grants no transactional producer fails the start, with the fix,
            # rather than leaving the stages to hold outputs they can never commit.
            await check_transactions(self.settings.kafka_bootstrap, self.settings.topic_prefix,
                                     timeout_s=START_CHECK_S)
        if self.deps is None:
            assert self._make_deps is not None
            self.deps = await self._make_deps()
        bound = traced(self.deps)  # the runners' store writes show in the trace
        for runner in self.runners:
            runner.deps = bound
        await self.publisher.start()

    async def _serve_health(self) -> None:
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
        return self._started and not any(r.executor.closing for r in self.runners)

    def refresh_metrics(self) -> None:
        for poller in self.pollers:
            runner = poller.runner
            IN_FLIGHT.labels(runner.stage.name).set(runner.executor.in_flight)
            if poller.consumer is not None:
                CONSUMER_LAG.labels(runner.stage.name).set(
                    lag(poller.consumer, runner.executor, poller.fetched_to))

    async def stop(self) -> None:
        """Take no more records, finish and commit those taken (within the grace), leave the
        groups, close the publisher and the dependencies."""
        if self.health is not None:
            await self.health.stop()
            self.health = None
        for poller in self.pollers:
            await poller.stop_polling()
        for runner in self.runners:
            await runner.drain(self.grace_s)
        await self._close_all()

    async def _close_all(self) -> None:
        for poller in self.pollers:
            try:
                await poller.close()
            except Exception as exc:  # the others still close
                log.warning("closing the %s consumer failed: %r", poller.runner.stage.name, exc)
        await self.publisher.stop()
        if self.deps is not None:
            await self.deps.aclose()

    async def run(self, *, stop_requested: Callable[[], bool] = lambda: False) -> None:
        """Start, run until SIGTERM or SIGINT, stop gracefully. A signal during the start is
        honoured once the start is done, as is one `stop_requested` reports (it came before
        this loop's handlers were in place). A consume loop that fails stops the workers and
        raises its error."""
        loop = asyncio.get_running_loop()
        asked = asyncio.Event()
        signals = (signal.SIGTERM, signal.SIGINT)
        for sig in signals:
            loop.add_signal_handler(sig, asked.set)
        try:
            await self.start()
            log.info("workers started: %s; SIGTERM or CTRL+C stops them",
                     ", ".join(self.stage_names))
            if stop_requested():
                asked.set()
            waiting = asyncio.create_task(asked.wait())
            polls = [p.task for p in self.pollers if p.task is not None]
            done, _ = await asyncio.wait({waiting, *polls}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            failed = [t for t in done if t is not waiting]
            log.info("workers stopping")
            await self.stop()
            for task in failed:
                if not task.cancelled() and (exc := task.exception()) is not None:
                    raise exc
                raise RuntimeError(f"the consume loop {task.get_name()} ended on its own")
            log.info("workers stopped")
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)


async def start_together(starts: Sequence[Awaitable[None]]) -> None:
    """Run the starts at once (each consumer's group join takes a round of the broker's; one
    after the other they took seconds). The first to fail cancels the others, which are
    waited for, and its own error is raised: no group of errors, the CLI names it in a line."""
    tasks = [asyncio.ensure_future(start) for start in starts]
    if not tasks:
        return
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:  # a failure, or this start cancelled: none of the others goes on
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
    for task in tasks:
        if task in done and (task.cancelled() or task.exception() is not None):
            await task  # raises its error (or its CancelledError)


def lag(consumer: AIOKafkaConsumer, executor: OrderedExecutor,
        fetched_to: dict[TopicPartition, int]) -> int:
    """Records of the consumer's partitions still to be done and committed: from the first
    whose commit is to come (or, on a partition nothing was taken from yet, from one past the
    last record fetched) to the partition's end as a read_committed reader sees it. A
    partition nothing was fetched from yet counts once its first fetch is in."""
    started = executor.not_committed_from()
    total = 0
    for tp in consumer.assignment():
        end = consumer.last_stable_offset(tp)
        end = consumer.highwater(tp) if end is None else end
        start = started.get(tp, fetched_to.get(tp))
        if end is not None and start is not None and start >= 0:
            total += max(end - start, 0)
    return total
