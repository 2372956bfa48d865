"""Render stage: AnswerReady -> ReplyRendered, the text the user sees.

`外部实时查询：` + answer + `来源摘要：` with the numbered sources (title, site, URL) of the
answer's own execution; an English form for `en` locales. Guard, clarify, rejected and failed
replies carry no sources at all.

The renderer trusts nothing it did not check: an `answered` event whose sources or text break
the source contract (a replayed or hand-made event, a bug upstream) is rendered as rejected.
"""

from __future__ import annotations

from pmflow_gateway.contract.demo import demo_notice
from pmflow_gateway.contract.envelopes import header_after
from pmflow_gateway.contract.sources import source_title
from pmflow_gateway.contract.statuses import (
    NOTHING_ABOUT_IT,
    is_english,
    missing_detail,
    policy_text,
    reply_locale,
    status_text,
    which_one,
)
from pmflow_gateway.contract.text import asked_text, strip_invisible
from pmflow_gateway.contract.urls import bare_host, url_key
from pmflow_gateway.contract.verify import verify_draft, verify_sources
from pmflow_gateway.ports import Clock, Draft
from pmflow_gateway.schemas import (
    AnswerReady,
    AnswerStatus,
    ReplyRendered,
    SourceUsed,
)


def heads(locale: str) -> tuple[str, str]:
    return (("External real-time query:", "Sources:") if is_english(locale)
            else ("外部实时查询：", "来源摘要："))


def contract_violations(answer: AnswerReady) -> list[str]:
    """Re-check an answered event against its own citations before it reaches a user."""
    urls = [c.target_url for c in sorted(answer.citations, key=lambda c: c.n)]
    asked = asked_text(answer.context.question, answer.plan)
    violations = verify_draft(Draft(answer=answer.answer), urls, asked=asked)
    violations += verify_sources(answer.sources_used, urls, asked=asked)
    cited = [(c.n, url_key(c.target_url)) for c in answer.citations]
    listed = [(s.n, url_key(s.url)) for s in answer.sources_used]
    if sorted(cited) != sorted(listed) or sorted(n for n, _ in cited) != \
            list(range(1, len(cited) + 1)):
        violations.append("sources summary does not match the citations 1..k")
    if not answer.execution_id or not answer.sources_used:
        violations.append("answer without sources of an execution")
    return violations


def source_line(source: SourceUsed) -> str:
    title = " ".join(strip_invisible(source.title).split())
    return f"[{source.n}] {title} — {bare_host(source.url)} — {source.url}"


def non_answer_text(answer: AnswerReady) -> str:
    """Rebuilt from the status, never copied from the event: nothing else can ride along."""
    locale = reply_locale(answer.context.question, answer.context.locale)
    policy = answer.context.routing.policy
    held_back = answer.status in (AnswerStatus.refused, AnswerStatus.clarify)
    if held_back and policy is not None and (text := policy_text(policy.rule, locale)):
        return text
    english = is_english(locale)
    missing = which_one(answer.reason, english) or missing_detail(answer.plan, english)
    reason = answer.reason or ""
    return status_text(answer.status, locale, missing=missing,
                       stale="freshness window" in reason, undated=reason == "no dated evidence",
                       off_topic=NOTHING_ABOUT_IT in reason)


def render_text(answer: AnswerReady) -> str:
    locale = reply_locale(answer.context.question, answer.context.locale)
    head, summary = heads(locale)
    if answer.status is not AnswerStatus.answered:
        return f"{head}\n{non_answer_text(answer)}"
    notice = [demo_notice(english=is_english(locale))] if answer.demo else []
    lines = [head, *notice, strip_invisible(answer.answer).strip(), "", summary]
    lines += [source_line(s) for s in answer.sources_used]
    return "\n".join(lines)


def _retitled(source: SourceUsed) -> SourceUsed:
    """The source with its title cleaned as the answer stage cleans it: the same source when
    it was (a replayed or hand-made event may carry any title)."""
    title = source_title(source.title, source.url)
    return source if title == source.title else source.model_copy(update={"title": title})


def render_reply(answer: AnswerReady, *, clock: Clock) -> ReplyRendered:
    if answer.status is AnswerStatus.answered and contract_violations(answer):
        locale = reply_locale(answer.context.question, answer.context.locale)
        answer = answer.model_copy(update={
            "status": AnswerStatus.rejected, "sources_used": [], "citations": [],
            "answer": status_text(AnswerStatus.rejected, locale)})
    else:
        titled = [_retitled(s) for s in answer.sources_used]
        if any(t is not s for t, s in zip(titled, answer.sources_used, strict=True)):
            answer = answer.model_copy(update={"sources_used": titled})
    sources = answer.sources_used if answer.status is AnswerStatus.answered else []
    return ReplyRendered(
        **header_after(answer, "render", clock.now()),
        answer_event_id=answer.event_id,
        status=answer.status,
        locale=answer.context.locale,
        thread_id=answer.context.thread_id,
        text=render_text(answer),
        sources=sources,
    )

