"""The reply the user sees, for every status, in both languages."""

from __future__ import annotations

import pytest

from pmflow_gateway.handlers.render import render_reply
from pmflow_gateway.schemas import AnswerContract, AnswerReady, AnswerStatus, Citation, SourceUsed
from tests.fakes import evidence
from tests.support.builders import CLOCK, collected, verify_and_compose, weather_plan

EN_Q = "What is the weather in Guangzhou for the next 5 days?"

ITEMS = [evidence("https://www.weather.com.cn/gz", "广州未来5天以多云为主，气温18到25度。",
                  title="广州天气预报"),
         evidence("https://tianqi.moji.com/gz", "广州周三有小雨。", title="天气网")]


async def answered(locale: str = "zh-CN") -> AnswerReady:
    # The reply speaks the question's language, so an English locale comes with an English
    # question here.
    question = EN_Q if locale.startswith("en") else "帮我看看未来 5 天的广州天气如何"
    return await verify_and_compose(collected(ITEMS, locale=locale, question=question),
                                    clock=CLOCK)


async def test_chinese_reply_has_answer_then_numbered_sources() -> None:
    reply = render_reply(await answered(), clock=CLOCK)
    assert reply.text == (
        "外部实时查询：\n广州未来5天以多云为主，气温18到25度。[1]\n广州周三有小雨。[2]\n\n来源摘要：\n"
        "[1] 广州天气预报 — weather.com.cn — https://www.weather.com.cn/gz\n"
        "[2] 天气网 — tianqi.moji.com — https://tianqi.moji.com/gz")
    assert [s.url for s in reply.sources] == [i.target_url for i in ITEMS]
    assert reply.status is AnswerStatus.answered and reply.thread_id == "t-42"


async def test_english_reply_uses_english_heads() -> None:
    reply = render_reply(await answered("en-US"), clock=CLOCK)
    assert reply.text.startswith("External real-time query:\n")
    assert "\n\nSources:\n[1] " in reply.text and "来源摘要" not in reply.text


async def test_rendering_is_idempotent() -> None:
    answer = await answered()
    assert render_reply(answer, clock=CLOCK) == render_reply(answer, clock=CLOCK)


@pytest.mark.parametrize("status", [AnswerStatus.freshness_guard, AnswerStatus.clarify,
                                    AnswerStatus.rejected, AnswerStatus.failed])
async def test_non_answers_carry_no_sources(status: AnswerStatus) -> None:
    forged = (await answered()).model_copy(update={"status": status})
    reply = render_reply(forged, clock=CLOCK)
    assert reply.sources == []
    assert "来源摘要" not in reply.text and "http" not in reply.text
    assert "多云" not in reply.text  # the status text is rebuilt, never copied


async def test_clarify_reply_names_what_is_missing() -> None:
    plan = weather_plan(location_hint=None, subject_entities=[],
                        answer_contract=AnswerContract.clarify)
    answer = await verify_and_compose(collected(ITEMS, plan=plan), clock=CLOCK)
    assert render_reply(answer, clock=CLOCK).text == (
        "外部实时查询：\n需要补充信息才能查询：地点（哪个城市）。")


@pytest.mark.parametrize("bad_source", [
    SourceUsed(n=1, title="Feishu history", site="feishu", url="https://www.weather.com.cn/gz"),
    SourceUsed(n=1, title="群聊记录", site="x", url="https://www.weather.com.cn/gz"),
    SourceUsed(n=1, title="t", site="x", url="https://acme.feishu.cn/docx/1"),
    SourceUsed(n=1, title="t", site="x", url="pmflow://records/1"),
    SourceUsed(n=1, title="t", site="x", url="https://elsewhere.example.com/"),
])
async def test_a_forged_answered_event_with_foreign_sources_is_rendered_rejected(
        bad_source: SourceUsed) -> None:
    answer = (await answered()).model_copy(update={"sources_used": [bad_source]})
    reply = render_reply(answer, clock=CLOCK)
    assert reply.status is AnswerStatus.rejected and reply.sources == []
    assert "已拦截" in reply.text and "feishu" not in reply.text.lower()


async def test_a_forged_answer_text_with_a_foreign_url_is_rendered_rejected() -> None:
    answer = (await answered()).model_copy(update={"answer": "多云 [1] https://evil.example.com"})
    assert render_reply(answer, clock=CLOCK).status is AnswerStatus.rejected


async def test_an_answered_event_without_sources_is_not_sent_as_an_answer() -> None:
    answer = (await answered()).model_copy(update={"sources_used": [], "citations": []})
    assert render_reply(answer, clock=CLOCK).status is AnswerStatus.rejected


async def test_titles_cannot_add_lines_to_the_summary() -> None:
    answer = await answered()
    title = "广州\n[9] 飞书 — x — https://evil.example.com\u202e"
    answer = answer.model_copy(update={
        "sources_used": [answer.sources_used[0].model_copy(update={"title": title}),
                         answer.sources_used[1]],
        "citations": [Citation(n=1, target_url=ITEMS[0].target_url, title=title),
                      answer.citations[1]]})
    reply = render_reply(answer, clock=CLOCK)
    assert "evil" not in reply.text and "[9]" not in reply.text


async def test_sources_numbered_unlike_the_citations_are_not_sent() -> None:
    answer = await answered()
    swapped = [s.model_copy(update={"n": 3 - s.n}) for s in answer.sources_used]
    reply = render_reply(answer.model_copy(update={"sources_used": swapped}), clock=CLOCK)
    assert reply.status is AnswerStatus.rejected and reply.sources == []
