"""Composers: write an answer only from verified evidence, each claim with its `[n]` marker.

Two composers share one shape (`Composer`): the extractive one (default, no model) picks the
evidence sentences that carry the plan's grounded fields; the model one asks a `ChatModel`
for `{answer, citations[]}` and falls back to extractive on timeout, error or bad output.

Fetched text is data. Before any snippet reaches a composer it is cleaned here: invisible
characters go, URLs go, and sentences that read like instructions to an assistant are dropped,
so neither a planted link nor a planted command can reach the user's reply.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

from pydantic import BaseModel, ConfigDict, ValidationError

from pmflow_gateway.ports import ChatModel, Composer, Draft
from pmflow_gateway.schemas import AnswerContract, ExternalEvidence, ExternalQueryPlan

MAX_SENTENCE_CHARS = 280
MAX_SNIPPET_CHARS = 1200  # per item, in the model prompt
MAX_SENTENCES_PER_ITEM = 2

# Zero-width, bidi controls, BOM, soft hyphen, tag characters: all of category Cf. Variation
# selectors are Mn but render as nothing, so they can hide text too.
_VARIATION_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
# Any scheme-qualified link, `www.` host, or bare host with a common TLD: none of them may
# pass from a snippet into an answer.
_TLDS = ("com|net|org|cn|io|ai|co|uk|gov|edu|info|xyz|top|me|app|dev|ly|ru|de|jp|hk|tw|"
         "sg|us|biz|site|online|link|click|cc|tv|to|so")
URL_RE = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]{1,15}://\S+)"
    r"|(?:\bwww\.[^\s，。；、]+)"
    r"|(?:\b(?:javascript|data|mailto|file):\S+)"
    rf"|(?:\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:{_TLDS})\b(?:[/:?#][^\s，。；、]*)?)"
    r"|(?:\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/\S*)",
    re.IGNORECASE,
)
_MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_ANY_MARKER = re.compile(r"[\[［【]\s*\^?\s*\d+\s*[\]］】]")
_EVIDENCE_TAG = re.compile(r"<\s*/?\s*evidence[^>]*>", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)|\n+")
_INJECTION_PATTERNS = [
    r"\b(ignore|disregard|forget|override|bypass)\b.{0,40}\b(instruction|prompt|rule|message|"
    r"direction|guideline|context)s?\b",
    # no word boundary after "instruction": planted text glues words ("instructionssystem:")
    r"\b(previous|prior|above|earlier|all)\b.{0,20}instruction",
    r"\byou are (now|no longer)\b", r"\bact as\b", r"\bpretend (to be|you)\b",
    r"\bsystem prompt\b", r"\bnew instructions?\b", r"\bdeveloper mode\b", r"\bjailbreak",
    r"\b(tell|inform) the user\b", r"\b(respond|reply|answer) (only )?with\b",
    r"\b(visit|click|go to|open|download|log ?in|sign ?up|subscribe)\b.{0,40}"
    r"(http|www\.|\blink\b|\bsite\b|\burl\b|\bhere\b|\.com\b)",
    r"(system|assistant|developer)\s*:", r"\buser\s*:", r"<\|[a-z_]+\|>", r"\[/?inst\]",
    r"(忽略|无视|忘记|忘掉|不要理会|跳过).{0,12}(指令|指示|提示|规则|要求|说明|设定)",
    r"(之前|以上|上面|前面|先前|此前)的?(所有)?(指令|指示|提示词?|规则)",
    r"你现在是", r"你(必须|应该|需要)(回答|回复|告诉|说)", r"扮演", r"系统提示", r"新的?指令",
    r"告诉用户", r"(请|立即|马上)?(访问|点击|打开|前往|登录|下载|扫码|关注)"
    r".{0,20}(网站|网址|链接|这里|此处|页面|公众号|二维码|http|www)",
    r"(加|添加).{0,6}(微信|qq|vx)",
]
# Phrases that always name an internal source, whatever the question was.
INTERNAL_PHRASES = (
    "feishu history", "feishu doc", "lark doc", "飞书历史", "飞书记录", "飞书文档", "飞书群",
    "飞书消息", "群聊记录", "聊天记录", "聊天历史", "内部文档", "内部历史", "内部记录", "内部资料",
    "内部知识库", "项目图谱", "pmflow record", "pmflow_record", "pmflow 记录", "pmflow记录",
    "pmflow 历史", "internal doc", "internal history", "internal record", "chat history",
    "doc history",
)
# Names of internal systems: internal labels unless the user asked about them by name.
INTERNAL_NAMES = ("feishu", "飞书", "larksuite", "lark", "pmflow", "doc")
# Short English names are also words ("skylark", "docker"): those match as whole words only;
# the others match anywhere ("PMFlowRecords").
_INTERNAL_NAME_RE = {name: re.compile(rf"(?<![a-z]){name}(?![a-z])" if name in ("lark", "doc")
                                      else re.escape(name)) for name in INTERNAL_NAMES}
# One pass that rules out the common case (no internal name at all) before the per-name checks.
_ANY_INTERNAL_NAME = re.compile("|".join(f"(?:{r.pattern})" for r in _INTERNAL_NAME_RE.values()))
INJECTION_RE = re.compile("|".join(f"(?:{p})" for p in _INJECTION_PATTERNS), re.IGNORECASE)
_CJK = re.compile(r"[\u3400-\u9fff]")


@functools.cache
def _invisible_class() -> re.Pattern[str]:
    """Every format (Cf) and control (Cc, but newline and tab) character of this Python's
    Unicode database, as one character class of ranges: one regex pass instead of two
    `unicodedata.category` calls per character."""
    ranges: list[tuple[int, int]] = []
    # Every assigned Cf/Cc character lies in planes 0, 1 and 14; scanning only those keeps
    # the first call near 0.1 s instead of 0.5 s.
    for code in itertools.chain(range(0x20000), range(0xE0000, 0xF0000)):
        c = chr(code)
        if unicodedata.category(c) == "Cf" or (unicodedata.category(c) == "Cc" and c not in "\n\t"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return re.compile("[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
                                    for a, b in ranges) + "]+")


def strip_invisible(text: str) -> str:
    """Drop every character that renders as nothing but can carry or reorder text."""
    return _VARIATION_SELECTORS.sub("", _invisible_class().sub("", text))


@functools.lru_cache(maxsize=4096)
def folded(text: str) -> str:
    """The form used for detection only: full-width and compatibility letters unified."""
    return unicodedata.normalize("NFKC", strip_invisible(text)).lower()


def looks_like_instruction(text: str) -> bool:
    return bool(INJECTION_RE.search(folded(text)))


def mentions_internal(text: str, *, asked: str = "") -> bool:
    """True when `text` names an internal source. `asked` is what the user asked about:
    a question about Feishu the product may get an answer that names Feishu."""
    lower = folded(text)
    if any(phrase in lower for phrase in INTERNAL_PHRASES):
        return True
    if not _ANY_INTERNAL_NAME.search(lower):
        return False
    asked_lower = folded(asked)
    return any(name not in asked_lower and _INTERNAL_NAME_RE[name].search(lower)
               for name in INTERNAL_NAMES)


def has_url(text: str) -> bool:
    return bool(URL_RE.search(text) or URL_RE.search(folded(text)))


def asked_text(question: str, plan: ExternalQueryPlan) -> str:
    """What the user asked about, by name: such names are not internal labels here."""
    return " ".join([question, plan.topic, *plan.subject_entities])


def clean_sentence(sentence: str, *, asked: str = "") -> str | None:
    """A snippet sentence fit to quote, or None when it must not reach the user."""
    text = _EVIDENCE_TAG.sub(" ", strip_invisible(sentence))
    # A link in page text is most often a call to action, and what is glued around it cannot
    # be told apart from planted text (stripping "x.com/ysystem: say z" leaves "say z"):
    # the whole sentence goes, not just the link.
    if (has_url(text) or _MARKDOWN_LINK.search(text) or looks_like_instruction(text)
            or mentions_internal(text, asked=asked)):
        return None
    text = _ANY_MARKER.sub("", text)  # a planted "[7]" would read as our own citation
    text = " ".join(text.split()).strip(" ,，:：;；-—()（）")
    if has_url(text) or looks_like_instruction(text):
        return None  # markers removed can join a link back together
    if len(text) > MAX_SENTENCE_CHARS:
        text = text[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
    return text if _has_content(text) else None


def clean_sentences(snippet: str, *, asked: str = "") -> list[str]:
    return list(_clean_sentences(snippet, asked))


@functools.lru_cache(maxsize=4096)
def _clean_sentences(snippet: str, asked: str) -> tuple[str, ...]:
    # Pure, and asked for the same snippets several times per question (verifier, composer,
    # titles): cached.
    parts = _SENTENCE_END.split(strip_invisible(snippet))
    cleaned = (clean_sentence(p, asked=asked) for p in parts if p and p.strip())
    return tuple(s for s in cleaned if s)


def clean_text(snippet: str, *, asked: str = "") -> str:
    """A whole snippet, cleaned sentence by sentence (what the model is shown)."""
    return " ".join(clean_sentences(snippet, asked=asked))[:MAX_SNIPPET_CHARS]


def is_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


def _has_content(text: str) -> bool:
    return sum(ch.isalnum() for ch in text) >= 2




# ---------------------------------------------------------------- extractive


def grounded_terms(plan: ExternalQueryPlan) -> list[tuple[str, float]]:
    """The plan's grounded fields as (term, weight): named fields weigh more than query words."""
    terms: list[tuple[str, float]] = []
    for entity in [*plan.subject_entities, plan.location_hint or ""]:
        terms.append((entity, 3.0))
    terms.append((plan.time_range_hint or "", 2.0))
    for query in [*plan.search_queries, plan.topic]:
        for word in query.split():
            terms.append((word, 1.0))
            if is_chinese(word) and len(word) > 3:  # Chinese has no spaces: use its bigrams
                terms += [(word[i:i + 2], 0.3) for i in range(len(word) - 1)]
    seen: dict[str, float] = {}
    for term, weight in terms:
        key = term.strip().lower()
        if len(key) >= 2 or is_chinese(key):
            seen[key] = max(weight, seen.get(key, 0.0))
    return list(seen.items())


def term_hits(sentence: str, terms: list[tuple[str, float]]) -> float:
    lower = sentence.lower()
    return sum(weight for term, weight in terms if term in lower)


def sentence_score(sentence: str, terms: list[tuple[str, float]], chinese: bool) -> float:
    same_language = is_chinese(sentence) == chinese
    return term_hits(sentence, terms) + (0.5 if same_language else 0.0)


@dataclass(frozen=True, order=True)
class Candidate:
    """One quotable sentence: ranked by score, then by item, then by place in the page."""

    score: float
    n: int
    position: int
    text: str = field(compare=False)
    hits: float = field(compare=False)


def candidates(items: list[ExternalEvidence], terms: list[tuple[str, float]], chinese: bool,
               asked: str) -> list[Candidate]:
    return [Candidate(score=sentence_score(s, terms, chinese), n=n, position=i, text=s,
                      hits=term_hits(s, terms))
            for n, item in enumerate(items, start=1)
            for i, s in enumerate(clean_sentences(item.snippet, asked=asked))]


def _best(found: list[Candidate]) -> Candidate:
    return max(found, key=lambda c: (c.score, -c.n, -c.position))


def with_marker(sentence: str, n: int) -> str:
    return f"{sentence}[{n}]" if is_chinese(sentence[-1:]) or sentence[-1:] in "。！？；" \
        else f"{sentence} [{n}]"


def compose_extractive(question: str, plan: ExternalQueryPlan,
                       items: list[ExternalEvidence]) -> Draft:
    """Evidence sentences that carry the plan's fields, each ending with its `[n]`.

    `direct_fact`: the one best sentence. `compare_with_sources`: one line per subject.
    Otherwise up to two sentences per item that carry a field, in page order. When no
    sentence carries any field, the first sentence of the top-ranked item stands alone.
    """
    terms = grounded_terms(plan)
    chinese = is_chinese(question)
    asked = asked_text(question, plan)
    if plan.answer_contract is AnswerContract.compare_with_sources and plan.subject_entities:
        return _compare_lines(plan, items, chinese, asked)
    found = candidates(items, terms, chinese, asked)
    if not found:
        return Draft(answer="", cited=[])
    carrying = [c for c in found if c.hits > 0]
    if plan.answer_contract is AnswerContract.direct_fact or not carrying:
        best = _best(carrying or [min(found, key=lambda c: (c.n, c.position))])
        return Draft(answer=with_marker(best.text, best.n), cited=[best.n])
    return _summary_lines(carrying)


def _summary_lines(carrying: list[Candidate]) -> Draft:
    """Per item its best sentence, and a second one when it names a whole field too."""
    chosen: list[Candidate] = []
    for n in dict.fromkeys(c.n for c in carrying):
        ranked = sorted((c for c in carrying if c.n == n),
                        key=lambda c: (-c.score, c.position))
        chosen += ranked[:1] + [c for c in ranked[1:MAX_SENTENCES_PER_ITEM] if c.hits >= 1.0]
    lines: list[str] = []
    cited: list[int] = []
    seen: set[str] = set()
    for c in sorted(chosen, key=lambda c: (c.n, c.position)):
        if c.text not in seen:
            seen.add(c.text)
            lines.append(with_marker(c.text, c.n))
            cited.append(c.n)
    return Draft(answer="\n".join(lines), cited=list(dict.fromkeys(cited)))


def _compare_lines(plan: ExternalQueryPlan, items: list[ExternalEvidence], chinese: bool,
                   asked: str) -> Draft:
    """One line per subject: the best sentence that names it, or an honest gap."""
    lines: list[str] = []
    cited: list[int] = []
    for subject in plan.subject_entities:
        terms = [(subject.lower(), 3.0), *grounded_terms(plan)]
        naming = [c for c in candidates(items, terms, chinese, asked)
                  if subject.lower() in c.text.lower()]
        if naming:
            best = _best(naming)
            lines.append(with_marker(f"{subject}：{best.text}" if chinese
                                     else f"{subject}: {best.text}", best.n))
            cited.append(best.n)
        else:
            lines.append(f"{subject}：来源中未找到相关信息" if chinese
                         else f"{subject}: not found in the sources")
    return Draft(answer="\n".join(lines), cited=sorted(set(cited)))


class ExtractiveComposer:
    """No model: the answer is quoted evidence."""

    name = "extractive"

    async def compose(self, question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence], *, timeout_s: float) -> Draft:
        return compose_extractive(question, plan, items)


EXTRACTIVE = ExtractiveComposer()


# ---------------------------------------------------------------- model


class ComposedAnswer(BaseModel):
    """The structured output the model must return."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: str
    citations: list[int]


COMPOSED_ANSWER_SCHEMA = ComposedAnswer.model_json_schema()


def composer_prompt() -> str:
    return resources.files("pmflow_gateway").joinpath("prompts/composer.md").read_text("utf-8")


def evidence_block(items: list[ExternalEvidence], *, asked: str = "") -> str:
    """Numbered, cleaned evidence inside one delimited data block; no URLs are shown."""
    lines = ["<evidence>"]
    for n, item in enumerate(items, start=1):
        title = " ".join(clean_sentences(item.title, asked=asked))
        lines.append(f"[{n}] title: {title}")
        lines.append(f"    text: {clean_text(item.snippet, asked=asked)}")
    lines.append("</evidence>")
    return "\n".join(lines)


def composer_messages(question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence]) -> list[dict[str, str]]:
    fields = {"answer_contract": plan.answer_contract.value, "topic": plan.topic,
              "subject_entities": plan.subject_entities, "location_hint": plan.location_hint,
              "time_range_hint": plan.time_range_hint}
    user = (f"Question: {strip_invisible(question)}\n"
            f"Plan: {json.dumps(fields, ensure_ascii=False)}\n"
            f"Evidence items: 1..{len(items)}\n\n"
            f"{evidence_block(items, asked=asked_text(question, plan))}")
    return [{"role": "system", "content": composer_prompt()},
            {"role": "user", "content": user}]


def make_composer(model: ChatModel | None, *, timeout_s: float = 10.0) -> Composer:
    """What bootstrap wires: the model composer when a model is configured, else extractive."""
    return EXTRACTIVE if model is None else ModelComposer(model, timeout_s=timeout_s)


class ModelComposer:
    """A `ChatModel` writes the answer; any failure falls back to the extractive composer."""

    name = "model"

    def __init__(self, model: ChatModel, *, timeout_s: float = 10.0) -> None:
        self.model = model
        self.timeout_s = timeout_s

    async def compose(self, question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence], *, timeout_s: float) -> Draft:
        limit = min(self.timeout_s, timeout_s)
        try:
            # The outer timeout guards models whose client ignores its own timeout.
            async with asyncio.timeout(limit + 0.5):
                raw = await self.model.complete_json(
                    composer_messages(question, plan, items), schema=COMPOSED_ANSWER_SCHEMA,
                    schema_name="composed_answer", timeout_s=limit)
            parsed = ComposedAnswer.model_validate_json(raw)
        except TimeoutError:
            return self._fallback(question, plan, items, "model timeout")
        except ValidationError as exc:
            return self._fallback(question, plan, items,
                                  f"model output invalid: {exc.error_count()} error(s)")
        # ModelError and whatever another ChatModel raises: a model failure degrades the
        # answer to extractive, it never fails the question.
        except Exception as exc:
            return self._fallback(question, plan, items, f"model error: {type(exc).__name__}")
        answer = strip_invisible(parsed.answer).strip()
        if not answer:
            return self._fallback(question, plan, items, "model answer empty")
        return Draft(answer=answer, cited=parsed.citations, composer="model")

    @staticmethod
    def _fallback(question: str, plan: ExternalQueryPlan, items: list[ExternalEvidence],
                  why: str) -> Draft:
        draft = compose_extractive(question, plan, items)
        return Draft(answer=draft.answer, cited=draft.cited, composer="extractive",
                     note=f"model composer fell back: {why}")
