"""The AsyncAPI 3.0 document of every topic the gateway reads and writes, built from the code.

Channels come from `schemas/topics.py`, operations from the stage table in
`streams/stages.py`, payloads from the pydantic models. `pmflow-gateway asyncapi --out
docs/asyncapi.json` rewrites the committed copy; a test fails when the two drift, so the
document can never describe a topology the code no longer has.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # the parser is built on every CLI start; the runtime imports wait for use
    from pmflow_gateway.schemas import Topics
    from pmflow_gateway.settings import Settings

COMMITTED_PATH = Path(__file__).resolve().parents[2] / "docs" / "asyncapi.json"
DEFAULT_PREFIX = "pmflow."
KAFKA_BINDING = "0.5.0"

# channel id -> (Topics attribute, event carried, who writes it, what it means)
CHANNELS: dict[str, tuple[str, str, str, str]] = {
    "routeDecided": (
        "route_decided", "RouteDecided", "PMFlow backend (input)",
        "PMFlow's route decision for one question. The routing table (route_mode, "
        "effective_source_policy, query_profile.needs_private_context, reply_contract; see "
        "the README) decides: `internal` routes are skipped; internal-only, private-context, "
        "internal-reply and unknown values are answered `refused` or `clarify` by the plan "
        "stage without any outbound request; the rest are planned and answered."),
    "planCreated": (
        "plan_created", "PlanCreated", "plan stage",
        "The validated ExternalQueryPlan of a question, with the question context."),
    "evidenceCollected": (
        "evidence_collected", "EvidenceCollected", "evidence stage",
        "External evidence of one execution (MCP first, live search as fallback) and every "
        "adapter attempt. The question's budget runs from when this stage takes it up; one "
        "taken up past its bound (`context.expires_at`) asks no adapter: every attempt says "
        "`expired`."),
    "evidenceVerified": (
        "evidence_verified", "EvidenceVerified", "verify stage",
        "What the answer may rest on: the kept evidence, every collected item that was "
        "dropped with its reason and the contract that dropped it (source, freshness, "
        "question), the verifier's verdict, and the plan as the verifier read it. When nothing "
        "may be composed (the plan asks back, an ambiguous reading, nothing kept) its "
        "`conclusion` is the status the question ends in."),
    "answerReady": (
        "answer_ready", "AnswerReady",
        "answer stage (and any stage that ends the question early)",
        "The final answer event: status, answer, citations, sources of this execution only, "
        "the plan, the verifier's verdict, adapter attempts, timings and routing snapshot. "
        "`timed_out`: no source was asked, the question's time ran out first (a backlog past "
        "its bound, or a budget used up by planning); never reported as missing data. "
        "`refused`: the routing table kept the question from external sources (its decision "
        "is in `context.routing.policy`); nothing was searched."),
    "replyRendered": (
        "reply_rendered", "ReplyRendered", "render stage",
        "The reply the user sees: `外部实时查询：` + answer + `来源摘要：` of external sources."),
    "feedback": (
        "feedback", "FeedbackGiven", "PMFlow feedback center (input)",
        "A user's verdict on an answer; the memory writer records it."),
    "routeOutcome": (
        "route_outcome", "RouteOutcomeReported", "PMFlow route gateway (input)",
        "How a question PMFlow answered itself (an internal route) or sent elsewhere ended. "
        "Recorded in the tenant's QA records and route memories under the same memory rules "
        "as the gateway's own answers (idempotent by event id, a late report changes "
        "nothing), so `route_prior` and the similar-question priors weigh both sides; without "
        "such reports the prior's basis says it knows external outcomes only."),
    "probeRequested": (
        "probe_requested", "ProbeRequested", "PMFlow route gateway (input)",
        "Before it decides a route, PMFlow asks what a short external look-up finds for a "
        "question (`question_id` names the probe; `deadline_ms`, default 3000, at most "
        "10000). The routing table is read first: `needs_private_context` or an "
        "internal-only policy probes nothing."),
    "probeCompleted": (
        "probe_completed", "ProbeCompleted", "probe stage",
        "The probe's reply, keyed by the request's `question_id`: `freshness_required`, "
        "`trusted_domain_hit_count`, `answerable_page_hit_count`, `cross_source_agreement`, "
        "`external_entity_hit` (no answer is composed), or `refused` with the reason. The "
        "evidence found stays in the evidence cache (PMFLOW_EVIDENCE_CACHE_S) for the answer "
        "to the same question."),
    "deadLetter": (
        "dead_letter", "DeadLettered", "any stage",
        "A record a stage could not take (poison or out of retries), with the reason and its "
        "original topic/partition/offset, headers and value."),
}


def _package_version() -> str:
    try:
        return version("pmflow-query-gateway")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def _hoist_definitions(schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One flat `components.schemas`: each model's `$defs` move up and `$ref`s follow them.

    Pydantic nests shared models (`ExternalQueryPlan`, `QuestionContext`, ...) under every
    event that uses them; AsyncAPI wants them once, referenced by `#/components/schemas/X`.
    """
    flat: dict[str, Any] = {}

    def relink(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: (value.replace("#/$defs/", "#/components/schemas/")
                          if key == "$ref" and isinstance(value, str) else relink(value))
                    for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [relink(item) for item in node]
        return node

    def put(name: str, schema: dict[str, Any]) -> None:
        schema = relink(schema)
        if name in flat and flat[name] != schema:
            raise ValueError(f"two different models are both called {name!r}")
        flat[name] = schema

    for event, schema in schemas.items():
        for name, definition in schema.get("$defs", {}).items():
            put(name, definition)
        put(event, schema)
    return dict(sorted(flat.items()))


def _message(event: str, description: str) -> dict[str, Any]:
    return {
        "name": event,
        "title": event,
        "summary": description.split(". ")[0].rstrip(".") + ".",
        "contentType": "application/json",
        "headers": {"$ref": "#/components/schemas/KafkaHeaders"},
        "payload": {"$ref": f"#/components/schemas/{event}"},
        "bindings": {"kafka": {
            "key": {"type": "string", "description": "question_id: one question stays ordered "
                                                     "in one partition."},
            "bindingVersion": KAFKA_BINDING}},
    }


def _headers_schema(events: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "Kafka record headers on every message.",
        "required": ["event_type"],
        "properties": {
            "event_type": {"type": "string", "enum": events,
                           "description": "The event's class name."},
            "traceparent": {"type": "string",
                            "pattern": "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$",
                            "description": "W3C trace context of the span that published it; "
                                           "one trace per question."},
            "tracestate": {"type": "string", "description": "W3C trace state, when present."},
        },
    }


def _operations(topics: Topics, channel_of_topic: dict[str, str]) -> dict[str, Any]:
    # Imported here: the stage table pulls in every handler, which `asyncapi` alone never needs.
    from pmflow_gateway.streams.stages import STAGES

    def op(action: str, channel: str, title: str, description: str, group: str | None = None,
           ) -> dict[str, Any]:
        event = CHANNELS[channel][1]
        operation: dict[str, Any] = {
            "action": action, "title": title, "description": description,
            "channel": {"$ref": f"#/channels/{channel}"},
            "messages": [{"$ref": f"#/channels/{channel}/messages/{event}"}],
        }
        if group:
            operation["bindings"] = {"kafka": {
                "groupId": {"type": "string", "enum": [group]}, "bindingVersion": KAFKA_BINDING}}
        return operation

    operations: dict[str, Any] = {}
    for name, stage in STAGES.items():
        source = channel_of_topic[stage.source(topics)]
        group = f"{topics.prefix}gateway-{name}"
        operations[f"{name}-receive"] = op(
            "receive", source, f"{name}: consume", f"{stage.description} Consumer group "
            f"`{group}`; offsets are committed only once the record is finished.", group)
        if stage.sink is not None:
            sink = channel_of_topic[stage.sink(topics)]
            operations[f"{name}-send"] = op("send", sink, f"{name}: publish", stage.description)
        if stage.give_up is not None and stage.sink is not None \
                and stage.sink(topics) != topics.answer_ready:
            operations[f"{name}-send-failed-answer"] = op(
                "send", "answerReady", f"{name}: publish an answer early",
                "When the stage gives up on a question, the user still gets a `failed` answer; "
                "a question the routing table keeps from external sources is answered "
                "`refused` or `clarify` here, with nothing searched.")
        operations[f"{name}-send-dead-letter"] = op(
            "send", "deadLetter", f"{name}: dead-letter",
            "Poison input, a refusal, or the last retry failed: the record and the reason.")
    return operations


def build_document(prefix: str = DEFAULT_PREFIX) -> dict[str, Any]:
    """The AsyncAPI 3.0.0 document for topics named with `prefix`."""
    from pmflow_gateway.schemas import Topics
    from pmflow_gateway.schemas.export import event_schemas

    topics = Topics(prefix=prefix)
    channels: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for channel_id, (attribute, event, writer, description) in CHANNELS.items():
        address = getattr(topics, attribute)
        messages[event] = _message(event, description)
        channels[channel_id] = {
            "address": address,
            "title": address,
            "description": f"{description} Written by: {writer}.",
            "messages": {event: {"$ref": f"#/components/messages/{event}"}},
            "bindings": {"kafka": {"topic": address, "partitions": 3,
                                   "bindingVersion": KAFKA_BINDING}},
        }
    uncovered = set(topics.all()) - {c["address"] for c in channels.values()}
    if uncovered:
        raise ValueError(f"topics without an AsyncAPI channel: {sorted(uncovered)}")
    channel_of_topic = {c["address"]: cid for cid, c in channels.items()}
    schemas = _hoist_definitions(event_schemas())
    schemas["KafkaHeaders"] = _headers_schema(sorted(messages))
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "PMFlow external query gateway",
            "version": _package_version(),
            "description": (
                "PMFlow's external-query chain as Kafka stages: plan -> evidence -> "
                "verify -> answer -> render / memory. Every message: key = question_id, value = "
                "JSON, headers `event_type` and `traceparent`. An `event_id` names one content: "
                "it is a digest of the event without its timestamps and durations, so a copy "
                "of an event repeats its id and a different event never shares it. Topic "
                f"prefix `{prefix}` (PMFLOW_TOPIC_PREFIX); consumer groups "
                "`<prefix>gateway-<stage>`."),
        },
        "defaultContentType": "application/json",
        "servers": {"local": {
            "host": "127.0.0.1:9092", "protocol": "kafka",
            "description": "The broker of `scripts/local-stack`; set PMFLOW_KAFKA_BOOTSTRAP."}},
        "channels": channels,
        "operations": _operations(topics, channel_of_topic),
        "components": {"messages": messages, "schemas": schemas},
    }


def render(prefix: str = DEFAULT_PREFIX) -> bytes:
    return orjson.dumps(build_document(prefix), option=orjson.OPT_INDENT_2) + b"\n"


def add_asyncapi_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("asyncapi", help="print (or write) the AsyncAPI 3.0 document")
    parser.add_argument("--out", metavar="FILE", type=Path,
                        help="write it here (the committed copy is docs/asyncapi.json)")
    parser.add_argument("--prefix", default=DEFAULT_PREFIX,
                        help="topic prefix to document (default: %(default)s)")
    parser.set_defaults(func=cmd_asyncapi)


def cmd_asyncapi(args: argparse.Namespace, settings: Settings) -> int:
    content = render(args.prefix)
    if args.out is None:
        sys.stdout.write(content.decode())
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(content)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.stdout.write(render().decode())
