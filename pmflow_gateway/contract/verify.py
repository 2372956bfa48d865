"""The verifiers of the source contract: the evidence before composing, the draft and its
sources summary after, and the upstream-quote check.

Fail-closed throughout: what survives is only external http(s) evidence of this execution;
when nothing survives the list is empty, never the upstream sources.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pmflow_gateway.contract.agreement import disagreement
from pmflow_gateway.contract.judged import Judged
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.places import is_lower_case_state
from pmflow_gateway.contract.qualifiers import clash, period_ended, year_asked
from pmflow_gateway.contract.relevance import (
    firm_readings,
    names_a_year,
    off_topic,
    place_readings,
    spelt_as_asked,
    subject_readings,
    timeless,
)
from pmflow_gateway.contract.scoring import FRESH_ENOUGH
from pmflow_gateway.contract.slots import Slot, asked_slot, fills, slot_reason
from pmflow_gateway.contract.sources import (
    EXTERNAL_SOURCE_TYPES,
    INTERNAL_BARE_LABELS,
    url_problem,
)
from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.text import (
    CJK,
    MAX_FIELD_CHARS,
    asked_text,
    carries_prompt_markup,
    contact_handles,
    folded,
    hosts_named,
    links,
    looks_like_instruction,
    mentions_internal,
    split_sentences,
)
from pmflow_gateway.contract.urls import (
    bare_host,
    host_of,
    host_within,
    registrable_domain,
    site_of,
    url_key,
)
from pmflow_gateway.ports import Draft
from pmflow_gateway.schemas import (
    EvidenceCollected,
    ExternalEvidence,
    ExternalQueryPlan,
    QueryKind,
    SourceUsed,
    Verdict,
)

SUPPORT_OVERLAP = 0.6  # share of a sentence's terms its cited evidence must carry
MIN_QUOTE_CHARS = 6  # shorter upstream snippets match by chance too often
# Spaces and punctuation do not make a quote another text: compared without them.
_NOT_QUOTED = re.compile(r"[\W_]+")
MARKER_RE = re.compile(r"[\[［【]\s*(?:\^\s*)?(\d+)\s*[\]］】]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def asked_about(event: EvidenceCollected) -> str:
    return asked_text(event.context.question, event.plan)


# ---------------------------------------------------------------- evidence verifier


def _item_problem(item: ExternalEvidence, event: EvidenceCollected,
                  upstream_urls: set[str]) -> str | None:
    """Why this item may not ground the answer, or None when it may."""
    if item.source_type not in EXTERNAL_SOURCE_TYPES:
        return f"not an external adapter source: {item.source_type}"
    if problem := url_problem(item.target_url):
        return problem
    run = item.raw_metadata.get("execution_id")
    if run is not None and run != event.bundle.execution_id:
        return f"from another execution: {str(run)[:40]}"
    if url_key(item.target_url) in upstream_urls:
        return "arrived with the route event (upstream source)"
    if quotes_of_upstream(f"{item.title} {item.snippet[:MAX_FIELD_CHARS]}", event):
        return "repeats an upstream snippet"
    label = folded(item.source_label[:MAX_FIELD_CHARS]).strip()
    asked = asked_about(event)
    title = item.title[:MAX_FIELD_CHARS]
    if label in INTERNAL_BARE_LABELS or mentions_internal(f"{label} {title}", asked=asked):
        return f"internal label: {item.source_label[:40]}"
    return None


def verify_evidence(event: EvidenceCollected) -> tuple[list[ExternalEvidence], Verdict]:
    """The source contract and the freshness contract, before any answer is written.

    With `freshness_required`, stale items are dropped and at least one must be fresh.
    `requires_multi_source` is a wish, not a gate: with fewer than two distinct sites, or
    sites whose key figures contradict each other, the answer still goes out, marked "only
    one source" or "sources disagree" (`multi_source_ok=False`), because one fresh external
    source beats a refusal, and the user is told.
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
    kept = about_asked(event.plan, kept, reasons)
    kept, freshness_ok = _fresh_only(event.plan, kept, reasons)
    kept = preferred_first(event.plan, kept)[: event.plan.result_limit]
    dropped = len(reasons)
    multi_ok = not event.plan.requires_multi_source or _sites_agree(event.plan, kept, reasons)
    return kept, Verdict(passed=bool(kept) and freshness_ok, kept=len(kept),
                         dropped=dropped, dropped_reasons=reasons,
                         freshness_ok=freshness_ok, multi_source_ok=multi_ok)


def _sites_agree(plan: ExternalQueryPlan, items: list[ExternalEvidence],
                 reasons: list[str]) -> bool:
    """Two independent sites, and none contradicting another on the key figures."""
    if len({site_of(i.target_url) for i in items}) < 2:
        return False
    why = disagreement(plan, [(site_of(i.target_url), evidence_text(i)) for i in items])
    if why:
        reasons.append(why)
    return why is None


def evidence_text(item: ExternalEvidence) -> str:
    return f"{item.title}\n{item.snippet}"


def about_asked(plan: ExternalQueryPlan, items: list[ExternalEvidence],
                reasons: list[str]) -> list[ExternalEvidence]:
    """The question contract: only evidence about the asked place, subject and day; each
    dropped item's reason is recorded."""
    kept = []
    for item in items:
        if why := off_topic(plan, evidence_text(item)):
            reasons.append(f"{why} ({bare_host(item.target_url)})")
        else:
            kept.append(item)
    # A name one slip away from the asked one counts only when no page spells it as asked:
    # "Halvoro" may be another company when "Halvora" is on the next page.
    exact = [i for i in kept if spelt_as_asked(plan, evidence_text(i))]
    if exact and len(exact) < len(kept):
        reasons += [f"off-topic: names the subject only in another spelling "
                    f"({bare_host(i.target_url)})" for i in kept if i not in exact]
        return exact
    return kept


def preferred_first(plan: ExternalQueryPlan,
                    items: list[ExternalEvidence]) -> list[ExternalEvidence]:
    """The plan's preferred domains first, then by authority; the adapter's order otherwise."""
    return sorted(items, key=lambda i: (
        not host_within(host_of(i.target_url), plan.preferred_domains), -i.authority_score))


def ambiguous_place(plan: ExternalQueryPlan, question: str,
                    items: list[ExternalEvidence]) -> tuple[list[ExternalEvidence], list[str]]:
    """The evidence for the reading of the place the question names, or every reading
    the evidence gives when the question does not say which one (then nobody may guess)."""
    readings = place_readings(plan, [evidence_text(i) for i in items])
    if len(readings) < 2:
        return items, []
    chosen = [r for r in readings if _written_in(r, question)]
    if len(chosen) == 1:
        return [i for i in items if chosen[0] in evidence_text(i)], []
    return [], readings


def _written_in(reading: str, question: str) -> bool:
    """Whether the question writes this reading of the place: a Chinese one anywhere, a
    Latin one as a word ("OR" is Oregon, not the end of "tomorrow"), an abbreviation in its
    capitals ("Fennick, ME", not "me")."""
    if CJK.search(reading):  # 浙江 writes 浙江省
        return reading in question or (len(reading) > 2 and reading[:-1] in question
                                       and reading[-1] in "省市")
    flags = (0 if reading.isupper() and len(reading) <= 3
             and not is_lower_case_state(reading.lower()) else re.IGNORECASE)
    return re.search(rf"(?<![A-Za-z]){re.escape(reading)}(?![A-Za-z])", question, flags) is not None


def ambiguous_subject(plan: ExternalQueryPlan,
                      items: list[ExternalEvidence]) -> tuple[list[ExternalEvidence],
                                                              tuple[str, str] | None]:
    """The evidence, or none and (word, company) when it reads the asked subject both as the
    everyday word and as the company and the question does not say which."""
    readings = subject_readings(plan, [evidence_text(i) for i in items])
    return ([], readings) if readings else (items, None)


def ambiguous_firm(plan: ExternalQueryPlan, question: str,
                   items: list[ExternalEvidence]) -> tuple[list[ExternalEvidence],
                                                           tuple[str, list[str]] | None]:
    """The evidence, or none and (name, firms) when it reads a bare asked name as several
    firms and the question does not say which (`firm_readings`)."""
    found = firm_readings(plan, (evidence_text(i) for i in items))
    if found is None or any(f.casefold() in question.casefold() for f in found[1]):
        return items, None
    return [], found


# ---------------------------------------------------------------- supported sentences


def unsupported(draft: Draft, items: list[ExternalEvidence],
                plan: ExternalQueryPlan) -> list[str]:
    """Cited sentences that the evidence they cite does not carry, or whose evidence is not
    about what was asked. Every number of a sentence must be in its cited evidence, and most
    of its words."""
    problems: list[str] = []
    memo: dict[int, _Cited] = {}  # per cited item: most sentences cite the same few
    for text, numbers in cited_pieces(draft.answer):
        cited = [n for n in numbers if 1 <= n <= len(items)]
        if not cited or not text:
            continue
        for n in cited:
            if n not in memo:
                memo[n] = _cited(plan, items[n - 1])
        sources = [memo[n] for n in cited]
        if any(s.off_topic for s in sources):
            problems.append(f"cites evidence not about what was asked: {text[:60]}")
        elif not any(_supports(s, text) for s in sources):
            problems.append(f"sentence not supported by its evidence: {text[:60]}")
    return problems


def misses_the_question(draft: Draft, question: str, plan: ExternalQueryPlan) -> list[str]:
    """What a draft written by a model gets wrong about the question itself, whatever its
    support: no sentence carries the asked kind of value, or a sentence states another
    period, role, occasion or variant than the one asked."""
    wanted = f"{question} {plan.topic}"
    pieces = [text for text, _ in cited_pieces(draft.answer) if text]
    problems = [f"states another qualifier ({why}): {text[:60]}"
                for text in pieces if (why := clash(wanted, text))]
    slot = asked_slot(question)
    names = tuple(n for n in [plan.location_hint, *plan.subject_entities] if n)
    if (slot is not Slot.any and plan.query_kind is not QueryKind.weather and pieces
            and not any(fills(slot, text, names) for text in pieces)):
        problems.append(slot_reason(slot))
    return problems


class _Cited(NamedTuple):
    """What the support check needs of one cited item, worked out once per draft."""

    off_topic: str | None
    squashed: str
    terms: set[str]


def _cited(plan: ExternalQueryPlan, item: ExternalEvidence) -> _Cited:
    source = evidence_text(item)
    return _Cited(off_topic(plan, source), "".join(source.split()), terms(source))


def cited_pieces(answer: str) -> list[tuple[str, list[int]]]:
    """Each stretch of the answer with the markers right after it ("a[1][2] b[3]")."""
    pieces: list[tuple[str, list[int]]] = []
    for line in answer.splitlines():
        parts = MARKER_RE.split(line)
        text, numbers = parts[0], []
        for k in range(1, len(parts), 2):
            numbers.append(int(parts[k]))
            after = parts[k + 1]
            if not after.strip(" \t，。；,.;") and k + 2 < len(parts):
                continue  # the next marker cites the same stretch
            pieces.append((text.strip(), numbers))
            text, numbers = after, []
    return pieces


def _supports(source: _Cited, sentence: str) -> bool:
    if any(n not in source.squashed for n in _NUMBER.findall(sentence)):
        return False
    wanted = terms(sentence)
    return bool(wanted) and len(wanted & source.terms) / len(wanted) >= SUPPORT_OVERLAP


def _fresh_only(plan: ExternalQueryPlan, items: list[ExternalEvidence],
                reasons: list[str]) -> tuple[list[ExternalEvidence], bool]:
    """A fresh question is answered only from items its freshness rule accepts; an undated
    page only when no dated one is left."""
    kept: list[ExternalEvidence] = []
    for item in items:
        if problem := freshness_problem(plan, item):
            reasons.append(problem)
        else:
            kept.append(item)
    dated = [i for i in kept if not _undated(i)]
    if dated and len(dated) < len(kept):
        reasons += ["undated: a dated page answers"] * (len(kept) - len(dated))
        kept = dated
    return kept, bool(kept)


def _undated(item: ExternalEvidence) -> bool:
    return item.freshness_score == 0 and not item.raw_metadata.get("published_at")


def freshness_problem(plan: ExternalQueryPlan, item: ExternalEvidence) -> str | None:
    """Why this item is too old (or undated) for the plan, or None.

    A fresh question needs items inside its kind's freshness window. A timeless question (no
    time, year or recency asked) may also rest on an undated page that ties nothing to a
    year, an encyclopedia's; a dated page must still be inside the window.
    """
    if not plan.freshness_required or item.freshness_score >= FRESH_ENOUGH:
        return None
    asked = f"{plan.topic} {plan.time_range_hint or ''}"
    if (not _undated(item) and plan.query_kind is not QueryKind.weather
            and period_ended(asked, item.retrieved_at.date())):
        # The figures of a period that is over do not change with time; "over" as of when
        # the item was retrieved, the moment its freshness score was taken.
        return None
    if (not _undated(item) and plan.query_kind is not QueryKind.weather
            and (year := year_asked(asked, item.retrieved_at.date())) is not None
            and str(year) in evidence_text(item)):
        return None  # "last year's revenue" from a page that names that year
    if _undated(item):
        if timeless(plan) and not names_a_year(evidence_text(item)):
            return None
        return "undated: no publication date"
    return f"stale: {item.freshness_score:.2f} < {FRESH_ENOUGH}"


# ---------------------------------------------------------------- answer verifier


def cited_numbers(draft: Draft) -> list[int]:
    """Every citation of the draft, in order of first appearance in the answer."""
    numbers = [int(m) for m in MARKER_RE.findall(draft.answer)] + list(draft.cited)
    return list(dict.fromkeys(numbers))


def _url_allowed(found: str, urls: list[str]) -> bool:
    found = found.rstrip(".,;:!?)]}>'\"，。；：！？）】")
    if "://" in found:
        key = url_key(found)
        return key is not None and key in {url_key(url) for url in urls}
    host = found.split("/", 1)[0].lower().removeprefix("www.")
    hosts = {bare_host(url) for url in urls}
    return "/" not in found.rstrip("/") and host in hosts


def verify_draft(draft: Draft, urls: list[str], *, asked: str = "") -> list[str]:
    """Every way the draft breaks the source contract, citing the evidence at `urls` (`[1]` the
    first); empty when it may go out. The answer stage checks the draft, the render stage the
    same text again: worked out once where both run in one process."""
    cited = cited_numbers(draft)
    return list(_DRAFTS.get((draft.answer, asked, str(cited), *urls),
                            lambda: _draft_violations(draft.answer, cited, urls, asked)))


_DRAFTS: Judged[tuple[str, ...]] = Judged(maxsize=4096)


def _draft_violations(answer: str, cited: list[int], urls: list[str],
                      asked: str) -> tuple[str, ...]:
    violations: list[str] = []
    if not answer.strip():
        violations.append("empty answer")
    if not MARKER_RE.search(answer):
        violations.append("answer carries no citation")
    for n in cited:
        if not 1 <= n <= len(urls):
            violations.append(f"citation [{n}] does not resolve to evidence of this execution")
    # Also with markers removed: "evil[1].com" is a link once the marker is read past.
    for text in (answer, folded(answer), MARKER_RE.sub("", folded(answer))):
        for match in links(text):
            if not _url_allowed(match.group(0), urls):
                violations.append(f"url not in evidence: {match.group(0)[:80]}")
    # A bare host, however spelled, may name only a site the answer cites.
    sites = {site_of(url) for url in urls}
    for host in hosts_named(MARKER_RE.sub("", answer)):
        if registrable_domain(host) not in sites and not any(host in v for v in violations):
            violations.append(f"url not in evidence: {host[:80]}")
    if contact_handles(answer):
        violations.append("answer carries a contact handle or phone number")
    if mentions_internal(answer, asked=asked):
        violations.append("answer names an internal source")
    if looks_like_instruction(answer):
        violations.append("answer carries instruction-like text")
    if carries_prompt_markup(answer):
        violations.append("answer carries the prompt's evidence markup")
    return tuple(dict.fromkeys(violations))


def verify_sources(sources: list[SourceUsed], urls: list[str], *, asked: str = "") -> list[str]:
    """The sources summary: only the external http(s) URLs of this execution's evidence
    (`urls`), no internal label."""
    keys = {key for url in urls if (key := url_key(url))}
    violations = [f"source not in this execution: {s.url[:80]}" for s in sources
                  if url_key(s.url) not in keys or url_problem(s.url)]
    violations += [f"source names an internal source: {s.title[:40]}" for s in sources
                   if mentions_internal(f"{s.title} {s.site}", asked=asked)]
    return violations


def quotes_of_upstream(answer: str, event: EvidenceCollected) -> list[str]:
    """The answer never rests on what upstream attached (workspace history and the like),
    even when a composer somehow saw it: neither the whole snippet nor any one sentence of
    it, however citation markers and spaces were put between its words."""
    if not event.context.upstream_sources:
        return []
    text = _quotable(answer)
    return [f"answer quotes an upstream source: {s.source_type or 'unknown'}"
            for s in event.context.upstream_sources
            if any(quote in text for quote in _upstream_quotes(s.snippet))]


def _quotable(text: str) -> str:
    return _NOT_QUOTED.sub("", MARKER_RE.sub("", folded(text)))


@cached_if_short(maxsize=1024)
def _upstream_quotes(snippet: str) -> tuple[str, ...]:
    """The snippet and each of its sentences, in the form `_quotable` compares: worked out
    once, not once for each item and again for the answer."""
    quotes = {_quotable(part) for part in [snippet, *split_sentences(snippet[:MAX_FIELD_CHARS])]}
    return tuple(q for q in quotes if len(q) >= MIN_QUOTE_CHARS)


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
