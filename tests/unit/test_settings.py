"""Settings that cannot work are refused when they are read, not at question time."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pmflow_gateway.settings import Settings


def test_searxng_without_an_endpoint_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENGINE", "searxng")
    for endpoint in (None, "", "  "):
        if endpoint is None:
            monkeypatch.delenv("PMFLOW_LIVE_SEARCH_ENDPOINT", raising=False)
        else:
            monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENDPOINT", endpoint)
        with pytest.raises(ValidationError, match="needs PMFLOW_LIVE_SEARCH_ENDPOINT"):
            Settings()
    monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENDPOINT", "http://searx.local:8080")
    assert Settings().live_search_endpoint == "http://searx.local:8080"


def test_duckduckgo_needs_no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PMFLOW_LIVE_SEARCH_ENDPOINT", raising=False)
    monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENGINE", "duckduckgo")
    assert Settings().live_search_endpoint is None
