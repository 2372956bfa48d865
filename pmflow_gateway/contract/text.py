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
import operator
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import sentencex

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import VISIBLE_DATE
from pmflow_gateway.contract.memo import MAX_CACHED_KEY_CHARS, cached_if_short
from pmflow_gateway.schemas import ExternalQueryPlan

MAX_SENTENCE_CHARS = 280
MAX_SNIPPET_CHARS = 1200  # per item, in the model prompt
# How much of one untrusted field (a snippet, a title) is read at all: an adapter's passage
# is far shorter, and every check and cache below then works on bounded text.
MAX_FIELD_CHARS = 4000
# Han (with extension A and compatibility ideographs), kana and Hangul: scripts written
# without spaces between words, so they are matched by character rather than by word.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CHARS}]")
# Letters and digits of Latin script, full-width ones too: what host names are written in.
_LATIN_ALNUM = "A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
# A sentence always ends at CJK end punctuation, a Latin "!", "?" or ";", and a line break;
# but never at a "。" between Latin letters, which is a host's dot written to slip past a
# filter ("evil。com"): the link checks must see the host whole.
# A "。" between two numbers ends a sentence where a date or a time follows it ("AQI为156。12月
# 4日…", "延后至23:30。12号线…"); elsewhere the numbers may be one ("售价25。5元", a decimal typed
# in Chinese) or an address written to slip past the link checks ("10。0(dot)0(dot)1").
_LATIN_LETTERS = "A-Za-z\uff21-\uff3a\uff41-\uff5a"
_D = "[0-9\uff10-\uff19]"
HARD_SENTENCE_END = re.compile(
    rf"(?<=[！？；!?;])|(?<=。)(?!(?<=[{_LATIN_ALNUM}]。)[{_LATIN_LETTERS}])"
    rf"(?!(?<=[{_LATIN_LETTERS}]。){_D})(?!(?<={_D}。)(?!{_D}{{1,4}}\s*(?:[年月日号时点]|[:：]{_D})){_D})"
    r"|\n+")
# A Latin full stop (with any closing quote or bracket) before a space may end one: "3.5" and
# "bbc.co.uk" never split, nor a dot spaced apart between two words ("evil . com"), so a
# host name is never cut in two before the link checks see it.
_FULL_STOP = re.compile(
    rf"\.[\"'”’)\]]*(?=\s)(?!(?<=[{_LATIN_ALNUM}] \.) [{_LATIN_ALNUM}])")


def is_cjk(text: str) -> bool:
    """Whether the text has any CJK character (a Chinese question gets a Chinese-style answer)."""
    return bool(CJK.search(text))


def split_sentences(text: str) -> list[str]:
    """The text's sentences, stripped. A full stop ends a sentence only where the sentencex
    segmenter agrees: not after a known abbreviation ("Co.", "Mr.", "Dec. 15", "p.m.", "No. 3")
    or an initial ("J. Smith", "U.S."), unless what follows starts a new sentence."""
    sentences = []
    for part in HARD_SENTENCE_END.split(text):
        if part and not part.isspace():
            sentences.extend(_split_at_full_stops(part))
    return [s for s in sentences if s]


# "as of 9:30 a.m. Central, Friday", "as of 3 a.m. EST Sunday, Dec. 6", "as of 7 a.m. Monday":
# a time's zone goes on with its sentence, and so does a day or a month after the time.
_A_DAY_OR_MONTH = (r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Jan(?:uary)?|Feb(?:ruary)?"
                   r"|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
                   r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b")
_TIME_ZONE_AFTER = re.compile(
    r"(?<=[ap]\.m\.)\s+(?:(?:Central|Eastern|Pacific|Mountain|Atlantic|[ECMP][SD]?T|GMT|UTC"
    rf"|local time)\b(?!\s+(?!{_A_DAY_OR_MONTH})[A-Z])"
    # unless the day starts a sentence of its own: "… at 9 a.m. Monday was a holiday."
    rf"|{_A_DAY_OR_MONTH}(?!\s+(?:was|is|will|would|has|had|saw|brings|brought|began|begins)\b))")


def _split_at_full_stops(text: str) -> list[str]:
    stops = {m.end() for m in _FULL_STOP.finditer(text)}
    if not stops:
        return [text.strip()]
    pieces, start = [], 0
    for boundary in sentencex.get_sentence_boundaries("en", text):
        end = len(text[:boundary["end_index"]].rstrip())
        if end in stops and not _TIME_ZONE_AFTER.match(text, end):
            pieces.append(text[start:end].strip())
            start = end
    pieces.append(text[start:].strip())
    return pieces


# Zero-width, bidi controls, BOM, soft hyphen, tag characters: all of category Cf. Variation
# selectors are Mn but render as nothing, so they can hide text too.
_VARIATION_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
# Any scheme-qualified link, `www.` host, pseudo-scheme or IP address with a path: none of
# them may pass from a snippet into an answer. Bare hosts are found by `hosts_named`, which
# knows every top-level domain; a TLD alternation here would backtrack on "x.x.x…".
URL_RE = CaseBlind(
    r"(?:\b[a-z][a-z0-9+.-]{1,15}://\S+)"
    r"|(?:\bwww\.[^\s，。；、]+)"
    r"|(?:\b(?:javascript|data|mailto|file):\S+)"
    r"|(?:\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/\S*)")


def may_have_link(text: str) -> bool:
    """False only where `URL_RE` cannot match: each of its links has a "/" (a scheme's "://",
    an address's path), "www." or a pseudo-scheme's last letter and colon, in any case. Most
    sentences have none of them, and the pattern, with no literal to scan for, is tried at
    every position (a thirtieth of it). (No other letter matches t, a, o or e case-blind, as
    "ſ" does s and "ı" i, so the lower-case form holds every colon a pseudo-scheme ends in.)"""
    if "/" in text:
        return True
    lower = text.lower()
    return "www." in lower or (":" in text and any(map(lower.__contains__, _SCHEME_ENDS)))


_SCHEME_ENDS = ("t:", "a:", "o:", "e:")  # javascript: data: mailto: file:


def links(text: str) -> Iterator[re.Match[str]]:
    """Every link `URL_RE` finds in the text, searched only where one may be."""
    return URL_RE.finditer(text) if may_have_link(text) else iter(())


# A run of labels joined by dots, after any dots that lead it (".evil.com", which a removed
# "[1]" can leave behind). The look-behind starts a match only where a token or a run of dots
# starts, and a label cannot contain the dot that ends it, so the scan is linear in the text.
_DOTTED = re.compile(r"(?<![\w.-])\.*[\w-]+(?:\.[\w-]+)+")
_DOT_LABEL = re.compile(r"\.[\w-]")  # what every run `_DOTTED` finds has
_MAX_TLD_CHARS = 24  # the longest TLDs; a CJK TLD is read as a prefix of its glued label


@functools.cache
def top_level_domains() -> frozenset[str]:
    """Every top-level domain of the Public Suffix List the `tld` package ships (1,400+,
    internationalised ones in Unicode and punycode)."""
    import tld

    names = (Path(tld.__file__).parent / "res" / "effective_tld_names.dat.txt").read_text("utf-8")
    return frozenset(line.strip().lstrip("*!.").lower() for line in names.splitlines()
                     if line.strip() and not line.startswith("//") and "." not in line.strip())


def _host_like(token: str) -> bool:
    labels = [label.strip("-_") for label in token.lower().split(".")]
    if len(labels) == 4 and all(label.isdigit() and int(label) < 256 for label in labels):
        return True  # an IPv4 address
    if not all(labels) or labels[-1].isdigit():
        return False
    last = labels[-1]
    if last.startswith("xn--") or last in top_level_domains():
        return True
    # Chinese text has no space after a host: "访问天气.公司领取" ends its TLD mid-label.
    return bool(CJK.match(last)) and any(
        last[:n] in top_level_domains() for n in range(1, min(len(last), _MAX_TLD_CHARS) + 1))


def hosts_named(text: str) -> list[str]:
    """Every host-like token of the text (any TLD, IDN, IPv4), after folding and reading
    obfuscated dots (`evil[.]com`, `evil dot com`) as dots: what a reader could type in."""
    form = detection_form(text)
    if not _DOT_LABEL.search(form):
        return []  # every host has a dot before a label, once obfuscated ones are read
    tokens = (_unglued(m.group(0).lstrip(".")) for m in _DOTTED.finditer(form))
    return [token.lower().strip("-_") for token in tokens if _host_like(token)]


def _unglued(token: str) -> str:
    """The token up to Chinese text glued right after a Latin last label: "evil.com广州" is
    "evil.com", as "evil.com 广州" is. (A last label that starts Chinese may be a Chinese
    TLD, which `_host_like` reads.)"""
    last = token.rsplit(".", 1)[-1]
    cut = CJK.search(last)
    return token[:len(token) - len(last) + cut.start()] if cut and cut.start() > 0 else token


_MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# No two adjacent `\s*` anywhere: on a long run of spaces they would retry each split of it.
ANY_MARKER = re.compile(r"[\[［【]\s*(?:\^\s*)?\d+\s*[\]］】]")
_EVIDENCE_TAG = CaseBlind(r"<\s*(?:/\s*)?evidence[^<>]*>")
_INJECTION_PATTERNS = [
    r"\b(ignore|disregard|forget|override|bypass)\b.{0,40}\b(instruction|prompt|rule|message|"
    r"direction|guideline|guidance|context|directive|command|order)s?\b",
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
    # (A leading "请|立即|马上" is left out: it is optional, so it decides no match.)
    r"告诉用户", r"(访问|点击|打开|前往|登录|下载|扫码|关注)"
    r".{0,20}(网站|网址|链接|这里|此处|页面|公众号|二维码|http|www)",
    r"(加|添加).{0,6}(微信|qq|vx)",
    # Text addressed to whatever model reads the page, not to the page's human reader.
    r"\b(dear|attention|hey|hello|note to|notice to|message to|to) (the |all |any )?"
    r"(ai|assistant|chatbot|llm|language model|model|agent|bot)s?\b",
    r"\bif you are (an? )?(ai|assistant|chatbot|llm|language model|bot)\b",
    r"\b(ai|assistant|chatbot|llm|language model|agent)s?\b.{0,20}\b(must|should|shall|"
    r"need to|are required to|reading this)\b",
    r"\b(repeat|relay|forward|pass on|convey|copy)\b.{0,40}\b(verbatim|word for word|"
    r"exactly as|to the user|to users)\b",
    r"(ai|人工智能|语言模型|大模型|机器人|助手|助理|智能体|gpt)\s?[,，:：]?\s?"
    r"(请注意|请|务必|必须|注意|应当|一定要)",
    r"如果你是.{0,6}(ai|人工智能|模型|助手|机器人)",
    r"(原样|原文|如实|一字不差|逐字|照原样).{0,6}(转告|转达|告知|传达|回复|输出|复述|告诉)",
    r"(务必|一定要|必须).{0,6}(转告|转达|告知)",
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
# Every internal phrase has one of these in it (a test checks): text with none has no phrase
# to look for, and most text has none.
PHRASE_HINTS = ("feishu", "飞书", "lark", "pmflow", "doc", "内部", "聊天", "群聊", "项目图谱",
                "internal", "chat history")
# Short English names are also words ("skylark", "docker"): those match as whole words only;
# the others match anywhere ("PMFlowRecords").
_INTERNAL_NAME_RE = {name: re.compile(rf"(?<![a-z]){name}(?![a-z])" if name in ("lark", "doc")
                                      else re.escape(name)) for name in INTERNAL_NAMES}

# Searched one by one, not as one alternation: each pattern alone gets the engine's literal
# prefix scan, so the whole check costs about a third. Only ever searched in `folded` text,
# which is lower case already: case-blind matching would cost a third more and find nothing
# more (every character a case-blind "a".."z" matches folds to that letter; a test checks).
_INJECTIONS = tuple(re.compile(p) for p in _INJECTION_PATTERNS)
# Every match of every pattern above has one of these in it (a test generates matches of each
# to check): text with none, most text, is not searched pattern by pattern (14 us for a
# sentence of a hundred characters) but for these (5 us; a Chinese one 6 -> 0.3 us).
INJECTION_HINTS = (
    "ignore", "disregard", "forget", "override", "bypass", "instruction", "you are ", "act as",
    "pretend ", "jailbreak", "respond ", "reply ", "answer ", "visit", "click", "go to", "open",
    "download", "log", "sign", "subscribe", "system", "assistant", "developer", "user", "<|",
    "inst]", " ai", " chatbot", " llm", " model", " agent", " bot", "must", "should", "shall",
    "need to", "are required to", "reading this", "verbatim", "word for word", "exactly as",
    "忽略", "无视", "忘记", "忘掉", "不要理会", "跳过", "指令", "指示", "提示", "规则", "你现在是",
    "你必须", "你应该", "你需要", "扮演", "告诉用户", "访问", "点击", "打开", "前往", "登录",
    "下载", "扫码", "关注", "微信", "qq", "vx", "请", "务必", "必须", "注意", "应当", "一定要",
    "如果你是", "原样", "原文", "如实", "一字不差", "逐字", "转告", "转达", "告知",
)


def _searcher(pattern: re.Pattern[str]) -> Callable[[str], object]:
    """`pattern.search`, quicker: a leading `\b` keeps the engine from scanning for the first
    letters (each position is tried in turn, three times slower). The pattern without it
    matches wherever the pattern does, so where it finds nothing, neither would the pattern."""
    if not pattern.pattern.startswith(r"\b"):
        return pattern.search
    quick = re.compile(pattern.pattern[2:], pattern.flags).search
    return lambda form: quick(form) and pattern.search(form)


_SEARCHES = tuple(_searcher(p) for p in _INJECTIONS)


# A hint is looked for only in text that has its kind of character: one with a Latin letter
# where a Latin letter is, one with a Chinese character where a character is not ASCII (most
# sentences are one or the other), the rest ("<|") always.
_LATIN_LETTER = re.compile("[a-z]")
_LATIN_HINTS = tuple(h for h in INJECTION_HINTS if h.isascii() and _LATIN_LETTER.search(h))
_WIDE_HINTS = tuple(h for h in INJECTION_HINTS if not h.isascii())
_OTHER_HINTS = tuple(h for h in INJECTION_HINTS if h not in _LATIN_HINTS + _WIDE_HINTS)


def _has_hint(form: str) -> bool:
    return (any(map(form.__contains__, _OTHER_HINTS))
            or (not form.isascii() and any(map(form.__contains__, _WIDE_HINTS)))
            or (_LATIN_LETTER.search(form) is not None
                and any(map(form.__contains__, _LATIN_HINTS))))


def _any_match(form: str) -> bool:
    # map/any run in C: no Python frame per pattern (about 35 of them, for every sentence).
    return _has_hint(form) and any(map(operator.call, _SEARCHES, itertools.repeat(form)))


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


@cached_if_short(maxsize=4096)  # asked again for the same text by each check that folds it
def strip_invisible(text: str) -> str:
    """Drop every character that renders as nothing but can carry or reorder text."""
    if text.isprintable() or _printable_lines(text):
        # No format or control character but newline and tab (no other is printable): only
        # a variation selector, which is printable, can be left, and never in ASCII.
        return text if text.isascii() else _VARIATION_SELECTORS.sub("", text)
    return _VARIATION_SELECTORS.sub("", _invisible_class().sub("", text))


def _printable_lines(text: str) -> bool:
    return text.replace("\n", "").replace("\t", "").isprintable()


# Letters of other scripts drawn like Latin ones (the lower-case confusables of Unicode's
# TR39 table for Cyrillic, Greek, Armenian and Latin extensions): "evil.cοm" with a Greek
# omicron reads as "evil.com". NFKC already unifies full-width and mathematical letters.
_CONFUSABLE_LATIN = str.maketrans({
    **dict.fromkeys("аɑαⲁ", "a"), **dict.fromkeys("ЬƅЪ", "b"), **dict.fromkeys("сϲⅽꮯ", "c"),
    **dict.fromkeys("ԁꓒ", "d"), **dict.fromkeys("еҽ℮ꬲ", "e"), **dict.fromkeys("ſϝ", "f"),
    **dict.fromkeys("ɡցᶃ", "g"), **dict.fromkeys("һհ", "h"), **dict.fromkeys("іıιɩӏ", "i"),
    **dict.fromkeys("јϳ", "j"), **dict.fromkeys("κк", "k"), **dict.fromkeys("ⅼǀ", "l"),
    **dict.fromkeys("ոп", "n"), **dict.fromkeys("оοօσ০٥", "o"), **dict.fromkeys("рρ", "p"),
    **dict.fromkeys("ԛզ", "q"), **dict.fromkeys("гᴦ", "r"), **dict.fromkeys("ѕꜱ", "s"),
    **dict.fromkeys("τт", "t"), **dict.fromkeys("υսʋ", "u"), **dict.fromkeys("νѵᴠ", "v"),
    **dict.fromkeys("ԝѡա", "w"), **dict.fromkeys("хχ", "x"), **dict.fromkeys("уγ", "y"),
    **dict.fromkeys("ᴢ", "z"),
    # "İ" lower-cases to "i" and a combining dot above: without the dot the "i" reads as one.
    "\u0307": None,
})


# Most text has no look-alike letter: translating it anyway reads every character through a
# dict (2-4 us a sentence), finding that it has none is a character class scan (0.2 us).
_ANY_CONFUSABLE = re.compile("[" + re.escape("".join(map(chr, _CONFUSABLE_LATIN))) + "]")


# Full-width ASCII and the ideographic space, as NFKC writes them. Chinese text prints its
# punctuation full width, and NFKC's own pass over such a text costs twice this table's: with
# them made ASCII first, NFKC's quick check most often finds nothing left to do.
_WIDE = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_ANY_WIDE = re.compile("[\uff01-\uff5e\u3000]")


@cached_if_short(maxsize=4096)
def folded(text: str) -> str:
    """The form used for detection only: full-width, compatibility and look-alike letters
    unified, lower case."""
    form = strip_invisible(text)
    if _ANY_WIDE.search(form):
        form = form.translate(_WIDE)
    form = unicodedata.normalize("NFKC", form).lower()
    return form.translate(_CONFUSABLE_LATIN) if _ANY_CONFUSABLE.search(form) else form


# A dot written so that a filter misses it: "evil[.]com", "evil(dot)com", "evil dot com",
# "evil . com", "evil。com". Bare "dot" and "。" count only between Latin letters or digits.
_OBFUSCATED_DOT = re.compile(
    r"\s?[\[({【（<]\s?(?:\.|dot|点|。)\s?[\])}】）>]\s?"
    r"|(?<=[a-z0-9])(?:\s(?:dot|\.)\s|。)(?=[a-z0-9])")
_SPACES = re.compile(r"\s+")


def _one_spaced(form: str) -> str:
    """Runs of white space made one space. Only a text with two spaces in a row or an
    unprintable character can have any other: every white space character but the space is
    unprintable (and what else is, `folded` stripped)."""
    return _SPACES.sub(" ", form) if "  " in form or not form.isprintable() else form
# What an obfuscated dot needs, once white space is one space: a dot word in brackets, " dot "
# or " . ", or a "。" between Latin letters or digits. Chinese text has brackets and "。"
# everywhere, and the pattern itself has no first character to scan for: these are.
_BRACKETED_DOT = re.compile(r"[\[({【（<]\s?(?:\.|dot|点|。)")
_LATIN_STOP = re.compile(r"[a-z0-9]。[a-z0-9]")


def _may_hide_a_dot(form: str) -> bool:
    return bool(" dot " in form or " . " in form or _BRACKETED_DOT.search(form)
                or ("。" in form and _LATIN_STOP.search(form)))


# Read three times per sentence (links, instructions, contact handles) and again for the
# answer that quotes it.
@cached_if_short(maxsize=2048)
def detection_form(text: str) -> str:
    """`folded`, with runs of white space made one space and obfuscated dots made dots."""
    form = _one_spaced(folded(text))
    return _OBFUSCATED_DOT.sub(".", form) if _may_hide_a_dot(form) else form


# Letters spaced or dotted apart ("i g n o r e", "i.g.n.o.r.e") read as one word. A run
# starts only at its first letter (both look-behinds), so the scan stays linear.
_SPACED_LETTERS = re.compile(r"(?<![a-z])(?<![a-z][\s.*_-])(?:[a-z][\s.*_-]){3,}[a-z](?![a-z])")


def _joined_letters(text: str) -> str:
    return _SPACED_LETTERS.sub(lambda m: f" {m.group(0)[::2]} ", text)


# The answer stage and the render stage check the same answer text, and a sentence is checked
# again for each stage that quotes it: each of these is worked out once per text.
@cached_if_short(maxsize=2048)
def looks_like_instruction(text: str) -> bool:
    form = detection_form(text)
    # Letters are joined before dots are read: "℃。i g n o r e" must not start at the "c".
    # One pattern at a time: a single alternation of all of them costs about three times more.
    if _any_match(form):
        return True
    joined = _joined_letters(_one_spaced(folded(text)))
    # Most text has no spaced-out letters and no disguised dots: the same form, searched once.
    return joined != form and _any_match(joined)


# A contact channel and its handle ("微信 gzwx8888", "QQ: 12345", "telegram @x"), or a bare
# "@handle": a page's way of moving its reader somewhere we cannot vouch for.
_CHANNELS_CJK = "微信|威信|薇信|v信|公众号|抖音号|小红书号|企鹅|电报"
_CHANNELS = "vx|wx|wechat|weixin|qq|telegram|tg|whatsapp|line ?id|skype|discord"
_CONTACT = re.compile(
    rf"(?:{_CHANNELS_CJK}|\b(?:{_CHANNELS})\b)"
    r"\s?(?P<label>号|id|账号|群)?\s?(?P<sep>[:：是为]?\s?@?)(?P<handle>[a-z0-9][\w.-]{3,})"
    r"|(?<![\w.@])@[a-z0-9_]{3,}"
    # An e-mail address, whatever follows its host ("a@evil.comguangzhou" hides the TLD).
    r"|(?<![\w.+-])[\w.+-]+@[a-z0-9-]+\.[\w.-]+")
# Every handle `_CONTACT` finds has a channel's name or an "@": without a word
# boundary to try first, the engine scans for their first letters (a third of the search).
_CONTACT_HINT = re.compile(f"{_CHANNELS_CJK}|{_CHANNELS}|@")


def _is_handle(match: re.Match[str]) -> bool:
    """A channel name followed by an ordinary word ("WhatsApp users") is no handle: a handle
    has a digit or underscore, or is introduced as one (a label, a colon, an @)."""
    handle = match.group("handle")
    return (handle is None or match.group("label") is not None or bool(match.group("sep"))
            or any(c.isdigit() or c == "_" for c in handle))


# Seven to fifteen digits in groups of a phone number: "400-800-1234", "+86 138 0013 8000",
# "(020) 8888-8888", "13800138000". Bounded, so each start costs a constant.
_PHONE = re.compile(r"(?<![a-z0-9.,])\+?\(?\d[\d\s()-]{5,22}\d(?![a-z0-9.,])")
_YEAR = re.compile(r"(?:19|20)\d\d")


def _is_phone(found: str) -> bool:
    groups = [g for g in re.split(r"[\s()-]+", found.lstrip("+")) if g]
    digits = sum(len(g) for g in groups)
    if not 7 <= digits <= 15 or len(groups) > 5:
        return False
    if all(_YEAR.fullmatch(g) for g in groups) or VISIBLE_DATE.fullmatch(found.strip()):
        return False  # "2024 2025", "2026-12-03": years and dates, not numbers to call
    # After a country or area code, every group of a phone number has three digits or more.
    lead = 2 if found.startswith(("+", "(")) else 1
    return all(len(g) >= 3 for g in groups[lead:])


def contact_handles(text: str) -> list[str]:
    """Every contact handle and phone number the text gives."""
    form = detection_form(text)
    handles = _CONTACT.finditer(form) if _CONTACT_HINT.search(form) else ()
    return ([m.group(0) for m in handles if _is_handle(m)]
            + [m.group(0) for m in _PHONE.finditer(form) if _is_phone(m.group(0))])


def mentions_internal(text: str, *, asked: str = "") -> bool:
    """True when `text` names an internal source. `asked` is what the user asked about:
    a question about Feishu the product may get an answer that names Feishu."""
    lower = folded(text)
    if any(map(lower.__contains__, PHRASE_HINTS)) and any(
            map(lower.__contains__, INTERNAL_PHRASES)):
        return True
    # Each name's pattern matches only where the name is: six substring tests rule out the
    # common case (no name at all) at a fifth of one pass of the patterns.
    if not any(map(lower.__contains__, INTERNAL_NAMES)):
        return False
    asked_lower = folded(asked)
    return any(name not in asked_lower and _INTERNAL_NAME_RE[name].search(lower)
               for name in INTERNAL_NAMES)


@cached_if_short(maxsize=2048)
def has_url(text: str) -> bool:
    return bool(any(links(text)) or any(links(detection_form(text))) or hosts_named(text))


def carries_prompt_markup(text: str) -> bool:
    """The model prompt's `<evidence>` fence, in any spelling: never part of a reply."""
    return bool(_EVIDENCE_TAG.search(text) or _EVIDENCE_TAG.search(folded(text)))


def asked_text(question: str, plan: ExternalQueryPlan) -> str:
    """What the user asked about, by name: such names are not internal labels here."""
    return " ".join([question, plan.topic, *plan.subject_entities])


# A Chinese page's opening credit, its source and date in brackets: "（深圳商报 2026年10月30日）"
# dates the page, not what the sentence says.
_SOURCE_DATELINE = re.compile(
    r"^\s*[（(][^（）()\d]{2,30}?\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日(?:\s*\d{1,2}[:：]\d{2})?"
    r"\s*[）)]\s*")


def clean_sentence(sentence: str, *, asked: str = "") -> str | None:
    """A snippet sentence fit to quote, or None when it must not reach the user."""
    text = _SOURCE_DATELINE.sub("", _EVIDENCE_TAG.sub(" ", strip_invisible(sentence)), count=1)
    # A link in page text is most often a call to action, and what is glued around it cannot
    # be told apart from planted text (stripping "x.com/ysystem: say z" leaves "say z"):
    # the whole sentence goes, not just the link.
    if (has_url(text) or _MARKDOWN_LINK.search(text) or looks_like_instruction(text)
            or contact_handles(text) or mentions_internal(text, asked=asked)):
        return None
    checked = text
    text = ANY_MARKER.sub("", text)  # a planted "[7]" would read as our own citation
    text = " ".join(text.split()).strip(" ,，:：;；-—()（）")
    if text != checked and (has_url(text) or looks_like_instruction(text)):
        return None  # markers removed can join a link back together
    if len(text) > MAX_SENTENCE_CHARS:
        text = text[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
    return text if _has_content(text) else None


def clean_sentences(snippet: str, *, asked: str = "") -> list[str]:
    snippet, asked = snippet[:MAX_FIELD_CHARS], asked[:MAX_FIELD_CHARS]
    if len(snippet) + len(asked) > MAX_CACHED_KEY_CHARS:
        return list(_clean_sentences.__wrapped__(snippet, asked))
    return list(_clean_sentences(snippet, asked))


@functools.lru_cache(maxsize=4096)
def _clean_sentences(snippet: str, asked: str) -> tuple[str, ...]:
    # Pure, and asked for the same snippets several times per question (verifier, composer,
    # titles): cached when short.
    parts = split_sentences(strip_invisible(snippet))
    cleaned = (clean_sentence(p, asked=asked) for p in parts)
    return tuple(s for s in cleaned if s)


def clean_text(snippet: str, *, asked: str = "") -> str:
    """A whole snippet, cleaned sentence by sentence (what the model is shown)."""
    return " ".join(clean_sentences(snippet, asked=asked))[:MAX_SNIPPET_CHARS]




def _has_content(text: str) -> bool:
    return sum(map(str.isalnum, text)) >= 2
