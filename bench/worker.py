"""The process being measured: a `Processor` with fakes for the outside world.

    python -m bench.worker --bootstrap B --prefix P --stages plan,evidence [--otel] [--profile F]

Prints one JSON line when every stage has its partitions ("ready"), then one per command read
on stdin: `sample` (CPU seconds and RSS of this process so far), `stop` (drains, then a last
sample). The harness that feeds and reads Kafka runs in another process, so nothing it does
is counted here.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import resource
import sys
import time
from collections.abc import Coroutine
from typing import Any

from bench.report import rss_kb, summary


class CountingExporter:
    """An SDK span exporter that drops the spans (the export itself is not what we measure)."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def install_tracing() -> CountingExporter:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = CountingExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "pmflow-bench"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))  # type: ignore[arg-type]
    trace.set_tracer_provider(provider)
    return exporter


class GcClock:
    """Seconds spent in the cyclic garbage collector, per generation (gc.callbacks)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._started
            self.runs[info["generation"]] += 1


GC = GcClock()


def sample_rusage() -> dict[str, Any]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "utime_s": usage.ru_utime,
            "stime_s": usage.ru_stime, "rss_kb": rss_kb(), "max_rss_kb": usage.ru_maxrss,
            "monotonic": time.monotonic(), "gc_s": [round(s, 4) for s in GC.seconds],
            "gc_runs": list(GC.runs)}


def sample(processor: Any, exporter: CountingExporter | None,
           cores: CoreClock | None = None) -> dict[str, Any]:
    return {**sample_rusage(),
            "core_s": {k: round(v, 4) for k, v in cores.seconds.items()} if cores else {},
            "counts": {r.stage.name: dict(r.counts) for r in processor.runners},
            "in_flight": {r.stage.name: r.executor.in_flight for r in processor.runners},
            "spans_exported": exporter.spans if exporter else None,
            "transactions": transactions()}


def transactions() -> int:
    """Exactly-once transactions committed so far, all stages (0 in at-least-once mode)."""
    from pmflow_gateway.streams.health import TRANSACTIONS

    return int(sum(s.value for m in TRANSACTIONS.collect() for s in m.samples
                   if s.name.endswith("_total") and s.labels.get("outcome") == "committed"))


class HopProbe:
    """Where a record's time goes inside this process, per stage, in ms: `fetched` from the
    upstream producer's `send` (record timestamp) to the consume loop handing the batch over,
    `queued` from there to the executor starting it, and `acked` for each of our sends from
    `send` to the broker's acknowledgement. Bench only: it wraps the runners from outside."""

    def __init__(self, processor: Any) -> None:
        self.samples: dict[str, list[float]] = {}
        for runner in processor.runners:
            self._wrap(runner)
        producer = processor.publisher._producer
        send_and_wait = producer.send_and_wait

        async def timed_send(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await send_and_wait(*args, **kwargs)
            finally:
                self._add("publish.acked", (time.perf_counter() - started) * 1000)

        producer.send_and_wait = timed_send

    def _add(self, name: str, ms: float) -> None:
        self.samples.setdefault(name, []).append(ms)

    def _wrap(self, runner: Any) -> None:
        name, on_batch, process = runner.stage.name, runner.on_batch, runner.executor._process
        handed: dict[tuple[str, int, int], float] = {}

        async def probed_batch(records: Any) -> None:
            now = time.time()
            for r in records:
                self._add(f"{name}.fetched", now * 1000 - r.timestamp)
                handed[(r.topic, r.partition, r.offset)] = now
            await on_batch(records)

        async def probed_process(record: Any) -> None:
            at = handed.pop((record.topic, record.partition, record.offset), None)
            if at is not None:
                self._add(f"{name}.queued", (time.time() - at) * 1000)
            await process(record)

        runner.on_batch = probed_batch
        runner.executor._process = probed_process

    def report(self) -> dict[str, Any]:
        return {k: summary(v, 1) for k, v in sorted(self.samples.items()) if v}


class CoreClock:
    """Seconds spent inside each stage's core (`Stage.handle`: the plan, evidence, answer,
    render and memory logic), so a run's CPU splits into stage logic and the runtime around
    it (decode, executor, publish, commit, spans). With instant fakes a core does not wait,
    so its wall time is its CPU time. Bench only: it wraps the runners from outside."""

    def __init__(self, processor: Any) -> None:
        self.seconds: dict[str, float] = {}
        for runner in processor.runners:
            runner.stage = dataclasses.replace(runner.stage,
                                               handle=self._timed(runner.stage.name,
                                                                  runner.stage.handle))

    def _timed(self, name: str, handle: Any) -> Any:
        self.seconds[name] = 0.0

        async def timed(deps: Any, event: Any) -> Any:
            started = time.perf_counter()
            try:
                return await handle(deps, event)
            finally:
                self.seconds[name] += time.perf_counter() - started

        return timed


def emit(kind: str, data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"kind": kind, **data}) + "\n")
    sys.stdout.flush()


async def main(args: argparse.Namespace) -> None:
    exporter = install_tracing() if args.otel else None
    from bench.fixtures import gateway
    from pmflow_gateway.settings import Settings
    from pmflow_gateway.streams.app import Processor

    settings = Settings(kafka_bootstrap=args.bootstrap, topic_prefix=args.prefix)
    processor = Processor(settings, stages=args.stages.split(","),
                          deps=gateway(adapter_delay_s=args.adapter_delay_ms / 1000,
                                          real_mcp=args.real_mcp),
                          grace_s=10)
    await processor.start()
    deadline = time.monotonic() + 60
    while not all(r.consumer is not None and r.consumer.assignment() for r in processor.runners):
        if time.monotonic() > deadline:
            raise SystemExit("stages got no partitions within 60 s")
        await asyncio.sleep(0.05)
    probe = HopProbe(processor) if args.probe_hops else None
    cores = CoreClock(processor)
    profiler = start_profiler(args.profile) if args.profile else None
    emit("ready", sample(processor, exporter, cores))
    loop = asyncio.get_running_loop()
    while True:
        command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if command == "sample":
            emit("sample", sample(processor, exporter, cores))
        elif command == "probe":
            emit("probe", {"stages": probe.report() if probe else {}})
        elif command in ("stop", ""):
            break
    if profiler is not None:
        stop_profiler(profiler, args.profile)
    final = sample(processor, exporter, cores)
    await processor.stop()
    if exporter is not None:
        from opentelemetry import trace

        trace.get_tracer_provider().shutdown()  # type: ignore[attr-defined]
    emit("stopped", final)


def run_on_configured_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run `main` on the event loop `pmflow-gateway run` would use (PMFLOW_EVENT_LOOP)."""
    from pmflow_gateway.settings import Settings
    from pmflow_gateway.streams.app import loop_factory

    with asyncio.Runner(loop_factory=loop_factory(Settings().event_loop)) as runner:
        runner.run(main)


def start_profiler(path: str) -> Any:
    if path.endswith(".pstats"):
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
        return profile
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    return profiler


def stop_profiler(profiler: Any, path: str) -> None:
    if path.endswith(".pstats"):
        profiler.disable()
        profiler.dump_stats(path)
        return
    profiler.stop()
    with open(path, "w") as out:
        out.write(profiler.output_text(unicode=True, color=False, show_all=False))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.worker")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--stages", default="plan,evidence,verify,answer,render,memory")
    parser.add_argument("--adapter-delay-ms", type=float, default=0.0)
    parser.add_argument("--real-mcp", action="store_true",
                        help="our MCP server over stdio (with --adapter-delay-ms) as the adapter")
    parser.add_argument("--otel", action="store_true")
    parser.add_argument("--probe-hops", action="store_true",
                        help="time each record's fetch, hand-off and our sends (HopProbe)")
    parser.add_argument("--profile", help="*.pstats: cProfile; anything else: pyinstrument text")
    run_on_configured_loop(main(parser.parse_args()))
