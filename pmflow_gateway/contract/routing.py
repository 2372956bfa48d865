"""PMFlow's routing fields as a contract: one table says what the gateway may do with a route
decision, from its `route_mode`, `effective_source_policy`, `query_profile.needs_private_context`
and `reply_contract`.

The table fails closed. Only the one row that lets a question out (`answer`) names exact
values; every other row refuses or asks back, and a value the table does not know (or a field
left out) refuses. A refused or clarified question is never planned, searched or fetched:
nothing about it reaches a model, an MCP server or a web site.
"""

from __future__ import annotations

from dataclasses import dataclass

from pmflow_gateway.schemas import RouteAction, RoutePolicy, RoutingSnapshot

SOURCE_POLICIES = frozenset({"external_only", "external_first", "internal_only"})
REPLY_CONTRACTS = frozenset({"external_realtime", "clarification", "internal_answer"})

OUTSIDE = frozenset({"external", "uncertain"})
EXTERNAL_POLICIES = frozenset({"external_only", "external_first"})
ANY: frozenset[str] | None = None
EITHER: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Row:
    """One row: the values it matches (`ANY`/`EITHER`: every known value) and what it allows."""

    rule: str
    route_mode: frozenset[str] | None
    source_policy: frozenset[str] | None
    private_context: bool | None
    reply_contract: frozenset[str] | None
    action: RouteAction
    why: str

    def matches(self, routing: RoutingSnapshot) -> bool:
        private = routing.query_profile.needs_private_context
        return ((self.route_mode is None or routing.route_mode in self.route_mode)
                and (self.source_policy is None
                     or routing.effective_source_policy in self.source_policy)
                and (self.private_context is None or private is self.private_context)
                and (self.reply_contract is None or routing.reply_contract in self.reply_contract))


# First match wins. Only `answer` lets anything out, and it lists its values one by one.
TABLE: tuple[Row, ...] = (
    Row(rule="internal_route", route_mode=frozenset({"internal"}), source_policy=ANY,
        private_context=EITHER, reply_contract=ANY, action=RouteAction.skip,
        why="route_mode=internal: PMFlow answers it from internal data"),
    Row(rule="internal_only_policy", route_mode=ANY, source_policy=frozenset({"internal_only"}),
        private_context=EITHER, reply_contract=ANY, action=RouteAction.refuse,
        why="effective_source_policy=internal_only allows no external request"),
    Row(rule="internal_reply", route_mode=ANY, source_policy=ANY, private_context=EITHER,
        reply_contract=frozenset({"internal_answer"}), action=RouteAction.refuse,
        why="reply_contract=internal_answer: the answer must come from internal data"),
    Row(rule="private_context", route_mode=frozenset({"external"}), source_policy=ANY,
        private_context=True, reply_contract=ANY, action=RouteAction.refuse,
        why="needs_private_context=true: searching outside would send private context out"),
    Row(rule="private_context_unsure", route_mode=frozenset({"uncertain"}), source_policy=ANY,
        private_context=True, reply_contract=ANY, action=RouteAction.clarify,
        why="uncertain and needs_private_context=true: ask whether public information is "
            "wanted rather than search with private context"),
    Row(rule="clarification", route_mode=OUTSIDE, source_policy=EXTERNAL_POLICIES,
        private_context=False, reply_contract=frozenset({"clarification"}),
        action=RouteAction.clarify, why="reply_contract=clarification: ask back"),
    Row(rule="external", route_mode=OUTSIDE, source_policy=EXTERNAL_POLICIES,
        private_context=False, reply_contract=frozenset({"external_realtime"}),
        action=RouteAction.answer, why="external sources only, nothing private"),
)
NO_ROW = "no_row"
UNKNOWN_VALUE = "unknown_value"


def route_policy(routing: RoutingSnapshot) -> RoutePolicy:
    """What the gateway may do with this route decision."""
    internal = TABLE[0]
    if internal.matches(routing):
        return RoutePolicy(action=internal.action, rule=internal.rule, reason=internal.why)
    if unknown := _unknown_values(routing):
        return RoutePolicy(action=RouteAction.refuse, rule=UNKNOWN_VALUE,
                           reason=f"not in the routing table: {unknown}")
    for row in TABLE[1:]:
        if row.matches(routing):
            return RoutePolicy(action=row.action, rule=row.rule, reason=row.why)
    # Unreachable while the rows cover every known value (a test enumerates them all).
    return RoutePolicy(action=RouteAction.refuse, rule=NO_ROW,
                       reason="no row of the routing table allows it")


def _unknown_values(routing: RoutingSnapshot) -> str:
    fields = (("effective_source_policy", routing.effective_source_policy, SOURCE_POLICIES),
              ("reply_contract", routing.reply_contract, REPLY_CONTRACTS))
    return ", ".join(f"{name}={value[:40]!r}" if value else f"{name} missing"
                     for name, value, known in fields if value not in known)


def may_search(routing: RoutingSnapshot) -> bool:
    """Whether anything about this question may be sent to a model, an MCP server or a site."""
    return route_policy(routing).action is RouteAction.answer


def markdown_table() -> str:
    """The table as the README shows it (a test keeps the two equal)."""
    def cell(values: frozenset[str] | None) -> str:
        return "any" if values is None else ", ".join(f"`{v}`" for v in sorted(values))

    lines = ["| route_mode | effective_source_policy | needs_private_context | reply_contract "
             "| the gateway | why |", "|---|---|---|---|---|---|"]
    for row in TABLE:
        private = "any" if row.private_context is None else str(row.private_context).lower()
        lines.append(f"| {cell(row.route_mode)} | {cell(row.source_policy)} | {private} "
                     f"| {cell(row.reply_contract)} | **{row.action}** | {row.why} |")
    lines.append("| any other or missing value | | | | **refuse** | fails closed |")
    return "\n".join(lines)
