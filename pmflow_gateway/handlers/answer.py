"""Verify + compose stage: EvidenceCollected -> AnswerReady.

1. The verifier keeps only external http(s) evidence of this execution (fail-closed: an
   empty result stays empty; upstream sources never come back) and checks freshness.
2. The composer writes the answer only from what was kept.
3. The answer verifier checks the draft again; any violation rejects it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pmflow_gateway.handlers.ports import Clock
from pmflow_gateway.handlers.scoring import FRESH_ENOUGH
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerReady,
    AnswerStatus,
    Citation,
    EvidenceCollected,
    ExternalEvidence,
    SourceUsed,
    Verdict,
    stage_event_id,
)

EXTERNAL_SOURCE_TYPES = frozenset({"url", "mcp_search", "live_search"})
INTERNAL_LABELS = ("feishu", "飞书", "pmflow record", "pmflow_record", "internal doc", "内部文档",
                   "群聊记录", "doc history")
_URL_RE = re.compile(r"https?://[^\s)\]>'\"，。]+", re.IGNORECASE)
_MARKER_RE = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True, kw_only=True)
class Draft:
    answer: str
    cited: list[int] = field(default_factory=list)
    composer: str = "extractive"


def is_english(locale: str) -> bool:
    return locale.lower().startswith("en")


def verify_evidence(event: EvidenceCollected) -> tuple[list[ExternalEvidence], Verdict]:
    """The source contract and the freshness contract, before any answer is written."""
    kept: list[ExternalEvidence] = []
    reasons: list[str] = [f"upstream source dropped: {s.source_type or 'unknown'}"
                          for s in event.context.upstream_sources]
    for item in event.bundle.items:
        scheme = urlsplit(item.target_url).scheme.lower()
        if scheme not in ("http", "https"):
            reasons.append(f"not http(s): {item.target_url[:80]}")
        elif item.source_type not in EXTERNAL_SOURCE_TYPES:
            reasons.append(f"not an external adapter source: {item.source_type}")
        elif _mentions_internal(item.source_label):
            reasons.append(f"internal label: {item.source_label}")
        else:
            kept.append(item)
    freshness_ok = not event.plan.freshness_required or any(
        i.freshness_score >= FRESH_ENOUGH for i in kept)
    domains = {_site(i.target_url) for i in kept}
    multi_ok = not event.plan.requires_multi_source or len(domains) >= 2
    return kept, Verdict(
        passed=bool(kept) and freshness_ok,
        kept=len(kept),
        dropped=len(reasons),
        dropped_reasons=reasons,
        freshness_ok=freshness_ok,
        multi_source_ok=multi_ok,
    )


def compose_extractive(event: EvidenceCollected, items: list[ExternalEvidence]) -> Draft:
    """One sentence per item, the one that best carries the plan's terms, each with its marker."""
    plan = event.plan
    terms = [t.lower() for t in [*plan.subject_entities, plan.location_hint or "",
                                 plan.time_range_hint or ""] if t]
    lines: list[str] = []
    for n, item in enumerate(items, start=1):
        sentences = [s.strip() for s in re.split(r"(?<=[。！？.!?])\s*", item.snippet) if s.strip()]
        if not sentences:
            continue
        best = max(sentences, key=lambda s: sum(t in s.lower() for t in terms))
        best = _URL_RE.sub("", best).strip()
        lines.append(f"{best} [{n}]")
    return Draft(answer="\n".join(lines), cited=list(range(1, len(items) + 1)))


def verify_draft(draft: Draft, items: list[ExternalEvidence]) -> list[str]:
    """Every way the draft breaks the source contract; empty when it may go out."""
    violations: list[str] = []
    if not draft.answer.strip():
        violations.append("empty answer")
    for n in {int(m) for m in _MARKER_RE.findall(draft.answer)} | set(draft.cited):
        if not 1 <= n <= len(items):
            violations.append(f"citation [{n}] does not resolve to evidence of this execution")
    allowed = {i.target_url.rstrip("/") for i in items}
    for url in _URL_RE.findall(draft.answer):
        if url.rstrip("/.,") not in allowed:
            violations.append(f"url not in evidence: {url[:80]}")
    if _mentions_internal(draft.answer):
        violations.append("answer cites an internal source")
    return violations


def status_text(status: AnswerStatus, locale: str, *, missing: str | None = None) -> str:
    """The user-facing text of every status that is not an answer."""
    en = is_english(locale)
    if status is AnswerStatus.clarify:
        what = missing or ("what exactly to look up" if en else "要查询的具体对象")
        return (f"Could you tell me more? Missing: {what}." if en
                else f"需要补充信息才能查询：{what}。")
    if status is AnswerStatus.freshness_guard:
        return ("No reliable real-time external data was found for this question, so no "
                "answer is given." if en else "当前未找到可靠的实时外部数据，暂不作答。")
    if status is AnswerStatus.rejected:
        return ("The answer failed source verification and was withheld." if en
                else "回答未通过来源校验，已拦截。")
    return ("The external query failed; please try again later." if en
            else "外部查询失败，请稍后再试。")


async def verify_and_compose(event: EvidenceCollected, *, clock: Clock) -> AnswerReady:
    started = time.perf_counter()
    kept, verdict = verify_evidence(event)
    draft: Draft | None = None
    reason: str | None = None
    if event.plan.answer_contract is AnswerContract.clarify:
        status, reason = AnswerStatus.clarify, "plan needs clarification"
    elif not kept:
        status, reason = AnswerStatus.freshness_guard, "no external grounding"
    elif not verdict.freshness_ok:
        status, reason = AnswerStatus.freshness_guard, "no evidence inside the freshness window"
    else:
        draft = compose_extractive(event, kept)
        violations = verify_draft(draft, kept)
        verdict = verdict.model_copy(update={"violations": violations,
                                             "passed": not violations})
        if violations:
            status, reason, draft = AnswerStatus.rejected, "; ".join(violations), None
        else:
            status = AnswerStatus.answered
    citations, sources = _citations(draft, kept) if draft else ([], [])
    missing = None
    if status is AnswerStatus.clarify and event.plan.query_kind == "weather":
        missing = "location" if is_english(event.context.locale) else "地点（哪个城市）"
    timings = {**event.context.stage_timings_ms,
               "answer": round((time.perf_counter() - started) * 1000, 3)}
    return AnswerReady(
        event_id=stage_event_id(event.question_id, "answer"),
        question_id=event.question_id,
        tenant_id=event.tenant_id,
        occurred_at=clock.now(),
        context=event.context.model_copy(update={"stage_timings_ms": timings,
                                                 "upstream_sources": []}),
        status=status,
        answer=draft.answer if draft else status_text(status, event.context.locale,
                                                      missing=missing),
        reason=reason,
        citations=citations,
        sources_used=sources,
        execution_id=event.bundle.execution_id,
        plan=event.plan,
        planner=event.planner,
        verdict=verdict,
        attempts=event.attempts,
        composer=draft.composer if draft else "none",
    )


def _citations(draft: Draft, items: list[ExternalEvidence]) -> tuple[list[Citation], list[SourceUsed]]:
    cited = sorted({n for n in draft.cited if 1 <= n <= len(items)})
    citations = [Citation(n=n, target_url=items[n - 1].target_url, title=items[n - 1].title)
                 for n in cited]
    sources = [SourceUsed(n=n, title=items[n - 1].title, site=_site(items[n - 1].target_url),
                          url=items[n - 1].target_url) for n in cited]
    return citations, sources


def _site(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().removeprefix("www.")


def _mentions_internal(text: str) -> bool:
    lower = text.lower()
    return any(label in lower for label in INTERNAL_LABELS)
