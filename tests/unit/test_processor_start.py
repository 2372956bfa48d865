"""How a Processor starts its stages, without a broker: every consumer starts at once, none
polls before all have started, and a start that fails raises its own error after closing
what it opened; a consumer's close survives aiokafka letting a fetch's cancel out; the event
loop a worker runs on."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
import uvloop

from pmflow_gateway.ops.errors import error_lines, exit_code_of
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams import app
from pmflow_gateway.streams.app import Processor, loop_factory, start_together
from pmflow_gateway.streams.partition_producers import NoTransactions
from pmflow_gateway.streams.polling import StagePoller
from tests.fakes import fake_deps


class FakePoller:
    """A stage's poller whose consumer start waits for `gate` (or fails with `error`)."""

    def __init__(self, name: str, journal: list[str], gate: asyncio.Event,
                 error: Exception | None = None) -> None:
        self.name, self.journal, self.gate, self.error = name, journal, gate, error
        self.task: asyncio.Task[None] | None = None
        self.closed = False

    async def start(self) -> None:
        self.journal.append(f"start {self.name}")
        if self.error is not None:
            raise self.error
        await self.gate.wait()
        self.journal.append(f"started {self.name}")

    def poll(self) -> None:
        self.journal.append(f"poll {self.name}")

    async def stop_polling(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


class FakePublisher:
    stopped = False

    async def stop(self) -> None:
        self.stopped = True


async def _nothing() -> None:
    return None


def processor(pollers: list[FakePoller]) -> tuple[Processor, FakePublisher]:
    proc = Processor(Settings(http_port=None), stages=[p.name for p in pollers],
                     deps=fake_deps())
    publisher = FakePublisher()
    proc._open = _nothing  # type: ignore[method-assign]  # no topics, no publisher to start
    proc.pollers = pollers  # type: ignore[assignment]
    proc.publisher = publisher  # type: ignore[assignment]
    return proc, publisher


async def test_the_consumers_start_together_and_none_polls_before_all_have_started() -> None:
    journal: list[str] = []
    gate = asyncio.Event()
    pollers = [FakePoller(name, journal, gate) for name in ("plan", "evidence", "render")]
    proc, _ = processor(pollers)
    starting = asyncio.create_task(proc.start())
    await asyncio.sleep(0.01)
    assert journal == ["start plan", "start evidence", "start render"]  # all at once
    gate.set()
    await starting
    assert journal[3:] == ["started plan", "started evidence", "started render",
                           "poll plan", "poll evidence", "poll render"]
    assert proc.ready()


async def test_a_consumer_that_cannot_start_fails_the_start_with_its_own_error() -> None:
    """A broker away at a consumer's bootstrap: the other starts are cancelled, nothing was
    polled, everything opened is closed, and the error raised is the consumer's (the CLI
    names it), not a group of errors."""
    journal: list[str] = []
    gate = asyncio.Event()  # never set: the others wait for their group for ever
    refused = ConnectionError("Unable to bootstrap")
    pollers = [FakePoller("plan", journal, gate), FakePoller("evidence", journal, gate, refused),
               FakePoller("render", journal, gate)]
    proc, publisher = processor(pollers)
    with pytest.raises(ConnectionError) as raised:
        await asyncio.wait_for(proc.start(), timeout=5)
    assert raised.value is refused
    assert not any(line.startswith("poll") for line in journal)
    assert all(p.closed for p in pollers) and publisher.stopped
    assert not proc.ready()


async def test_start_together_cancels_the_others_when_one_fails() -> None:
    waiting = asyncio.Event()
    cancelled: list[str] = []

    async def waits() -> None:
        try:
            await waiting.wait()
        except asyncio.CancelledError:
            cancelled.append("waits")
            raise

    async def fails() -> None:
        await asyncio.sleep(0)
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await start_together([waits(), fails()])
    assert cancelled == ["waits"]
    await start_together([])  # nothing to start


class FetchPausingConsumer:
    """Stops as aiokafka's consumer does while the broker is away: a fetch that failed is
    pausing before its retry; `stop()` cancels it and awaits it, and its CancelledError comes
    out of `stop()`."""

    def __init__(self) -> None:
        self.fetch: asyncio.Task[None] | None = None
        self.stopped = False

    async def stop(self) -> None:
        self.stopped = True
        assert self.fetch is not None
        self.fetch.cancel()
        await self.fetch

    async def pausing_fetch(self) -> None:
        try:
            raise ConnectionError("broker away")
        except ConnectionError:
            await asyncio.sleep(60)  # the pause before the retry, outside any cancel handling


def poller_of(consumer: FetchPausingConsumer) -> StagePoller:
    runner = SimpleNamespace(stage=SimpleNamespace(name="plan"))
    poller = StagePoller(runner, bootstrap="-", fetch_max_wait_ms=1,  # type: ignore[arg-type]
                         wait_ms=1)
    poller.consumer = consumer  # type: ignore[assignment]
    consumer.fetch = asyncio.create_task(consumer.pausing_fetch())
    return poller


async def test_a_fetch_cancel_out_of_the_consumer_stop_does_not_end_the_close() -> None:
    consumer = FetchPausingConsumer()
    poller = poller_of(consumer)
    await asyncio.sleep(0)  # the fetch is pausing
    await poller.close()  # returns: the caller goes on closing the others
    assert consumer.stopped


async def test_a_cancel_of_the_closing_task_still_goes_through() -> None:
    consumer = FetchPausingConsumer()
    poller = poller_of(consumer)
    await asyncio.sleep(0)
    closing = asyncio.create_task(poller.close())
    await asyncio.sleep(0)  # inside stop(), awaiting the cancelled fetch
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing


def test_the_event_loop_setting_picks_the_loop_a_worker_runs_on() -> None:
    assert loop_factory("asyncio") is None  # asyncio.Runner's default: the standard loop
    factory = loop_factory(Settings().event_loop)  # the default: uvloop
    assert factory is not None
    with asyncio.Runner(loop_factory=factory) as runner:
        assert isinstance(runner.get_loop(), uvloop.Loop)


async def test_an_exactly_once_start_fails_with_the_fix_when_no_transaction_is_granted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly-once is the default: on a broker that grants no transactional producer (here:
    none at all) the start fails, naming the fix, before any stage takes a record."""
    async def no_topics_missing(*args: object, **kwargs: object) -> list[str]:
        return []

    monkeypatch.setattr(app, "ensure_topics", no_topics_missing)
    monkeypatch.setattr(app, "START_CHECK_S", 2.0)
    settings = Settings(http_port=None, kafka_bootstrap="127.0.0.1:1")
    assert settings.processing_guarantee == "exactly_once"
    proc = Processor(settings, deps=fake_deps())
    with pytest.raises(NoTransactions) as refused:
        await proc.start()
    assert not proc.ready()
    # What `pmflow-gateway run` prints: one line, the fix in it, exit 2 (fix the setup).
    assert exit_code_of(refused.value) == 2
    [line] = error_lines("run", refused.value)
    assert "transaction.state.log.replication.factor" in line
    assert "PMFLOW_PROCESSING_GUARANTEE=at_least_once" in line
