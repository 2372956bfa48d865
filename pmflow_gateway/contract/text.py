"""Untrusted text: what fetched pages, titles, snippets and model output are checked with.

Fetched text is data. Before any snippet reaches a composer it is cleaned here: invisible
characters go, URLs go, and sentences that read like instructions to an assistant or that name
an internal source are dropped, so neither a planted link nor a planted command can reach the
user's reply. The same invisible-character set, CJK class and sentence splitter serve page
extraction, passage ranking and the planners.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from datetime import UTC, datetime, tzinfo

from pmflow_gateway.schemas import ExternalQueryPlan

MAX_SENTENCE_CHARS = 280
MAX_SNIPPET_CHARS = 1200  # per item, in the model prompt

# Han (with extension A and compatibility ideographs), kana and Hangul: scripts written
# without spaces between words, so they are matched by character rather than by word.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CHARS}]")
# A sentence ends at CJK or Latin end punctuation (a Latin full stop only before a space, so
# "3.5" and "bbc.co.uk" stay whole) or at a line break.
SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.])(?=\s)|\n+")


def is_cjk(text: str) -> bool:
    """Whether the text has any CJK character (a Chinese question gets a Chinese-style answer)."""
    return bool(CJK.search(text))


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


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
# Searched one by one, not as one alternation: each pattern alone gets the engine's literal
# prefix scan, so the whole check costs about a third.
_INJECTIONS = tuple(re.compile(p, re.IGNORECASE) for p in _INJECTION_PATTERNS)


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
    lower = folded(text)
    return any(pattern.search(lower) for pattern in _INJECTIONS)


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
    parts = split_sentences(strip_invisible(snippet))
    cleaned = (clean_sentence(p, asked=asked) for p in parts)
    return tuple(s for s in cleaned if s)


def clean_text(snippet: str, *, asked: str = "") -> str:
    """A whole snippet, cleaned sentence by sentence (what the model is shown)."""
    return " ".join(clean_sentences(snippet, asked=asked))[:MAX_SNIPPET_CHARS]




def _has_content(text: str) -> bool:
    return sum(ch.isalnum() for ch in text) >= 2


# ---------------------------------------------------------------- days named in text

MONTHS = {name: number for number, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
     ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
     ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")], start=1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
VISIBLE_DATE = re.compile(
    r"(?P<y1>(?:19|20)\d{2})\s*[-/.]\s*(?P<m1>\d{1,2})\s*[-/.]\s*(?P<d1>\d{1,2})(?!\d)"
    r"|(?P<y2>(?:19|20)\d{2})\s*年\s*(?P<m2>\d{1,2})\s*月\s*(?P<d2>\d{1,2})\s*[日号]"
    rf"|\b(?P<mon3>{_MONTH})\.?\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y3>(?:19|20)\d{{2}})\b"
    rf"|\b(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon4>{_MONTH})\.?,?\s+(?P<y4>(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)
# Days named without a year: enough to say a passage speaks about particular days.
DAY_MENTION = re.compile(
    r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:周|星期|礼拜)[一二三四五六日天]|今天|明天|后天"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\btoday\b|\btomorrow\b",
    re.IGNORECASE,
)


def date_from_match(match: re.Match[str], zone: tzinfo = UTC) -> datetime | None:
    """The day a `VISIBLE_DATE` match names, at midnight in `zone`."""
    groups = match.groupdict()
    for n in "1234":
        year = groups.get(f"y{n}")
        if year is None:
            continue
        month_text = groups.get(f"m{n}") or groups.get(f"mon{n}") or ""
        month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text.lower(), 0)
        try:
            return datetime(int(year), month, int(groups[f"d{n}"] or 0), tzinfo=zone)
        except ValueError:  # 2026-13-45 is a version number, not a date
            return None
    return None


def names_a_day(text: str) -> bool:
    """Whether the text names a day: a full date, 12月3日, a weekday, today or tomorrow."""
    if DAY_MENTION.search(text):
        return True
    return any(date_from_match(m) is not None for m in VISIBLE_DATE.finditer(text))
