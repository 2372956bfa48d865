"""Fixtures shared by the store tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.pg import STORE_BACKENDS, empty_database


@pytest.fixture(params=STORE_BACKENDS)
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """An empty database of each backend (SQLite always, PostgreSQL when configured)."""
    async with empty_database(request, request.param, tmp_path) as found:
        yield found
