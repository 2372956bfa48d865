"""Shared fixtures. A test that needs a real service takes it from the environment
(`scripts/local-stack env` prints the variables), else from a container when a Docker engine
answers, else skips with the reason; `PMFLOW_TEST_SERVICES` (tests/support/services.py) makes
either provider mandatory."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from pmflow_gateway.schemas import Topics
from tests.support.services import (
    JAEGER,
    KAFKA,
    POSTGRES,
    Service,
    choose,
    docker_engine_problem,
)


@pytest.fixture(scope="session")
def _containers() -> Iterator[ExitStack]:
    """Containers started for this session, stopped at its end."""
    with ExitStack() as stack:
        yield stack


def _provide(service: Service, containers: ExitStack) -> str:
    choice = choose(service, os.environ, docker_engine_problem)
    if choice.provider == "skip":
        pytest.skip(choice.reason)
    if choice.provider == "fail":
        pytest.fail(choice.reason, pytrace=False)
    if choice.provider == "docker":
        return service.start(containers)
    return choice.value


@pytest.fixture(scope="session")
def kafka_bootstrap(_containers: ExitStack) -> str:
    return _provide(KAFKA, _containers)


@pytest.fixture(scope="session")
def postgres_url(_containers: ExitStack) -> str:
    return _provide(POSTGRES, _containers)


@pytest.fixture(scope="session")
def jaeger_url(_containers: ExitStack) -> str:
    return _provide(JAEGER, _containers)


@pytest.fixture
def topics() -> Topics:
    """Fresh topic names per test, so tests never read each other's events."""
    return Topics(prefix=f"test{uuid.uuid4().hex[:8]}.")
