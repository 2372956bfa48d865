"""Demo data never poses as real data: the packaged corpus lives on reserved hosts, answers
built from such pages are flagged, and their replies say so in both languages."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.demo import is_demo_url
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.mcp_server.corpus import load_pages
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose

EN_Q = "What is the weather in Guangzhou for the next 5 days?"


@pytest.mark.parametrize("url", [
    "https://weather.example/gz", "https://WWW.Example.COM/x", "http://a.b.example.org/",
    "https://news.test/p", "https://x.invalid/", "https://localhost./", "https://example.net",
])
def test_reserved_hosts_are_demo(url: str) -> None:
    assert is_demo_url(url)


@pytest.mark.parametrize("url", [
    "https://www.weather.com.cn/gz", "https://example.com.cn/x", "https://notexample.com/",
    "https://example.co.uk/", "https://test.com/", "not a url", "https://[::1", "",
])
def test_real_looking_hosts_are_not(url: str) -> None:
    assert not is_demo_url(url)


def test_every_packaged_page_is_on_a_reserved_host_and_named_as_demo() -> None:
    for page in load_pages():
        assert is_demo_url(page.url), page.url
        assert "demo" in page.site or "演示" in page.site, page.site


@pytest.mark.parametrize(("locale", "first"), [("zh-CN", "【演示数据】"), ("en-US", "[Demo data]")])
async def test_an_answer_from_demo_pages_is_flagged_and_says_so_in_both_languages(
        locale: str, first: str) -> None:
    items = [evidence("https://weather.example/gz", "广州未来5天以多云为主，气温18到25度。",
                      title="广州天气预报")]
    answer = await verify_and_compose(collected(items, locale=locale, question=(
        EN_Q if locale.startswith("en") else "帮我看看未来 5 天的广州天气如何")), clock=CLOCK)
    assert answer.demo
    lines = render_reply(answer, clock=CLOCK).text.splitlines()
    assert lines[1].startswith(first)
    assert lines[2].startswith("[Demo data]" if first == "【演示数据】" else "【演示数据】")


async def test_an_answer_from_real_pages_carries_no_notice() -> None:
    items = [evidence("https://www.weather.com.cn/gz", "广州未来5天以多云为主，气温18到25度。",
                      title="广州天气预报")]
    answer = await verify_and_compose(collected(items), clock=CLOCK)
    assert not answer.demo
    assert "演示" not in render_reply(answer, clock=CLOCK).text
