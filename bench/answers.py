"""`python -m bench.answers [--json FILE] [--only KIND] [--labels FILE --corpus FILE]`: is the
answer about what was asked?

Every question of tests/data/answers_labelled.jsonl (or `--labels`) goes through the real
stage cores (rules planner, our MCP server over stdio serving tests/data/answer_corpus.json
or `--corpus`, the extractive composer, render, memory in a throw-away SQLite file). No
live web search: the corpus is the whole world here, so a question it knows nothing about
must be refused.

Each reply is scored against its label:
- correct: the status is allowed and, if answered, one of the `must` facts is in the reply
  and none of the `must_not` facts (the distractors' facts) is;
- wrong: answered with a `must_not` fact, answered without the `must` fact, or answered
  when the label allows no answer. A wrong answer is worse than a refusal;
- missed: refused, guarded or asked to clarify when the label wanted something else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pmflow_gateway.adapters.clock import StoppedClock, SystemClock
from pmflow_gateway.adapters.mcp import McpAdapter
from pmflow_gateway.adapters.mcp_config import McpServerConfig
from pmflow_gateway.adapters.store import open_store
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.model_composer import make_composer
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.mcp_server.corpus import served_at
from pmflow_gateway.ports import Deps
from pmflow_gateway.schemas import RouteDecided
from pmflow_gateway.schemas.envelope import replaying_at
from pmflow_gateway.settings import Settings

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
LABELS = DATA / "answers_labelled.jsonl"
CORPUS = DATA / "answer_corpus.json"


@dataclass(frozen=True)
class Scored:
    question: str
    kind: str
    verdict: str
    """correct, wrong or missed."""
    status: str
    why: str
    reply: str
    reason: str = ""
    """The gateway's own reason for its status (why it refused, what the draft left out)."""
    dropped: tuple[str, ...] = ()
    """Why the verifier dropped each item it dropped."""


def load_labels(path: Path = LABELS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _norm(text: str) -> str:
    return "".join(text.split()).casefold()


def score(label: dict[str, Any], status: str, reply: str) -> tuple[str, str]:
    """The verdict and its reason for one reply."""
    allowed = label["statuses"]
    text = _norm(reply)
    if status != "answered":
        return ("correct", "") if status in allowed else ("missed", f"{status} not in {allowed}")
    if "answered" not in allowed:
        return "wrong", f"answered, label allows only {allowed}"
    leaked = [fact for fact in label["must_not"] if _norm(fact) in text]
    if leaked:
        return "wrong", f"carries distractor facts {leaked}"
    if label["must"] and not any(_norm(fact) in text for fact in label["must"]):
        return "wrong", f"lacks every one of {label['must']}"
    return "correct", ""


def route_event(label: dict[str, Any], now: datetime | None = None) -> RouteDecided:
    return RouteDecided.model_validate({
        "event_id": str(uuid.uuid4()), "question_id": f"q-answers-{uuid.uuid4().hex[:12]}",
        "tenant_id": "answers-bench",
        "occurred_at": (now or datetime.now(UTC)).isoformat(),
        "schema_version": 1, "question": label["question"], "locale": label["locale"],
        "thread_id": "t-answers" if label.get("previous_question") else None,
        "previous_question": label.get("previous_question"),
        "route_mode": "external", "effective_source_policy": "external_only",
        "decision_origin": "probe", "reply_contract": "external_realtime",
        "query_profile": {"needs_private_context": False, "needs_freshness": True,
                          "referenced_objects": []}})


def corpus_server(corpus: Path) -> McpServerConfig:
    return McpServerConfig(name="answer-corpus", transport="stdio", command=sys.executable,
                           args=["-m", "pmflow_gateway.mcp_server", "--corpus", str(corpus)],
                           fetch_tool="fetch", fetch_results=True)


async def run(labels: list[dict[str, Any]], *, corpus: Path = CORPUS) -> list[Scored]:
    """Every label through one set of deps: one MCP server process, one store."""
    with tempfile.TemporaryDirectory(prefix="pmflow-answers-") as data_dir:
        store = await open_store(Settings(data_dir=Path(data_dir), database_url=None))
        # A corpus written for one day is asked on that day, whenever the bench runs.
        at = served_at(corpus)
        clock = SystemClock() if at is None else StoppedClock(at)
        adapter = McpAdapter(corpus_server(corpus), now=clock.now)
        deps = Deps(clock=clock, planner=RulesPlanner(), adapters=[adapter],
                    store=store, composer=make_composer(None),
                    closers=[store.aclose, adapter.aclose])
        try:
            await adapter.warm_up(60.0)
            scored = []
            for label in labels:
                with replaying_at(clock.now()):  # a corpus may be served later than today
                    outcome = await ask_in_process(route_event(label, clock.now()), deps)
                status = outcome.answer.status.value if outcome.answer else "skipped"
                reply = outcome.reply.text if outcome.reply else ""
                verdict, why = score(label, status, reply)
                answer = outcome.answer
                scored.append(Scored(label["question"], label["kind"], verdict, status, why,
                                     reply, (answer.reason or "") if answer else "",
                                     tuple(answer.verdict.dropped_reasons) if answer else ()))
            return scored
        finally:
            await deps.aclose()


def summary(scored: list[Scored]) -> dict[str, Any]:
    counts = Counter(s.verdict for s in scored)
    by_kind: dict[str, Counter[str]] = {}
    for s in scored:
        by_kind.setdefault(s.kind, Counter())[s.verdict] += 1
    total = len(scored)
    return {"total": total, "correct": counts["correct"], "wrong": counts["wrong"],
            "missed": counts["missed"],
            "correct_share": round(counts["correct"] / total, 3) if total else 0.0,
            "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())}}


def table(scored: list[Scored]) -> str:
    lines = [f"{'verdict':8} {'status':16} {'kind':24} question / why"]
    for s in scored:
        lines.append(f"{s.verdict:8} {s.status:16} {s.kind:24} {s.question}")
        if s.why:
            lines.append(f"{'':8} {'':16} {'':24}   -> {s.why}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.answers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write every scored reply here")
    parser.add_argument("--only", help="only the labels of this kind (e.g. weather_tomorrow)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="label file (JSON lines)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus they are asked of")
    args = parser.parse_args()
    for path in (args.labels, args.corpus):
        if not path.is_file():
            parser.error(f"no such file: {path}")
    labels = [row for row in load_labels(args.labels) if args.only in (None, row["kind"])]
    scored = asyncio.run(run(labels, corpus=args.corpus))
    print(table(scored))
    result = summary(scored)
    print(json.dumps(result, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps({"summary": result, "replies": [asdict(s) for s in scored]},
                                        ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
