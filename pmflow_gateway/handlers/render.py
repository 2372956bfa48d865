"""Render stage: AnswerReady -> ReplyRendered, the text the user sees.

Only an `answered` reply lists sources, and only those of its own execution.
"""

from __future__ import annotations

from pmflow_gateway.handlers.ports import Clock
from pmflow_gateway.schemas import AnswerReady, AnswerStatus, ReplyRendered, stage_event_id


def render_text(answer: AnswerReady) -> str:
    en = answer.context.locale.lower().startswith("en")
    if answer.status is not AnswerStatus.answered:
        return answer.answer
    head, summary = ("External real-time query:", "Sources:") if en else ("外部实时查询：", "来源摘要：")
    lines = [head, answer.answer, "", summary]
    lines += [f"[{s.n}] {s.title} — {s.site} — {s.url}" for s in answer.sources_used]
    return "\n".join(lines)


def render_reply(answer: AnswerReady, *, clock: Clock) -> ReplyRendered:
    sources = answer.sources_used if answer.status is AnswerStatus.answered else []
    return ReplyRendered(
        event_id=stage_event_id(answer.question_id, "render"),
        question_id=answer.question_id,
        tenant_id=answer.tenant_id,
        occurred_at=clock.now(),
        answer_event_id=answer.event_id,
        status=answer.status,
        locale=answer.context.locale,
        thread_id=answer.context.thread_id,
        text=render_text(answer),
        sources=sources,
    )
