"""Where the real services of the integration tests come from.

Each service (Kafka, PostgreSQL, Jaeger) is taken from its environment variable when set
(`scripts/local-stack env`, CI), else started in a container when a Docker engine answers, else
its tests skip with the reason. `PMFLOW_TEST_SERVICES` narrows that: `env` fails a test whose
variable is missing, `docker` fails when no engine answers (and ignores the variables), `auto`
(the default) is the fallback order above. CI sets `env` so a missing service is never a
silent skip.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Literal

MODE_ENV = "PMFLOW_TEST_SERVICES"
Mode = Literal["env", "docker", "auto"]
MODES: tuple[Mode, ...] = ("env", "docker", "auto")

# The images of docker-compose.yml, so the containers run what a compose user runs.
KAFKA_IMAGE = "apache/kafka:4.4.0"
POSTGRES_IMAGE = "postgres:16.10"
JAEGER_IMAGE = "jaegertracing/jaeger:2.10.0"


@dataclass(frozen=True)
class Service:
    name: str
    variable: str
    start: Callable[[ExitStack], str]  # starts the container; the value the variable would hold


@dataclass(frozen=True)
class Choice:
    """One of: take `value` from the environment, start a container, skip, or fail."""

    provider: Literal["env", "docker", "skip", "fail"]
    value: str = ""
    reason: str = ""


def mode_of(environ: Mapping[str, str]) -> Mode:
    raw = environ.get(MODE_ENV, "").strip().lower() or "auto"
    for mode in MODES:
        if raw == mode:
            return mode
    raise ValueError(f"{MODE_ENV}={raw!r}: expected one of {', '.join(MODES)}")


def choose(service: Service, environ: Mapping[str, str],
           engine_problem: Callable[[], str | None]) -> Choice:
    """Where `service` comes from; `engine_problem` says why no Docker engine answers, or
    None when one does (asked only when the environment does not settle it)."""
    mode = mode_of(environ)
    value = environ.get(service.variable, "")
    hint = "(scripts/local-stack up; eval $(scripts/local-stack env))"
    if mode == "env":
        if value:
            return Choice("env", value=value)
        return Choice("fail", reason=f"{MODE_ENV}=env but {service.variable} is not set {hint}")
    if mode == "auto" and value:
        return Choice("env", value=value)
    problem = engine_problem()
    if problem is None:
        return Choice("docker")
    if mode == "docker":
        return Choice("fail", reason=f"{MODE_ENV}=docker but no Docker engine answers: {problem}")
    return Choice("skip", reason=f"{service.name} test: set {service.variable} {hint} or start "
                                 f"a Docker engine ({problem})")


def docker_engine_problem() -> str | None:
    """Why no Docker engine answers (DOCKER_HOST or the default socket), or None."""
    try:
        import docker
    except ImportError as exc:  # the test extra brings it with testcontainers
        return f"the docker package is missing: {exc}"
    try:
        client = docker.from_env(timeout=3)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # any failure to reach it means: no engine for us
        return f"{type(exc).__name__}: {exc}"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_kafka(stack: ExitStack) -> str:
    """One KRaft node (broker and controller). The host port is chosen before the start so
    the broker can advertise it: clients, and a test that restarts the container, then
    reach it at the same address."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    port = _free_port()
    container = DockerContainer(KAFKA_IMAGE).with_bind_ports(9092, port)
    host = container.get_docker_client().host()
    for key, value in {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://{host}:{port}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_NUM_PARTITIONS": "3",
        "KAFKA_MESSAGE_MAX_BYTES": "2097152",
    }.items():
        container.with_env(key, value)
    container.waiting_for(LogMessageWaitStrategy("Kafka Server started"))
    stack.enter_context(container)
    return f"{host}:{port}"


def start_postgres(stack: ExitStack) -> str:
    from testcontainers.community.postgres import PostgresContainer

    container = PostgresContainer(POSTGRES_IMAGE, username="postgres", password="postgres",
                                  dbname="pmflow_test", driver="asyncpg")
    stack.enter_context(container)
    return container.get_connection_url()


def start_jaeger(stack: ExitStack) -> str:
    """Jaeger v2 all-in-one; its OTLP/HTTP endpoint goes to the test session's exporter."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import HttpWaitStrategy

    from tests.support.traces import export_to

    container = DockerContainer(JAEGER_IMAGE).with_exposed_ports(16686, 4318)
    container.waiting_for(HttpWaitStrategy(16686, "/"))
    stack.enter_context(container)
    host = container.get_container_host_ip()
    export_to(f"http://{host}:{container.get_exposed_port(4318)}")
    return f"http://{host}:{container.get_exposed_port(16686)}"


KAFKA = Service("kafka", "PMFLOW_KAFKA_BOOTSTRAP", start_kafka)
POSTGRES = Service("postgres", "PMFLOW_TEST_POSTGRES_URL", start_postgres)
JAEGER = Service("jaeger", "PMFLOW_TEST_JAEGER_URL", start_jaeger)
