"""The CLI's error boundary: which exceptions are expected (a service down, a bad setting or
argument), their exit code, and the one line that says what to fix."""

from __future__ import annotations

from typing import Any

# Exceptions that are expected when a service is down or misconfigured, by qualified class
# name so that classifying them never imports the library: exit 2 is "fix your command or
# configuration", exit 1 "something outside failed".
USAGE_ERRORS = {"pydantic_core._pydantic_core.ValidationError",
                "pmflow_gateway.adapters.mcp_config.McpConfigError",
                "pmflow_gateway.streams.partition_producers.NoTransactions"}
OPERATIONAL_ERRORS = {"builtins.OSError", "aiokafka.errors.KafkaError",
                      "sqlalchemy.exc.SQLAlchemyError", "httpx.HTTPError",
                      "pmflow_gateway.ports.Unavailable"}
HINTS = {"run": "is Kafka up at PMFLOW_KAFKA_BOOTSTRAP? (pmflow-gateway doctor)",
         "topics": "is Kafka up at PMFLOW_KAFKA_BOOTSTRAP? (pmflow-gateway doctor)",
         "ask": "are Kafka, the database and the MCP servers up? (pmflow-gateway doctor)",
         "memory": "is the database at PMFLOW_DATABASE_URL up? (pmflow-gateway doctor)"}
# An error that names the dependency that is away gets that dependency's hint, whatever the
# command: a worker whose database is down must not be told to look at Kafka.
DEPENDENCY_HINTS = {"database": "is the database at PMFLOW_DATABASE_URL up? (pmflow-gateway "
                                "doctor)"}
# Where a rejected event field came from on the command line.
ARGUMENT_OF_FIELD = {"question": "QUESTION", "tenant_id": "--tenant", "locale": "--locale"}


def _qualified_names(exc: BaseException) -> set[str]:
    return {f"{cls.__module__}.{cls.__qualname__}" for cls in type(exc).__mro__}


def exit_code_of(exc: BaseException) -> int | None:
    """2 for a usage or configuration error, 1 for an outside failure, None: a bug."""
    names = _qualified_names(exc)
    if names & USAGE_ERRORS:
        return 2
    return 1 if names & OPERATIONAL_ERRORS else None


def validation_line(exc: Any) -> str:
    """A pydantic ValidationError in one line, naming what the user typed or set."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if not field:  # a rule across fields: its message names them
            parts.append(message)
            continue
        if exc.title == "Settings":
            field = f"PMFLOW_{field.upper()}"
        parts.append(f"{ARGUMENT_OF_FIELD.get(field, field)}: {message}")
    return "; ".join(parts)


def error_lines(command: str, exc: BaseException) -> list[str]:
    if "pydantic_core._pydantic_core.ValidationError" in _qualified_names(exc):
        return [f"error: {validation_line(exc)}"]
    kind = type(exc).__name__
    text = " ".join(str(exc).split("\n", 1)[0].split()).removeprefix(f"{kind}: ") or kind
    lines = [f"error: {command}: {kind}: {text[:300]}"]
    hint = DEPENDENCY_HINTS.get(getattr(exc, "dependency", None) or "") or HINTS.get(command)
    if exit_code_of(exc) == 1 and hint:
        lines.append(f"hint: {hint}")
    return lines
