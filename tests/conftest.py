"""Shared fixtures. Tests that need a real service are marked and skip with a reason when the
service's address is not in the environment (`scripts/local-stack env` prints them)."""

from __future__ import annotations

import os
import uuid

import pytest

from pmflow_gateway.schemas import Topics


def _needs(var: str, marker: str) -> str:
    value = os.environ.get(var)
    if not value:
        pytest.skip(f"{marker} test: set {var} "
                    "(scripts/local-stack up; eval $(scripts/local-stack env))")
    return value


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    return _needs("PMFLOW_KAFKA_BOOTSTRAP", "kafka")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return _needs("PMFLOW_TEST_POSTGRES_URL", "postgres")


@pytest.fixture(scope="session")
def jaeger_url() -> str:
    return _needs("PMFLOW_TEST_JAEGER_URL", "jaeger")


@pytest.fixture
def topics() -> Topics:
    """Fresh topic names per test, so tests never read each other's events."""
    return Topics(prefix=f"test{uuid.uuid4().hex[:8]}.")
