"""Memoised text functions never keep what a hostile page makes unbounded: questions whose
pages have 200,000-character titles and URLs leave nothing behind once they are answered."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from pmflow_gateway.contract.text import clean_sentences, folded
from pmflow_gateway.contract.urls import canonical_url, host_of, registrable_domain
from pmflow_gateway.handlers.render import render_reply
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose

QUESTIONS = 20
LONG = 200_000


async def answer_with_long_fields(n: int) -> None:
    title = f"{n} 广州天气 " + "预报很长的标题" * (LONG // 7)
    url = f"https://www.weather.com.cn/gz/{n}/" + "p" * LONG
    # An event carries URLs up to its bound; the URL functions see the unbounded one as well.
    item = evidence(url[:2048], "广州未来5天多云，气温15至24℃。", title=title)
    render_reply(await verify_and_compose(collected([item]), clock=CLOCK), clock=CLOCK)
    folded(title), clean_sentences(title), canonical_url(url), host_of(url)
    registrable_domain(f"{n}." * (LONG // 2) + "com")


def test_questions_with_huge_titles_and_urls_leave_no_memory_behind() -> None:
    asyncio.run(answer_with_long_fields(-1))  # imports and tables, once per process
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(QUESTIONS):
            asyncio.run(answer_with_long_fields(n))
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # One kept title alone is 400 KB; twenty questions keeping theirs would be 8 MB and more.
    assert grown < 1_000_000, f"{grown / 1e6:.1f} MB kept"
