"""`pmflow-gateway`: run the workers, ask a question, print a plan, manage topics and memory."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pmflow_gateway.ops.errors import error_lines, exit_code_of, validation_line

if TYPE_CHECKING:  # `--help` must not pay for pydantic models, Kafka or HTTP clients
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]
    from pmflow_gateway.schemas import RouteDecided
    from pmflow_gateway.settings import Settings

# The stage table lives with the Kafka runtime, too heavy to import for `--help`; a test keeps
# this list equal to it.
STAGE_NAMES = ("plan", "evidence", "verify", "answer", "render", "memory", "feedback",
               "outcome", "probe")
def route_for(question: str, *, tenant: str, locale: str, question_id: str | None = None,
              route_mode: str = "external", previous: str | None = None) -> RouteDecided:
    """A RouteDecided as PMFlow would publish it for a question asked on the command line;
    `previous`: the thread's previous question, for a follow-up."""
    from pmflow_gateway.schemas import RouteDecided

    return RouteDecided.model_validate({
        "event_id": str(uuid.uuid4()),
        "question_id": question_id or f"cli-{uuid.uuid4().hex[:12]}",
        "tenant_id": tenant,
        "occurred_at": datetime.now(UTC).isoformat(),
        "question": question,
        "locale": locale,
        "route_mode": route_mode,
        "effective_source_policy": "external_only",
        "decision_origin": "cli",
        "reply_contract": "external_realtime",
        "previous_question": previous,
    })


DEMO_HELP = ("answer from the packaged demo corpus only (invented pages, every reply says so; "
             "same as PMFLOW_DEMO=1), e.g. on a machine without network")


def _print_json(obj: object) -> None:
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode() + "\n")


# -- commands ---------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from pmflow_gateway.bootstrap import build_deps
    from pmflow_gateway.streams.app import Processor, loop_factory
    from pmflow_gateway.streams.health import configure_logging
    from pmflow_gateway.tracing import configure_tracing, shutdown_tracing

    configure_logging(logging.getLevelNamesMapping()[settings.log_level])

    async def run() -> None:
        # aiokafka clients must be created inside the running loop
        processor = Processor(settings, stages=args.stage or (), grace_s=args.grace,
                              deps=lambda: build_deps(settings))
        loop = type(asyncio.get_running_loop()).__module__.partition(".")[0]
        logging.getLogger("pmflow_gateway").info(
            "stages %s on %s (event loop: %s)", ", ".join(processor.stage_names),
            settings.kafka_bootstrap, loop)
        await processor.run(stop_requested=_STOP_ASKED.is_set)

    if _STOP_ASKED.is_set():
        return 0  # asked to stop before anything started
    configure_tracing()
    try:
        with asyncio.Runner(loop_factory=loop_factory(settings.event_loop)) as runner:
            runner.run(run())
    finally:
        shutdown_tracing()
    return 0


async def _ask_embedded(route: RouteDecided, settings: Settings, as_json: bool) -> int:
    from pmflow_gateway.bootstrap import build_deps
    from pmflow_gateway.embedded import ask_in_process

    def progress(stage: str, event: object) -> None:
        if not as_json:
            print(f"· {stage_line(stage, event)}", file=sys.stderr)

    gateway = await build_deps(settings)
    try:
        outcome = await ask_in_process(route, gateway, progress=progress)
    finally:
        await gateway.aclose()
    if outcome.reply is None or outcome.answer is None:
        print("skipped: route_mode=internal is answered by PMFlow itself", file=sys.stderr)
        return 1
    if as_json:
        _print_json({"answer_ready": outcome.answer.model_dump(mode="json"),
                     "reply_rendered": outcome.reply.model_dump(mode="json"),
                     "memory": {"written": outcome.memory_error is None,
                                "error": outcome.memory_error}})
    else:
        print(outcome.reply.text)
    if outcome.memory_error is not None:
        print(f"warning: the answer was not remembered: {outcome.memory_error} "
              "(pmflow-gateway doctor checks the database)", file=sys.stderr)
    return 0


def stage_line(stage: str, event: object) -> str:
    """One human line per stage, for the live progress of `ask`."""
    from pmflow_gateway.schemas import (
        AnswerReady,
        EvidenceCollected,
        EvidenceVerified,
        PlanCreated,
        ReplyRendered,
    )

    if isinstance(event, PlanCreated):
        return (f"plan: {event.plan.query_kind} / {event.plan.answer_contract} "
                f"by {event.planner.mode} planner, queries {event.plan.search_queries}")
    if isinstance(event, EvidenceCollected):
        tries = ", ".join(f"{a.adapter}{'/' + a.server if a.server else ''} {a.outcome} "
                          f"{a.latency_ms:.0f}ms" for a in event.attempts) or "none"
        return f"evidence: {len(event.bundle.items)} item(s); attempts: {tries}"
    if isinstance(event, EvidenceVerified):
        why = "; ".join(f"{d.contract}: {d.reason}" for d in event.dropped[:3])
        return (f"verify: kept {len(event.kept)}, dropped {len(event.dropped)}"
                + (f" ({why})" if why else "")
                + (f"; ends {event.conclusion.status}" if event.conclusion else ""))
    if isinstance(event, AnswerReady):
        return (f"answer: {event.status} (kept {event.verdict.kept}, dropped "
                f"{event.verdict.dropped}, composer {event.composer})")
    if isinstance(event, ReplyRendered):
        return f"reply: {len(event.sources)} source(s)"
    return stage


async def _ask_kafka(route: RouteDecided, bootstrap: str, settings: Settings, as_json: bool,
                     timeout_s: float) -> int:
    from pmflow_gateway.agent_tools.askers import AnswerTimeout, KafkaAsker
    from pmflow_gateway.schemas import ReplyRendered, Topics

    topics = Topics(prefix=settings.topic_prefix)
    asker = KafkaAsker(bootstrap, topics, replies={topics.reply_rendered: ReplyRendered})
    try:  # started inside, so a broker that is down still gets its clients closed
        await asker.start()
        print(f"publishing {route.question_id} to {topics.route_decided}; waiting for the "
              "reply", file=sys.stderr)
        reply = await asker.rendered(route, timeout_s=timeout_s)
    except AnswerTimeout:
        print(f"error: no reply for {route.question_id} within {timeout_s:.0f}s; are the "
              f"workers running (pmflow-gateway run)?", file=sys.stderr)
        return 1
    finally:
        await asker.aclose()
    if as_json:
        _print_json(reply.model_dump(mode="json"))
    else:
        print(reply.text)
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    route = route_for(args.question, tenant=args.tenant, locale=args.locale,
                      previous=args.previous)
    if not args.kafka and not settings.demo and settings.mcp_config is None:
        offline = asyncio.run(_unreachable(settings.live_search_endpoint
                                           or "https://html.duckduckgo.com/html/"))
        if offline:
            print(f"error: the live web search cannot be reached ({offline}) and no MCP server "
                  "is configured (PMFLOW_MCP_CONFIG); try `--demo` for the packaged demo "
                  "corpus", file=sys.stderr)
            return 2
    from pmflow_gateway.tracing import configure_tracing, shutdown_tracing

    configure_tracing()  # before the store exists, so its statements are traced too
    try:
        if args.kafka:
            return asyncio.run(_ask_kafka(route, args.kafka, settings, args.json, args.timeout))
        return asyncio.run(_ask_embedded(route, settings, args.json))
    finally:
        shutdown_tracing()


async def _unreachable(endpoint: str, timeout_s: float = 3.0) -> str | None:
    """Why the search endpoint's host cannot be resolved, or None when it can: offline, the
    real path fails in seconds instead of after the whole question budget."""
    from urllib.parse import urlsplit

    host = urlsplit(endpoint).hostname or ""
    try:
        await asyncio.wait_for(asyncio.get_running_loop().getaddrinfo(host, 443), timeout_s)
    except (OSError, TimeoutError) as exc:
        return f"{host}: {exc or type(exc).__name__}"
    return None


def _batch_lines(path: Path) -> list[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [(number, line.strip()) for number, line in enumerate(lines, 1) if line.strip()]


def cmd_plan(args: argparse.Namespace, settings: Settings) -> int:
    from pydantic import ValidationError

    from pmflow_gateway.bootstrap import build_planner
    from pmflow_gateway.handlers.plan import finish_plan
    from pmflow_gateway.ports import PlanDefaults

    if (args.question is None) == (args.batch is None):
        print("error: give a QUESTION or --batch FILE (not both)", file=sys.stderr)
        return 2
    if args.batch is not None and not Path(args.batch).is_file():
        print(f"error: no such file: {args.batch}", file=sys.stderr)
        return 2
    questions = _batch_lines(Path(args.batch)) if args.batch else [(0, args.question)]
    defaults = PlanDefaults(deadline_ms=settings.deadline_ms, result_limit=settings.result_limit)

    async def plan_all() -> int:
        rejected = 0
        planner, close = build_planner(settings)
        try:
            for number, question in questions:
                try:
                    route = route_for(question, tenant=args.tenant, locale=args.locale)
                except ValidationError as exc:
                    if not args.batch:
                        raise
                    # One bad line must not cost the rest of the batch its plans.
                    rejected += 1
                    print(f"error: {args.batch}:{number}: {validation_line(exc)}",
                          file=sys.stderr)
                    continue
                plan, info = await planner.plan(route)
                line = finish_plan(plan, route, defaults).model_dump(mode="json")
                if args.batch:
                    sys.stdout.write(orjson.dumps(line).decode() + "\n")
                else:
                    _print_json({**line, "planner": info.model_dump(mode="json")})
        finally:
            await close()
        return rejected

    rejected = asyncio.run(plan_all())
    if rejected:
        print(f"plan: {rejected} of {len(questions)} line(s) rejected", file=sys.stderr)
    return 2 if rejected else 0


def cmd_topics(args: argparse.Namespace, settings: Settings) -> int:
    from pmflow_gateway.schemas import Topics
    from pmflow_gateway.streams.app import ensure_topics, settings_topic_configs

    topics = Topics(prefix=settings.topic_prefix)
    if args.replication_factor:
        settings = settings.model_copy(update={"topic_replication_factor":
                                               args.replication_factor})
    created = asyncio.run(ensure_topics(
        settings.kafka_bootstrap, topics,
        partitions=args.partitions or settings.topic_partitions,
        replication_factor=settings.topic_replication_factor,
        configs=settings_topic_configs(settings, topics)))
    for name in topics.all():
        print(f"{'created' if name in created else 'exists '} {name}")
    return 0


def cmd_memory(args: argparse.Namespace, settings: Settings) -> int:
    from pmflow_gateway.adapters.store import open_store

    async def similar() -> list[dict[str, object]]:
        store = await open_store(settings)
        try:
            found = await store.similar(args.tenant, args.question, limit=args.limit)
        finally:
            await store.aclose()
        return [vars(s) for s in found]

    rows = asyncio.run(similar())
    if args.json:
        _print_json(rows)
    elif not rows:
        print(f"no similar questions for tenant {args.tenant}")
    for row in [] if args.json else rows:
        print(f"{row['similarity']:.2f}  {row['question']}  [{row['query_kind']}] "
              f"hits={row['hit_count']} outcomes={row['outcomes']} "
              f"feedback={row['feedback_outcome']} domains={row['good_domains']}")
    return 0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default where there is one worth reading (not None, not an off flag)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Every subcommand's help shows the defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pmflow-query-gateway")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


def add_run_parser(sub: Subcommands) -> None:
    run = sub.add_parser("run", help="run the stage workers (all stages by default)")
    run.add_argument("--stage", action="append", choices=STAGE_NAMES,
                     help="a stage to run; repeat for several; all when not given")
    run.add_argument("--grace", type=float, default=10.0, help="seconds to drain on SIGTERM")
    run.add_argument("--demo", action="store_true", help=DEMO_HELP)
    run.set_defaults(func=cmd_run)


def add_ask_parser(sub: Subcommands) -> None:
    ask = sub.add_parser("ask", help="answer one question and print the reply")
    ask.add_argument("question")
    ask.add_argument("--tenant", default="local")
    ask.add_argument("--locale", default="zh-CN")
    ask.add_argument("--previous", metavar="QUESTION",
                     help="the thread's previous question, for a follow-up such as 那明天呢")
    ask.add_argument("--json", action="store_true", help="print the AnswerReady and ReplyRendered")
    ask.add_argument("--demo", action="store_true", help=DEMO_HELP)
    ask.add_argument("--kafka", metavar="BOOTSTRAP",
                     help="publish to running workers instead of answering in process")
    ask.add_argument("--timeout", type=float, default=60.0, help="seconds to wait (--kafka)")
    ask.set_defaults(func=cmd_ask)


def add_plan_parser(sub: Subcommands) -> None:
    plan = sub.add_parser("plan", help="print the ExternalQueryPlan of a question")
    plan.add_argument("question", nargs="?")
    plan.add_argument("--batch", metavar="FILE", help="one question per line -> one JSON per line")
    plan.add_argument("--tenant", default="local")
    plan.add_argument("--locale", default="zh-CN")
    plan.set_defaults(func=cmd_plan)


def add_memory_parser(sub: Subcommands) -> None:
    memory = sub.add_parser("memory", help="read the tenant's route memories")
    memory.add_argument("action", choices=["similar"])
    memory.add_argument("question")
    memory.add_argument("--tenant", required=True)
    memory.add_argument("--limit", type=int, default=5)
    memory.add_argument("--json", action="store_true", help="JSON instead of one line a row")
    memory.set_defaults(func=cmd_memory)


def add_topics_parser(sub: Subcommands) -> None:
    topics = sub.add_parser("topics", help="create the topics with their partition counts")
    topics.add_argument("action", choices=["create"])
    topics.add_argument("--partitions", type=_positive,
                        help="partitions of each new topic (default: PMFLOW_TOPIC_PARTITIONS)")
    topics.add_argument("--replication-factor", type=_positive,
                        help="replicas of each new topic "
                             "(default: PMFLOW_TOPIC_REPLICATION_FACTOR)")
    topics.set_defaults(func=cmd_topics)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pmflow-gateway", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub: Subcommands = parser.add_subparsers(dest="command", required=True,
                                             parser_class=_Parser)

    from pmflow_gateway.agent_tools.serve import add_mcp_parser
    from pmflow_gateway.ops import asyncapi, doctor, replay, trace_view

    # Every command registers itself the same way: a function that adds its parser.
    for add_parser in (add_run_parser, add_ask_parser, add_plan_parser, add_memory_parser,
                       add_topics_parser, asyncapi.add_asyncapi_parser,
                       doctor.add_doctor_parser, replay.add_replay_parser,
                       trace_view.add_trace_parser, add_mcp_parser):
        add_parser(sub)
    return parser


# A SIGTERM that comes while a worker starts (its imports, its clients, before the app's own
# handler is in place) is a request to stop, not a kill: it is noted and honoured as soon as
# the workers have started, or before they start.
_STOP_ASKED = threading.Event()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        signal.signal(signal.SIGTERM, lambda *_: _STOP_ASKED.set())
    from pmflow_gateway.settings import Settings

    if args.command == "run":  # a worker's log is JSON from its first line, failures included
        from pmflow_gateway.streams.health import configure_logging

        configure_logging()
    if args.command != "run":
        # aiokafka logs each refused connection at ERROR; the one error line says it better.
        # A worker keeps them: its log is where an operator looks.
        logging.getLogger("aiokafka").setLevel(logging.CRITICAL)

    try:
        settings = Settings()
        if getattr(args, "demo", False):
            settings = settings.model_copy(update={"demo": True})
        return int(args.func(args, settings))
    except Exception as exc:
        code = exit_code_of(exc)
        if code is None:
            raise  # not an expected failure: the traceback is what a bug report needs
        lines = error_lines(args.command, exc)
        if args.command == "run":
            logging.getLogger("pmflow_gateway").error("; ".join(lines))
        else:
            print("\n".join(lines), file=sys.stderr)
        return code


if __name__ == "__main__":
    raise SystemExit(main())
