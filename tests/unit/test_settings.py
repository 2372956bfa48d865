"""Settings read from the environment: lists as comma-separated text, cross-field rules
refused at start-up, the listening address of the worker's HTTP routes configurable."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pmflow_gateway.ops.errors import validation_line
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.health import HealthServer


@pytest.mark.parametrize(("text", "hosts"), [
    ("a.test,b.test", ["a.test", "b.test"]),
    (" a.test , b.test ,", ["a.test", "b.test"]),
    ('["a.test", "b.test"]', ["a.test", "b.test"]),
    ("", []),
])
def test_list_settings_accept_comma_separated_text(monkeypatch: pytest.MonkeyPatch, text: str,
                                                   hosts: list[str]) -> None:
    monkeypatch.setenv("PMFLOW_FETCH_ALLOW_HOSTS", text)
    assert Settings().fetch_allow_hosts == hosts


def test_searxng_without_an_endpoint_is_refused_naming_both_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENGINE", "searxng")
    monkeypatch.delenv("PMFLOW_LIVE_SEARCH_ENDPOINT", raising=False)
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert validation_line(raised.value) == (
        "PMFLOW_LIVE_SEARCH_ENGINE=searxng needs PMFLOW_LIVE_SEARCH_ENDPOINT "
        "(the SearXNG base URL)")
    monkeypatch.setenv("PMFLOW_LIVE_SEARCH_ENDPOINT", "http://searx.internal:8080")
    assert Settings().live_search_engine == "searxng"


def test_a_bad_value_is_reported_under_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PMFLOW_RESULT_LIMIT", "50")
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert validation_line(raised.value).startswith("PMFLOW_RESULT_LIMIT: Input should be less")


async def test_the_health_routes_listen_on_the_configured_address() -> None:
    server = HealthServer(host="127.0.0.1", port=0, ready=lambda: True)
    await server.start()
    try:
        assert server._server is not None
        assert {s.getsockname()[0] for s in server._server.sockets} == {"127.0.0.1"}
    finally:
        await server.stop()


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
