"""`pmflow-gateway trace QUESTION_ID`: one question's trace from Jaeger, as an indented tree.

The stage spans carry `pmflow.question_id`, so Jaeger's tag search finds the trace; the tree
follows the parent links (each stage's span is the child of the send that published its
input), which makes the chain route -> plan -> evidence -> answer -> render/memory readable
top to bottom in a terminal, without a browser.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pmflow_gateway import SERVICE_NAME

if TYPE_CHECKING:  # the parser is built on every CLI start; the runtime imports wait for use
    from pmflow_gateway.settings import Settings

QUESTION_TAG = "pmflow.question_id"
# Attributes worth a glance besides pmflow.*: what failed, and where a record came from.
SHOWN_ATTRIBUTES = ("otel.status_code", "otel.status_description", "error",
                    "messaging.destination.partition.id", "messaging.kafka.offset")
HIDDEN_ATTRIBUTES = (QUESTION_TAG, "pmflow.tenant_id", "pmflow.stage")
STAGE_TAG = "pmflow.stage"


@dataclass(kw_only=True)
class SpanNode:
    span_id: str
    name: str
    start_us: int
    duration_us: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    children: list[SpanNode] = field(default_factory=list)


class TraceNotFound(LookupError):
    pass


_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def lookback_seconds(text: str) -> float:
    """`90s`, `15m`, `6h`, `2d` in seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", text.strip())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (use 90s, 15m, 6h or 2d)")
    return float(match[1]) * _SECONDS[match[2]]


async def find_trace(jaeger_url: str, question_id: str, *, service: str = SERVICE_NAME,
                     lookback: str = "2d", timeout_s: float = 5.0) -> dict[str, Any]:
    """The most recent trace of the question, as Jaeger's JSON (`data[0]`)."""
    # start/end in microseconds: the API's own default window is narrower than a replay's.
    end_us = int(time.time() * 1_000_000)
    start_us = end_us - int(lookback_seconds(lookback) * 1_000_000)
    params = {"service": service, "tags": json.dumps({QUESTION_TAG: question_id}),
              "limit": "1", "start": str(start_us), "end": str(end_us)}
    import httpx

    async with httpx.AsyncClient(base_url=jaeger_url, timeout=timeout_s) as client:
        response = await client.get("/api/traces", params=params)
        response.raise_for_status()
        traces = response.json().get("data") or []
        if not traces:
            raise TraceNotFound(f"no trace of service {service!r} with {QUESTION_TAG}="
                                f"{question_id!r} in the last {lookback}")
        # The search may return a trace before all its spans arrived: fetch it whole by id.
        trace_id = traces[0]["traceID"]
        whole = await client.get(f"/api/traces/{trace_id}")
        whole.raise_for_status()
        data = whole.json().get("data") or traces
    return dict(data[0])


def _values(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {p["key"]: p.get("value") for p in pairs}


def build_tree(trace: dict[str, Any]) -> list[SpanNode]:
    """Root spans (those whose parent is not in this trace, e.g. PMFlow's producer) with
    their descendants, each level in start order."""
    nodes: dict[str, SpanNode] = {}
    parents: dict[str, str | None] = {}
    for span in trace.get("spans", []):
        events = []
        for log in span.get("logs", []):
            fields = _values(log.get("fields", []))
            events.append((str(fields.pop("event", "event")), fields))
        nodes[span["spanID"]] = SpanNode(
            span_id=span["spanID"], name=span["operationName"], start_us=span["startTime"],
            duration_us=span["duration"], attributes=_values(span.get("tags", [])),
            events=events)
        parent = next((r["spanID"] for r in span.get("references", [])
                       if r.get("refType") == "CHILD_OF"), None)
        parents[span["spanID"]] = parent
    roots = []
    for span_id, node in nodes.items():
        parent = parents[span_id]
        if parent in nodes:
            nodes[parent].children.append(node)
        else:
            roots.append(node)
    for node in nodes.values():
        node.children.sort(key=lambda n: n.start_us)
    return sorted(roots, key=lambda n: n.start_us)


def _attributes_line(node: SpanNode) -> str:
    shown = {k: v for k, v in node.attributes.items()
             if (k.startswith("pmflow.") and k not in HIDDEN_ATTRIBUTES) or k in SHOWN_ATTRIBUTES}
    # Span names say which topic was read; the stage says who read it (render and memory
    # both read answer-ready), so it comes first.
    stage = [f"stage={node.attributes[STAGE_TAG]}"] if STAGE_TAG in node.attributes else []
    return "  ".join(stage + [f"{k}={v}" for k, v in sorted(shown.items())])


def _event_line(name: str, fields: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in fields.items() if v not in ("", None))
    return f"· {name}" + (f" ({shown})" if shown else "")


def render_tree(trace: dict[str, Any], question_id: str) -> str:
    roots = build_tree(trace)
    spans = trace.get("spans", [])
    if not spans:
        return f"trace {trace.get('traceID', '?')}: no spans\n"
    begin = min(s["startTime"] for s in spans)
    finish = max(s["startTime"] + s["duration"] for s in spans)
    lines = [f"trace {trace['traceID']}  question {question_id}  {len(spans)} spans  "
             f"{(finish - begin) / 1000:.1f} ms"]

    def walk(node: SpanNode, depth: int) -> None:
        pad = "  " * depth
        offset = (node.start_us - begin) / 1000
        head = f"{pad}{node.name}  {node.duration_us / 1000:.1f} ms  (+{offset:.1f})"
        attributes = _attributes_line(node)
        lines.append(head + (f"  {attributes}" if attributes else ""))
        for name, fields in node.events:
            lines.append(f"{pad}    {_event_line(name, fields)}")
        for child in node.children:
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    return "\n".join(lines) + "\n"


def add_trace_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("trace", help="print one question's trace from Jaeger as a tree")
    parser.add_argument("question_id")
    parser.add_argument("--jaeger", metavar="URL",
                        help="Jaeger query URL (default: PMFLOW_JAEGER_URL)")
    parser.add_argument("--service", default=os.environ.get("OTEL_SERVICE_NAME", SERVICE_NAME))
    parser.add_argument("--lookback", default="2d", type=_lookback,
                        help="how far back to search: 90s, 15m, 6h, 2d (default: %(default)s)")
    parser.set_defaults(func=cmd_trace)


def _lookback(text: str) -> str:
    try:
        lookback_seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def cmd_trace(args: argparse.Namespace, settings: Settings) -> int:
    import httpx

    args.jaeger = args.jaeger or settings.jaeger_url
    try:
        trace = asyncio.run(find_trace(args.jaeger, args.question_id, service=args.service,
                                       lookback=args.lookback))
    except TraceNotFound as exc:
        print(f"error: {exc}; is tracing on (OTEL_EXPORTER_OTLP_ENDPOINT) for the workers?",
              file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"error: Jaeger at {args.jaeger} did not answer ({exc or type(exc).__name__}); "
              "set --jaeger or PMFLOW_JAEGER_URL", file=sys.stderr)
        return 2
    sys.stdout.write(render_tree(trace, args.question_id))
    return 0
