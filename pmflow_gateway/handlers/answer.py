"""Verify + compose stage: EvidenceCollected -> AnswerReady.

1. The evidence verifier keeps only external http(s) evidence of this execution (fail-closed:
   an empty result stays empty; upstream sources never come back) and checks freshness and
   the multi-source wish.
2. A composer (extractive by default, a model when configured) writes the answer only from
   what was kept.
3. The answer verifier checks the draft again; any violation rejects it and nothing goes out.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from pmflow_gateway.handlers.compose import (
    EXTRACTIVE,
    URL_RE,
    asked_text,
    clean_sentences,
    folded,
    looks_like_instruction,
    mentions_internal,
    strip_invisible,
)
from pmflow_gateway.handlers.evidence import canonical_url
from pmflow_gateway.handlers.scoring import FRESH_ENOUGH
from pmflow_gateway.ports import Clock, Composer, Draft
from pmflow_gateway.schemas import (
    AnswerContract,
    AnswerReady,
    AnswerStatus,
    Citation,
    EvidenceCollected,
    ExternalEvidence,
    ExternalQueryPlan,
    QueryKind,
    SourceUsed,
    Verdict,
    stage_event_id,
)

__all__ = [
    "EXTERNAL_SOURCE_TYPES", "is_english", "missing_detail", "registrable_domain",
    "site_of", "source_title", "status_text", "url_key", "verify_and_compose", "verify_draft",
    "verify_evidence", "verify_sources",
]

EXTERNAL_SOURCE_TYPES = frozenset({"url", "mcp_search", "live_search"})
# A source labelled only this is an internal one.
_WHITESPACE = re.compile(r"\s")
INTERNAL_BARE_LABELS = frozenset({"doc", "docs", "system", "internal", "history", "内部"})
# Workspace hosts: a link there is an internal document even when it travels as a URL.
INTERNAL_DOMAINS = frozenset({"feishu.cn", "feishu.net", "larksuite.com", "larkoffice.com",
                              "feishucdn.com"})
# Second-level public suffixes common in our traffic; enough for "distinct site" counting.
_MULTI_PART_SUFFIXES = frozenset({
    "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn", "ac.cn", "co.uk", "org.uk", "ac.uk",
    "gov.uk", "me.uk", "com.au", "net.au", "org.au", "gov.au", "edu.au", "co.jp", "ne.jp",
    "or.jp", "ac.jp", "go.jp", "com.hk", "org.hk", "gov.hk", "com.tw", "org.tw", "gov.tw",
    "co.nz", "com.sg", "gov.sg", "co.kr", "or.kr", "com.br", "co.in", "co.za", "com.mx",
})
MAX_URL_CHARS = 2048
MIN_QUOTE_CHARS = 6  # shorter upstream snippets match by chance too often
MARKER_RE = re.compile(r"[\[［【]\s*\^?\s*(\d+)\s*[\]］】]")


def is_english(locale: str) -> bool:
    return locale.lower().startswith("en")


def url_key(url: str) -> str | None:
    """`canonical_url`, or None when the URL cannot even be parsed (it then matches nothing)."""
    try:
        return canonical_url(url)
    except ValueError:
        return None


@functools.lru_cache(maxsize=8192)  # pure, asked many times per question
def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def site_of(url: str) -> str:
    return host_of(url).removeprefix("www.")


def registrable_domain(host: str) -> str:
    """eTLD+1, approximately: `news.bbc.co.uk` -> `bbc.co.uk`,
    `a.weather.com.cn` -> `weather.com.cn`; good enough to count distinct sites."""
    labels = host.lower().strip(".").split(".")
    if len(labels) <= 2 or all(label.isdigit() for label in labels):
        return ".".join(labels)
    keep = 3 if ".".join(labels[-2:]) in _MULTI_PART_SUFFIXES else 2
    return ".".join(labels[-keep:])


def asked_about(event: EvidenceCollected) -> str:
    return asked_text(event.context.question, event.plan)


# ---------------------------------------------------------------- evidence verifier


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"unparseable url: {url[:80]!r}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"not http(s): {url[:80]!r}"
    if not parts.hostname or parts.username or parts.password:
        return f"no plain host: {url[:80]!r}"
    if len(url) > MAX_URL_CHARS or strip_invisible(url) != url or _WHITESPACE.search(url):
        return f"malformed url: {url[:80]!r}"
    if registrable_domain(parts.hostname) in INTERNAL_DOMAINS:
        return f"internal workspace host: {parts.hostname}"
    return None


def _item_problem(item: ExternalEvidence, event: EvidenceCollected,
                  upstream_urls: set[str]) -> str | None:
    """Why this item may not ground the answer, or None when it may."""
    if item.source_type not in EXTERNAL_SOURCE_TYPES:
        return f"not an external adapter source: {item.source_type}"
    if problem := _url_problem(item.target_url):
        return problem
    run = item.raw_metadata.get("execution_id")
    if run is not None and run != event.bundle.execution_id:
        return f"from another execution: {str(run)[:40]}"
    if url_key(item.target_url) in upstream_urls:
        return "arrived with the route event (upstream source)"
    label = folded(item.source_label).strip()
    asked = asked_about(event)
    if label in INTERNAL_BARE_LABELS or mentions_internal(f"{label} {item.title}", asked=asked):
        return f"internal label: {item.source_label[:40]}"
    return None


def verify_evidence(event: EvidenceCollected) -> tuple[list[ExternalEvidence], Verdict]:
    """The source contract and the freshness contract, before any answer is written.

    Fail-closed: what survives is only external http(s) evidence of this execution; when
    nothing survives, the list is empty (never the upstream sources). With
    `freshness_required`, stale items are dropped and at least one must be fresh.

    `requires_multi_source` is a wish, not a gate: with fewer than two distinct registrable
    domains the answer still goes out, marked "only one source" (`multi_source_ok=False`),
    because one fresh external source beats a refusal, and the user is told.
    """
    upstream_urls = {key for s in event.context.upstream_sources
                     if s.target_url and (key := url_key(s.target_url))}
    reasons = [f"upstream source dropped: {s.source_type or 'unknown'}"
               for s in event.context.upstream_sources]
    kept: list[ExternalEvidence] = []
    seen: set[str | None] = set()
    for item in event.bundle.items:
        problem = _item_problem(item, event, upstream_urls)
        if problem is None and url_key(item.target_url) in seen:
            problem = "duplicate url"
        if problem:
            reasons.append(problem)
            continue
        seen.add(url_key(item.target_url))
        kept.append(item)
    kept, freshness_ok = _fresh_only(event.plan, kept, reasons)
    kept = kept[: event.plan.result_limit]
    domains = {registrable_domain(host_of(i.target_url)) for i in kept}
    multi_ok = not event.plan.requires_multi_source or len(domains) >= 2
    return kept, Verdict(passed=bool(kept) and freshness_ok, kept=len(kept),
                         dropped=len(reasons), dropped_reasons=reasons,
                         freshness_ok=freshness_ok, multi_source_ok=multi_ok)


def _fresh_only(plan: ExternalQueryPlan, items: list[ExternalEvidence],
                reasons: list[str]) -> tuple[list[ExternalEvidence], bool]:
    """A fresh question is answered only from items inside its kind's freshness window."""
    if not plan.freshness_required:
        return items, True
    fresh = [i for i in items if i.freshness_score >= FRESH_ENOUGH]
    reasons += [("undated: no publication date"
                 if i.freshness_score == 0 and not i.raw_metadata.get("published_at")
                 else f"stale: {i.freshness_score:.2f} < {FRESH_ENOUGH}")
                for i in items if i.freshness_score < FRESH_ENOUGH]
    return fresh, bool(fresh)


# ---------------------------------------------------------------- answer verifier


def cited_numbers(draft: Draft) -> list[int]:
    """Every citation of the draft, in order of first appearance in the answer."""
    numbers = [int(m) for m in MARKER_RE.findall(draft.answer)] + list(draft.cited)
    return list(dict.fromkeys(numbers))


def _url_allowed(found: str, items: list[ExternalEvidence]) -> bool:
    found = found.rstrip(".,;:!?)]}>'\"，。；：！？）】")
    if "://" in found:
        key = url_key(found)
        return key is not None and key in {url_key(i.target_url) for i in items}
    host = found.split("/", 1)[0].lower().removeprefix("www.")
    hosts = {site_of(i.target_url) for i in items}
    return "/" not in found.rstrip("/") and host in hosts


def verify_draft(draft: Draft, items: list[ExternalEvidence], *, asked: str = "") -> list[str]:
    """Every way the draft breaks the source contract; empty when it may go out."""
    violations: list[str] = []
    if not draft.answer.strip():
        violations.append("empty answer")
    if not MARKER_RE.search(draft.answer):
        violations.append("answer carries no citation")
    for n in cited_numbers(draft):
        if not 1 <= n <= len(items):
            violations.append(f"citation [{n}] does not resolve to evidence of this execution")
    # Also with markers removed: "evil[1].com" is a link once the marker is read past.
    for text in (draft.answer, folded(draft.answer), MARKER_RE.sub("", folded(draft.answer))):
        for match in URL_RE.finditer(text):
            if not _url_allowed(match.group(0), items):
                violations.append(f"url not in evidence: {match.group(0)[:80]}")
    if mentions_internal(draft.answer, asked=asked):
        violations.append("answer names an internal source")
    if looks_like_instruction(draft.answer):
        violations.append("answer carries instruction-like text")
    return list(dict.fromkeys(violations))


def verify_sources(sources: list[SourceUsed], items: list[ExternalEvidence], *,
                   asked: str = "") -> list[str]:
    """The sources summary: only this execution's external http(s) URLs, no internal label."""
    urls = {key for i in items if (key := url_key(i.target_url))}
    violations = [f"source not in this execution: {s.url[:80]}" for s in sources
                  if url_key(s.url) not in urls or _url_problem(s.url)]
    violations += [f"source names an internal source: {s.title[:40]}" for s in sources
                   if mentions_internal(f"{s.title} {s.site}", asked=asked)]
    return violations


def quotes_of_upstream(answer: str, event: EvidenceCollected) -> list[str]:
    """Rule 3 of the source contract: the answer never rests on what upstream attached
    (Feishu history and the like), even when a composer somehow saw it."""
    text = folded(answer)
    return [f"answer quotes an upstream source: {s.source_type or 'unknown'}"
            for s in event.context.upstream_sources
            if len(snippet := folded(s.snippet).strip()) >= MIN_QUOTE_CHARS and snippet in text]


def renumbered(draft: Draft, items: list[ExternalEvidence]) -> tuple[Draft, list[ExternalEvidence]]:
    """Cited items numbered 1..k in order of use, so the summary has no gaps. A draft with a
    citation that does not resolve is returned as is, for the verifier to reject."""
    order = cited_numbers(draft)
    if any(not 1 <= n <= len(items) for n in order):
        return draft, items
    new = {old: new for new, old in enumerate(order, start=1)}
    answer = MARKER_RE.sub(lambda m: f"[{new[int(m.group(1))]}]", draft.answer)
    return (Draft(answer=answer, cited=list(new.values()), composer=draft.composer,
                  note=draft.note), [items[n - 1] for n in order])


# ---------------------------------------------------------------- statuses


def missing_detail(plan: ExternalQueryPlan, english: bool) -> str:
    """What a clarify reply asks for."""
    if plan.query_kind is QueryKind.weather and not plan.location_hint:
        return "the place (which city)" if english else "地点（哪个城市）"
    if plan.query_kind is QueryKind.market and not plan.subject_entities:
        return "which stock, index or currency" if english else "要查询的标的（股票、指数或币种）"
    if plan.answer_contract is AnswerContract.compare_with_sources:
        return "the things to compare" if english else "要比较的对象"
    return "what exactly to look up" if english else "要查询的具体对象"


def status_text(status: AnswerStatus, locale: str, *, missing: str | None = None,
                stale: bool = False, undated: bool = False) -> str:
    """The user-facing text of every status that is not an answer."""
    en = is_english(locale)
    if status is AnswerStatus.clarify:
        what = missing or ("what exactly to look up" if en else "要查询的具体对象")
        return (f"I need one more detail to look this up: {what}." if en
                else f"需要补充信息才能查询：{what}。")
    if status is AnswerStatus.freshness_guard:
        if en:
            tail = (" (what was found is out of date)" if stale
                    else " (what was found is undated)" if undated else "")
            return (f"No reliable real-time external data was found{tail}, so no answer is "
                    "given rather than a guess.")
        tail = ("（找到的资料已超出时效）" if stale
                else "（找到的资料均未注明日期）" if undated else "")
        return f"当前未找到可靠的实时外部数据{tail}，为避免误导，暂不作答。"
    if status is AnswerStatus.rejected:
        return ("The answer did not pass source verification and was withheld." if en
                else "回答未通过来源校验，已拦截，未予发送。")
    return ("The external query failed; please try again later." if en
            else "外部查询失败，请稍后再试。")


def single_source_note(locale: str) -> str:
    return ("(Only one source was found; this could not be cross-checked.)"
            if is_english(locale) else "（仅找到一个来源，未能多来源交叉验证。）")


# ---------------------------------------------------------------- the stage

MIN_COMPOSE_S = 0.2  # below this a model call cannot finish: compose extractively


@dataclass(frozen=True, kw_only=True)
class Outcome:
    status: AnswerStatus
    answer: str
    verdict: Verdict
    reason: str | None = None
    items: tuple[ExternalEvidence, ...] = ()
    composer: str = "none"


async def decide(event: EvidenceCollected, *, clock: Clock, composer: Composer) -> Outcome:
    """Verify the evidence, compose, verify the draft: the status and what may go out."""
    kept, verdict = verify_evidence(event)
    locale = event.context.locale
    if event.plan.answer_contract is AnswerContract.clarify:
        missing = missing_detail(event.plan, is_english(locale))
        return Outcome(status=AnswerStatus.clarify, verdict=verdict.model_copy(
            update={"passed": False}), reason=f"plan needs clarification: {missing}",
            answer=status_text(AnswerStatus.clarify, locale, missing=missing))
    if not kept:
        stale = any(r.startswith("stale") for r in verdict.dropped_reasons)
        undated = not stale and any(r.startswith("undated") for r in verdict.dropped_reasons)
        reason = ("no evidence inside the freshness window" if stale
                  else "no dated evidence" if undated else "no external grounding")
        return Outcome(status=AnswerStatus.freshness_guard, verdict=verdict, reason=reason,
                       answer=status_text(AnswerStatus.freshness_guard, locale, stale=stale,
                                          undated=undated))
    left_s = (event.context.deadline_at - clock.now()).total_seconds()
    try:
        draft = await (composer if left_s >= MIN_COMPOSE_S else EXTRACTIVE).compose(
            event.context.question, event.plan, kept, timeout_s=max(left_s, MIN_COMPOSE_S))
    # A composer bug must end the question with a clear status, not a redelivery loop.
    except Exception as exc:
        return Outcome(status=AnswerStatus.failed, verdict=verdict.model_copy(
            update={"passed": False}), reason=f"composer failed: {type(exc).__name__}",
            answer=status_text(AnswerStatus.failed, locale))
    if not draft.answer.strip():
        # Evidence came back but every sentence was planted text or off-limits: nothing
        # reliable to say, which is the guard's message, not a contract violation.
        return Outcome(status=AnswerStatus.freshness_guard, verdict=verdict.model_copy(
            update={"passed": False}), reason="no usable sentence in the external evidence",
            answer=status_text(AnswerStatus.freshness_guard, locale))
    return _checked(event, draft, kept, verdict)


def _checked(event: EvidenceCollected, draft: Draft, kept: list[ExternalEvidence],
             verdict: Verdict) -> Outcome:
    locale = event.context.locale
    if not verdict.multi_source_ok and draft.answer.strip():
        draft = Draft(answer=f"{draft.answer}\n{single_source_note(locale)}", cited=draft.cited,
                      composer=draft.composer, note=draft.note)
    draft, used = renumbered(draft, kept)
    asked = asked_about(event)
    violations = verify_draft(draft, used, asked=asked)
    violations += verify_sources(_sources(used), used, asked=asked)
    violations += quotes_of_upstream(draft.answer, event)
    if violations:
        return Outcome(status=AnswerStatus.rejected, reason="; ".join(violations)[:1000],
                       verdict=verdict.model_copy(update={"passed": False,
                                                          "violations": violations}),
                       answer=status_text(AnswerStatus.rejected, locale), composer=draft.composer)
    return Outcome(status=AnswerStatus.answered, answer=draft.answer, reason=draft.note,
                   verdict=verdict.model_copy(update={"passed": True, "violations": []}),
                   items=tuple(used), composer=draft.composer)


def _sources(items: list[ExternalEvidence]) -> list[SourceUsed]:
    return [SourceUsed(n=n, title=source_title(i), site=site_of(i.target_url), url=i.target_url)
            for n, i in enumerate(items, start=1)]


def source_title(item: ExternalEvidence) -> str:
    """A title fit for one line of the summary. A title is page text too, so it is cleaned
    like a snippet (no link, marker, tag or planted instruction); the site stands in for it
    when nothing is left."""
    return " ".join(clean_sentences(item.title))[:120] or site_of(item.target_url)


async def verify_and_compose(event: EvidenceCollected, *, clock: Clock,
                             composer: Composer = EXTRACTIVE) -> AnswerReady:
    started = time.perf_counter()
    outcome = await decide(event, clock=clock, composer=composer)
    items = list(outcome.items)
    timings = {**event.context.stage_timings_ms,
               "answer": round((time.perf_counter() - started) * 1000, 3)}
    return AnswerReady(
        event_id=stage_event_id(event.tenant_id, event.question_id, "answer"),
        question_id=event.question_id,
        tenant_id=event.tenant_id,
        occurred_at=clock.now(),
        # Upstream sources are dropped here for good, so no later stage can bring them back.
        context=event.context.model_copy(update={"stage_timings_ms": timings,
                                                 "upstream_sources": []}),
        status=outcome.status,
        answer=outcome.answer,
        reason=outcome.reason,
        citations=[Citation(n=s.n, target_url=s.url, title=s.title) for s in _sources(items)],
        sources_used=_sources(items),
        execution_id=event.bundle.execution_id,
        plan=event.plan,
        planner=event.planner,
        verdict=outcome.verdict,
        attempts=event.attempts,
        composer=outcome.composer,
    )
