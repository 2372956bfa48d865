"""Property: whatever the evidence, an answered reply cites only pages that mention the asked
place or subject. Pages are built from a pool of names, each page mentioning a random subset
(in either script), so which pages are about what was asked is known without the code under
test deciding it."""

from __future__ import annotations

import asyncio
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmflow_gateway.schemas import AnswerStatus, ExternalEvidence, ExternalQueryPlan, QueryKind
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose

EXAMPLES = max(int(os.environ.get("PMFLOW_PROPERTY_EXAMPLES", "300")), 200)

# No name is part of another, so "the page mentions it" is a plain substring test.
PLACES = (("广州", "Guangzhou"), ("深圳", "Shenzhen"), ("北京", "Beijing"), ("东京", "Tokyo"),
          ("巴黎", "Paris"), ("伦敦", "London"), ("上海", "Shanghai"))
SUBJECTS = (("腾讯", "Tencent"), ("特斯拉", "Tesla"), ("英伟达", "Nvidia"), ("百度", "Baidu"))
DAYS = ("今天", "明天", "后天", "today", "tomorrow", None)
WEATHER_LINES = ("{name}{day}多云，{a}~{b}℃。", "{name} {day}: rain, {a} to {b}C.",
                 "{day}{name}有雷阵雨，气温{a}到{b}度；", "Forecast for {name} {day}: sunny, {b}C.")
COMPANY_LINES = ("{name}发布第{a}季度财报，营收增长{b}%。",
                 "{name} said revenue grew {b}% in Q{a}.", "{name} 今天宣布新的产品计划。",
                 "Analysts expect {name} to hire {b} engineers.")
FILLER = ("欢迎访问本站。", "Subscribe for more updates.", "本页数据仅供参考。")


@st.composite
def page(draw: st.DrawFn, pool: tuple[tuple[str, str], ...],
         lines: tuple[str, ...]) -> tuple[set[int], str]:
    """A page mentioning a random subset of the pool: (indexes it mentions, its text)."""
    mentioned = draw(st.sets(st.integers(0, len(pool) - 1), max_size=3))
    parts = [draw(st.sampled_from(FILLER))]
    for k in sorted(mentioned):
        name = pool[k][draw(st.integers(0, 1))]
        day = draw(st.sampled_from(DAYS)) or ""
        template = draw(st.sampled_from(lines))
        parts.append(template.format(name=name, day=day, a=draw(st.integers(1, 30)),
                                     b=draw(st.integers(1, 40))))
    parts += draw(st.lists(st.sampled_from(FILLER), max_size=2))
    return mentioned, " ".join(draw(st.permutations(parts)))


@st.composite
def case(draw: st.DrawFn) -> tuple[ExternalQueryPlan, int, list[tuple[set[int], str]]]:
    weather = draw(st.booleans())
    pool, lines = (PLACES, WEATHER_LINES) if weather else (SUBJECTS, COMPANY_LINES)
    asked = draw(st.integers(0, len(pool) - 1))
    name = pool[asked][draw(st.integers(0, 1))]
    day = draw(st.sampled_from(("今天", "明天", "未来3天", None)))
    if weather:
        plan = ExternalQueryPlan(query_kind=QueryKind.weather, topic=f"{name}{day or ''}天气",
                                 subject_entities=[name], location_hint=name,
                                 time_range_hint=day, search_queries=[f"{name} 天气"])
    else:
        plan = ExternalQueryPlan(query_kind=QueryKind.company, topic=f"{name} 最新消息",
                                 subject_entities=[name], search_queries=[f"{name} 最新消息"])
    pages = draw(st.lists(page(pool, lines), min_size=1, max_size=5))
    return plan, asked, pages


def _item(n: int, text: str) -> ExternalEvidence:
    return evidence(f"https://site{n}.example/p", text, title=f"Page {n}")


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case())
def test_an_answer_never_cites_a_page_that_does_not_mention_what_was_asked(
        drawn: tuple[ExternalQueryPlan, int, list[tuple[set[int], str]]]) -> None:
    plan, asked, pages = drawn
    items = [_item(n, text) for n, (_, text) in enumerate(pages)]
    about = {items[n].target_url for n, (mentioned, _) in enumerate(pages) if asked in mentioned}
    answer = asyncio.run(verify_and_compose(collected(items, plan=plan, question=plan.topic),
                                            clock=CLOCK))
    if answer.status is AnswerStatus.answered:
        assert answer.sources_used
        assert {s.url for s in answer.sources_used} <= about, (plan.topic, pages, answer.answer)
    else:
        assert answer.sources_used == []
