"""`pmflow-gateway replay`: what would today's planner and verifier have done with yesterday's
questions?

Reads the RouteDecided events of a time range back from Kafka (by record timestamp, through
`offsets_for_times`), plans each again through the same `plan_question` path the plan stage
runs, and compares the result with the plan and status recorded on answer-ready for the same
question. The evidence recorded then (evidence-collected) is verified again with today's
verifier and compared with what was kept then (evidence-verified): no source is asked again.
Nothing is published and no consumer group is joined: a replay is read-only.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parser is built on every CLI start; the runtime imports wait for use
    from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

    from pmflow_gateway.ports import PlanDefaults, Planner
    from pmflow_gateway.schemas import Topics
    from pmflow_gateway.settings import Settings

# What the plan stage alone can tell about the outcome; evidence is not fetched again.
SKIPPED = "skipped (internal)"
WOULD_SEARCH = "would search"
CLARIFY = "clarify"
BY_POLICY = "(routing policy: nothing searched)"


@dataclass(frozen=True, kw_only=True)
class QuestionReplay:
    question_id: str
    tenant_id: str
    question: str
    status_then: str | None  # None: no AnswerReady recorded for the question
    status_now: str
    planner_now: str | None
    # field -> (recorded value, replayed value), only the fields that differ
    plan_changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # The URLs the verifier kept then, and keeps now from the same recorded evidence (None:
    # nothing recorded to compare), and why today's verifier drops what it drops.
    kept_then: list[str] | None = None
    kept_now: list[str] | None = None
    dropped_now: list[str] = field(default_factory=list)

    @property
    def verify_changed(self) -> bool:
        return (self.kept_then is not None and self.kept_now is not None
                and self.kept_then != self.kept_now)

    @property
    def status_changed(self) -> bool:
        if self.status_then is None:
            return False
        if self.status_now == SKIPPED or self.status_now.endswith(BY_POLICY):
            return self.status_now.split()[0] != self.status_then
        return (self.status_then == CLARIFY) != (self.status_now == CLARIFY)


@dataclass(frozen=True, kw_only=True)
class ReplayReport:
    questions: list[QuestionReplay]
    undecodable: int = 0

    @property
    def changes_by_field(self) -> Counter[str]:
        return Counter(name for q in self.questions for name in q.plan_changes)

    def render(self) -> str:
        lines: list[str] = []
        for q in self.questions:
            lines.append(f"{q.question_id} [{q.tenant_id}] {q.question[:80]}")
            then = q.status_then or "no answer recorded"
            mark = "  CHANGED" if q.status_changed else ""
            lines.append(f"  status: {then} -> {q.status_now}{mark}")
            for name, (before, after) in q.plan_changes.items():
                lines.append(f"  {name}: {_show(before)} -> {_show(after)}")
            if q.kept_now is not None:
                then = "?" if q.kept_then is None else str(len(q.kept_then))
                mark = "  CHANGED" if q.verify_changed else ""
                lines.append(f"  verify: kept {then} -> {len(q.kept_now)}{mark}")
                lines.extend(f"    dropped now: {why}" for why in q.dropped_now[:5])
            if q.status_then is not None and not q.plan_changes:
                lines.append("  plan unchanged")
        lines.append(self.summary())
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        changed = sum(1 for q in self.questions if q.plan_changes)
        unanswered = sum(1 for q in self.questions if q.status_then is None)
        by_field = ", ".join(f"{name} {n}" for name, n in sorted(self.changes_by_field.items()))
        parts = [f"{len(self.questions)} questions", f"{changed} plan changes"
                 + (f" ({by_field})" if by_field else ""),
                 f"{sum(1 for q in self.questions if q.status_changed)} status changes",
                 f"{sum(1 for q in self.questions if q.verify_changed)} verification changes"]
        if unanswered:
            parts.append(f"{unanswered} without a recorded answer")
        if self.undecodable:
            parts.append(f"{self.undecodable} undecodable records skipped")
        return "summary: " + "; ".join(parts)


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else f"'{value}'"


async def read_range(bootstrap: str, topic: str, start: datetime, end: datetime | None, *,
                     timeout_s: float = 30.0) -> list[ConsumerRecord]:
    """Every record of `topic` with a timestamp in [start, end) (end: what is there now)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from pmflow_gateway.streams.consumer_state import partitions_of

    # read_committed, as every reader of exactly-once outputs must: an aborted transaction's
    # writes (and the empty records a settling one writes) are not what a stage said.
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                isolation_level="read_committed")
    await consumer.start()
    await asyncio.sleep(0)  # see doctor._check_lag: stop() must not meet an unstarted task
    try:
        partitions = await partitions_of(bootstrap, topic)
        if not partitions:
            raise LookupError(f"topic {topic} does not exist on {bootstrap}")
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        now_ends = await consumer.end_offsets(tps)
        begins = await _offsets_at(consumer, tps, start, now_ends)
        stops = await _offsets_at(consumer, tps, end, now_ends) if end else now_ends
        pending = {tp for tp in tps if begins[tp] < stops[tp]}
        for tp in pending:
            consumer.seek(tp, begins[tp])
        records: list[ConsumerRecord] = []
        async with asyncio.timeout(timeout_s):
            while pending:
                batch = await consumer.getmany(*pending, timeout_ms=500)
                for tp, recs in batch.items():
                    records.extend(r for r in recs if r.offset < stops[tp])
                # By position, not by the last record: transaction markers take offsets too.
                for tp in list(pending):
                    if await consumer.position(tp) >= stops[tp]:
                        pending.discard(tp)
        return sorted(records, key=lambda r: (r.timestamp, r.partition, r.offset))
    finally:
        await consumer.stop()


async def _offsets_at(consumer: AIOKafkaConsumer, tps: list[TopicPartition], at: datetime,
                      fallback: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
    """First offset with a timestamp >= `at`, per partition; past the end: the end."""
    millis = int(at.timestamp() * 1000)
    found = await consumer.offsets_for_times({tp: millis for tp in tps})
    return {tp: found[tp].offset if found.get(tp) is not None else fallback[tp] for tp in tps}


def _decode_all(records: Sequence[ConsumerRecord], model: type[Any]) -> tuple[list[Any], int]:
    from pydantic import ValidationError

    events, bad = [], 0
    for record in records:
        try:
            events.append(model.model_validate_json(record.value or b""))
        except ValidationError:
            bad += 1
    return events, bad


def compare_plans(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {name: (before.get(name), after.get(name))
            for name in after if before.get(name) != after.get(name)}


async def replay(*, bootstrap: str, topics: Topics, start: datetime, end: datetime | None,
                 planner: Planner, defaults: PlanDefaults, tenant: str | None = None,
                 timeout_s: float = 30.0) -> ReplayReport:
    """Plan the recorded questions again and compare with what was answered then."""
    from pmflow_gateway.adapters.clock import SystemClock
    from pmflow_gateway.handlers.plan import plan_question
    from pmflow_gateway.handlers.verify import verify_collected
    from pmflow_gateway.schemas import AnswerContract, AnswerReady, RouteDecided

    route_records = await read_range(bootstrap, topics.route_decided, start, end,
                                     timeout_s=timeout_s)
    routes, bad_routes = _decode_all(route_records, RouteDecided)
    if tenant is not None:
        routes = [r for r in routes if r.tenant_id == tenant]
    # Answers are written after their question, possibly after `end`: read up to now.
    answer_records = await read_range(bootstrap, topics.answer_ready, start, None,
                                      timeout_s=timeout_s)
    answers, bad_answers = _decode_all(answer_records, AnswerReady)
    wanted = {r.question_id for r in routes}
    # The last answer wins: a redelivery or a give-up carries the final word.
    answer_of = {a.question_id: a for a in answers if a.question_id in wanted}
    collected_of, verified_of = await _verifications(bootstrap, topics, start, wanted, timeout_s)
    clock = SystemClock()
    results = []
    for route in routes:
        planned = await plan_question(route, planner=planner, clock=clock, defaults=defaults)
        answer = answer_of.get(route.question_id)
        if planned is None:
            status_now, plan_now, planner_now = SKIPPED, None, None
        elif isinstance(planned, AnswerReady):  # the routing table keeps it from the sources
            status_now, plan_now, planner_now = f"{planned.status} {BY_POLICY}", None, None
        else:
            plan_now = planned.plan.model_dump(mode="json")
            planner_now = planned.planner.mode
            status_now = (CLARIFY if planned.plan.answer_contract is AnswerContract.clarify
                          else WOULD_SEARCH)
        changes = (compare_plans(answer.plan.model_dump(mode="json"), plan_now)
                   if answer is not None and plan_now is not None else {})
        then = verified_of.get(route.question_id)
        now = (verify_collected(collected_of[route.question_id], clock=clock)
               if route.question_id in collected_of else None)
        results.append(QuestionReplay(
            question_id=route.question_id, tenant_id=route.tenant_id, question=route.question,
            status_then=str(answer.status) if answer else None, status_now=status_now,
            planner_now=planner_now, plan_changes=changes,
            kept_then=[i.target_url for i in then.kept] if then else None,
            kept_now=[i.target_url for i in now.kept] if now else None,
            dropped_now=[f"{d.contract}: {d.reason}" for d in now.dropped] if now else []))
    return ReplayReport(questions=results, undecodable=bad_routes + bad_answers)


async def _verifications(bootstrap: str, topics: Topics, start: datetime, wanted: set[str],
                         timeout_s: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The evidence collected for the wanted questions, and what the verifier kept of it,
    each the last recorded; topics a deployment never had count as empty."""
    from pmflow_gateway.schemas import EvidenceCollected, EvidenceVerified

    found: list[dict[str, Any]] = []
    for topic, model in ((topics.evidence_collected, EvidenceCollected),
                         (topics.evidence_verified, EvidenceVerified)):
        try:
            records = await read_range(bootstrap, topic, start, None, timeout_s=timeout_s)
        except LookupError:
            records = []
        events, _ = _decode_all(records, model)
        found.append({e.question_id: e for e in events if e.question_id in wanted})
    return found[0], found[1]


_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_time(text: str, *, now: datetime | None = None) -> datetime:
    """ISO 8601 (naive means UTC), or a duration ago: `90s`, `15m`, `6h`, `2d`."""
    now = now or datetime.now(UTC)
    relative = _RELATIVE.match(text.strip())
    if relative:
        return now - timedelta(**{_UNITS[relative[2]]: float(relative[1])})
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r} (use ISO 8601 like 2026-12-02T08:00Z, or 6h / 30m ago)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def add_replay_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("replay", help="plan recorded questions again and diff the plans "
                                           "(reads Kafka, publishes nothing)")
    parser.add_argument("--from", dest="start", required=True, type=parse_time, metavar="TIME",
                        help="ISO 8601 time, or a duration ago (6h, 30m, 2d)")
    parser.add_argument("--to", dest="end", type=parse_time, metavar="TIME",
                        help="end of the range (exclusive); default: now")
    parser.add_argument("--tenant", help="only this tenant's questions")
    parser.add_argument("--bootstrap", help="Kafka bootstrap (default: PMFLOW_KAFKA_BOOTSTRAP)")
    parser.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    from aiokafka.errors import KafkaError

    from pmflow_gateway.bootstrap import build_planner
    from pmflow_gateway.ports import PlanDefaults
    from pmflow_gateway.schemas import Topics

    async def run() -> ReplayReport:
        planner, close = build_planner(settings)
        try:
            return await replay(
                bootstrap=args.bootstrap or settings.kafka_bootstrap,
                topics=Topics(prefix=settings.topic_prefix), start=args.start, end=args.end,
                planner=planner, tenant=args.tenant,
                defaults=PlanDefaults(deadline_ms=settings.deadline_ms,
                                      result_limit=settings.result_limit))
        finally:
            await close()

    try:
        report = asyncio.run(run())
    except (LookupError, TimeoutError, OSError, KafkaError) as exc:
        print(f"error: replay failed: {exc or type(exc).__name__}", file=sys.stderr)
        return 2
    sys.stdout.write(report.render())
    return 0
