"""The shared address rule, read from the URL alone: what the fetcher applies before DNS and
what every URL from an MCP result meets before it can become evidence."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.addresses import allow_keys, host_refusal, url_refusal
from pmflow_gateway.contract.sources import url_problem
from tests.support.hostile_mcp import PRIVATE_URLS


@pytest.mark.parametrize("url", PRIVATE_URLS)
def test_every_private_spelling_is_refused(url: str) -> None:
    assert url_refusal(url)


@pytest.mark.parametrize("url", [
    "https://weather.example/gz", "https://www.weather.com.cn/weather/101280101.shtml",
    "http://8.8.8.8/", "https://[2606:4700::1111]/", "https://例子.中国/",
])
def test_public_hosts_pass(url: str) -> None:
    assert url_refusal(url) is None


def test_the_allow_list_lifts_private_and_local_hosts_on_their_port_only() -> None:
    allow = allow_keys(["localhost:8080", "127.0.0.1:5432", "[::1]:8080"])
    assert url_refusal("http://localhost:8080/weather", allow) is None
    assert url_refusal("http://127.0.0.1:5432/", allow) is None
    assert url_refusal("http://[::1]:8080/weather", allow) is None
    assert url_refusal("http://localhost:8081/weather", allow) == "loopback name localhost"


@pytest.mark.parametrize("host", ["169.254.169.254", "0251.0376.0251.0376",
                                  "[::ffff:169.254.169.254]", "metadata.google.internal",
                                  "0.0.0.0", "0"])
def test_metadata_and_unspecified_stay_refused_when_allowed(host: str) -> None:
    assert host_refusal(host, allowed=True)
    assert url_problem(f"http://{host}/latest/")


def test_a_cited_url_meets_only_the_refusals_no_allow_list_lifts() -> None:
    assert url_problem("http://localhost:8080/weather") is None  # a test site, allow-listed
    assert url_problem("https://weather.example/gz") is None
