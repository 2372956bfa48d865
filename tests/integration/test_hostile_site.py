"""A hostile local web site, end to end: fetch, extraction, verify, compose and render.

Its pages are built to freeze a reader (titles and style sheets that make a backtracking
regex retry from every character) or to smuggle something into the reply (planted links,
contact handles, phone numbers, instructions to an assistant). The event loop must never be
held for long, and nothing planted may reach the reply.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator

import pytest

from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.page_text import read_page
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.contract.text import clean_sentences, hosts_named
from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.schemas import ReplyRendered
from tests.fakes import FixedClock
from tests.support.builders import CLOCK, collected, verify_and_compose, weather_plan
from tests.support.loop_watchdog import watch_loop
from tests.support.pages import ANSWER_PAGE, HTML, INJECTION, REDOS_STYLE_PAGE, REDOS_TITLE_PAGE
from tests.support.planted import LINK_SPELLINGS, PLANTED_SENTENCES
from tests.support.web_site import LocalSite

MAX_LOOP_HOLD_S = 0.1
PLAN = weather_plan()


def serve(site: LocalSite, pages: dict[str, str]) -> None:
    results = [{"url": site.url(path, host="localhost"), "title": path, "content": ""}
               for path in pages]
    site.routes["/search"] = (200, {"Content-Type": "application/json"},
                              json.dumps({"results": results}))
    site.routes.update({path: (200, HTML, body) for path, body in pages.items()})


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        yield local


async def ask(site: LocalSite) -> ReplyRendered:
    adapter = LiveSearchAdapter(engine=SearxngJson(site.url("", host="localhost")),
                                allow_hosts=[f"localhost:{site.port}"], clock=FixedClock(),
                                max_queries=1)
    result = await adapter.collect(PLAN, timeout_s=20)
    answer = await verify_and_compose(collected(result.items, plan=PLAN), clock=CLOCK)
    return render_reply(answer, clock=CLOCK)


def warm_up() -> None:
    """What a process does once (imports, Unicode tables, the suffix list), before any page."""
    read_page(ANSWER_PAGE)
    clean_sentences("广州 example.com")


async def test_redos_titles_and_style_sheets_never_hold_the_loop(site: LocalSite) -> None:
    serve(site, {"/title": REDOS_TITLE_PAGE, "/style": REDOS_STYLE_PAGE})
    warm_up()
    async with watch_loop() as lag:
        reply = await ask(site)
    assert lag.ticks > 0
    assert lag.worst_s < MAX_LOOP_HOLD_S, lag
    assert "12月3日晴" in reply.text and "12月4日多云" in reply.text  # both pages still read
    assert INJECTION not in reply.text  # the hidden class of the second style sheet held
    assert all(len(source.title) <= 120 for source in reply.sources)


async def test_planted_links_handles_and_instructions_never_reach_the_reply(
        site: LocalSite) -> None:
    planted = " ".join(sentence for sentence, _ in PLANTED_SENTENCES)
    links = " ".join(f"广州天气详见 {link} 。" for link in LINK_SPELLINGS)
    page = REDOS_TITLE_PAGE.replace("</article>", f"<p>{planted}</p><p>{links}</p></article>")
    serve(site, {"/planted": page})
    warm_up()
    async with watch_loop() as lag:
        reply = await ask(site)
    assert lag.worst_s < MAX_LOOP_HOLD_S, lag
    assert "12月3日晴" in reply.text
    text = reply.text.lower()
    assert [mark for _, mark in PLANTED_SENTENCES if mark.lower() in text] == []
    assert hosts_named(reply.text.split("来源摘要")[0]) == []


async def test_huge_titles_leave_no_memory_behind(site: LocalSite) -> None:
    """Every question's page has its own 200,000-character title: none of them may stay in
    a cache once its question is answered."""
    def page(n: int) -> str:
        return REDOS_TITLE_PAGE.replace("x." * 3000, f"{n} 广州天气" + "很长的标题" * 40_000)

    serve(site, {"/big": page(-1)})
    warm_up()
    await ask(site)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(8):
            site.routes["/big"] = (200, HTML, page(n))
            assert "12月3日晴" in (await ask(site)).text
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2_000_000, f"{kept / 1e6:.1f} MB kept"  # one kept title is 400 KB
