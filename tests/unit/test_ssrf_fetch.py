"""The SSRF guard on a real local site: redirects re-checked, pinned connections, caps."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from pmflow_gateway.adapters.ssrf import FetchRefused, FetchTimedOut, SafeFetcher
from tests.support.web_site import LocalSite

HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite({"/": (200, HTML, "<p>首页 home</p>")}) as local:
        yield local


def local_fetcher(**caps: float) -> SafeFetcher:
    """Lets only the name `localhost` through, so 127.0.0.1 itself stays refused."""
    return SafeFetcher(allow_hosts=["localhost"], **caps)  # type: ignore[arg-type]


async def test_ssrf_fetches_an_allow_listed_local_site(site: LocalSite) -> None:
    page = await local_fetcher().fetch(site.url("/", host="localhost"))
    assert page.status == 200
    assert page.text == "<p>首页 home</p>"
    assert page.content_type == "text/html"


async def test_ssrf_follows_a_relative_redirect_after_checking_it(site: LocalSite) -> None:
    site.routes["/old"] = (301, {"Location": "/"}, "")
    page = await local_fetcher().fetch(site.url("/old", host="localhost"))
    assert page.final_url == site.url("/", host="localhost")
    assert site.paths_requested() == ["/old", "/"]


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/", "http://169.254.169.254/latest",
                                    "http://[::ffff:127.0.0.1]:{port}/", "http://2130706433/",
                                    "file:///etc/passwd"])
async def test_ssrf_refuses_a_redirect_hop_to_a_refused_target(site: LocalSite,
                                                               target: str) -> None:
    site.routes["/jump"] = (302, {"Location": target.format(port=site.port)}, "")
    with pytest.raises(FetchRefused, match="refused"):
        await local_fetcher().fetch(site.url("/jump", host="localhost"))
    assert site.paths_requested() == ["/jump"]  # the hop itself was never requested


async def test_ssrf_caps_redirects(site: LocalSite) -> None:
    site.routes["/a"] = (302, {"Location": "/b"}, "")
    site.routes["/b"] = (302, {"Location": "/a"}, "")
    with pytest.raises(FetchRefused, match="more than 3 redirects"):
        await local_fetcher(max_redirects=3).fetch(site.url("/a", host="localhost"))
    assert len(site.requests) == 4


async def test_ssrf_caps_bytes_and_stops_reading_an_endless_body(site: LocalSite) -> None:
    def endless() -> Iterator[bytes]:
        while True:
            yield b"x" * 4096

    site.routes["/endless"] = (200, {"Content-Type": "text/plain"}, endless)
    page = await local_fetcher(max_bytes=10_000).fetch(site.url("/endless", host="localhost"))
    assert page.truncated
    assert len(page.text) == 10_000


async def test_ssrf_caps_total_time_on_a_trickling_body(site: LocalSite) -> None:
    def trickle() -> Iterator[bytes]:
        while True:
            time.sleep(0.05)
            yield b"."

    site.routes["/slow"] = (200, {"Content-Type": "text/plain"}, trickle)
    started = time.monotonic()
    with pytest.raises(FetchTimedOut, match=re.escape("exceeded 0.4s")):
        await local_fetcher(timeout_s=5).fetch(site.url("/slow", host="localhost"), timeout_s=0.4)
    assert time.monotonic() - started < 1.5


async def test_ssrf_refuses_binary_content_before_reading_it(site: LocalSite) -> None:
    site.routes["/file.pdf"] = (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7")
    with pytest.raises(FetchRefused, match="content type application/pdf"):
        await local_fetcher().fetch(site.url("/file.pdf", host="localhost"))


async def test_ssrf_connects_to_the_address_it_checked_not_a_second_answer(
    site: LocalSite,
) -> None:
    """A rebinding DNS answers the check with the site's address, then with a refused one.

    `rebind.test` exists in no real DNS, so the fetch can only work if the connection went to
    the checked answer; the resolver is asked exactly once.
    """
    answers = [["127.0.0.1"], ["10.0.0.1"], ["169.254.169.254"]]
    asked: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers.pop(0)

    fetcher = SafeFetcher(allow_hosts=["rebind.test"], resolver=rebinding)
    page = await fetcher.fetch(f"http://rebind.test:{site.port}/")
    assert page.text == "<p>首页 home</p>"
    assert asked == ["rebind.test"]
    assert site.requests[-1].host == f"rebind.test:{site.port}"  # Host header kept


async def test_ssrf_refused_redirect_to_a_name_resolving_to_metadata(site: LocalSite) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"localhost": ["127.0.0.1"], "evil.example": ["169.254.169.254"]}[host]

    site.routes["/jump"] = (302, {"Location": "http://evil.example/latest/meta-data/"}, "")
    fetcher = SafeFetcher(allow_hosts=["localhost"], resolver=resolver)
    refusal = "cloud metadata address 169.254.169.254 refused for host evil.example"
    with pytest.raises(FetchRefused, match=re.escape(refusal)):
        await fetcher.fetch(site.url("/jump", host="localhost"))
