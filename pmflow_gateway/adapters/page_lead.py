"""A page's lead: the first sentences of its article text, which say what the page is about.

trafilatura's text of a news page often starts with what surrounds the article rather than
with the article: the headline and its dek, a byline, a "Published … Updated …" line, a photo
caption or credit, a "Related:" or "Read more" line, share buttons, a reading time. None of
those says what happened, so none may stand as the lead. A lead sentence reads as prose: it
ends as a sentence ends and is long enough to say something. A page with no such sentence
near its top (a table, a list) leads with its first line that is no furniture.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pmflow_gateway.contract.dates import VISIBLE_DATE
from pmflow_gateway.contract.text import CJK

LEAD_SENTENCES = 2
LEAD_CHARS = 400
# How far into the page a lead is looked for: past that, prose is the article's body.
LEAD_WINDOW = 12
MIN_PROSE_CHARS = 40
MIN_CJK_PROSE_CHARS = 12

# A sentence ends as prose ends: a stop, then any closing quotes or brackets.
_PROSE_END = re.compile(r"[.!?。！？…][\"'”’)\]）」』]*$")
# A line introduced, by a label and a colon, as something other than the article: a pointer
# to other pages, a picture's caption or credit, an appeal to share, a reading time.
_LABELLED = re.compile(
    r"^\W*(?:related(?:\s+\w+)?|read\s+(?:more|also|next)|more|see\s+also|also\s+read"
    r"|recommended|(?:photo|image|picture|video)s?|cover\s+image|photograph|caption|credits?"
    r"|watch|listen|advertisement|sponsored|share(?:\s+this)?|follow\s+us|reading\s+time"
    r"|tempo\s+de\s+leitura|相关阅读|相关新闻|延伸阅读|推荐阅读|图片来源|责任编辑|来源|编辑"
    r"|分享到)\s*[:：|]",
    re.IGNORECASE)
# Lines that only point elsewhere or name the writer, with no sentence of their own.
_POINTER = re.compile(
    r"^\W*(?:you\s+(?:may|might)\s+also\s+like|story\s+continues|click\s+(?:here|for)"
    r"|staff\s+reports?|(?:posted|written|reported)\s+by|by\s+[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}"
    r"\s*$)", re.IGNORECASE)
# A picture's credit inside a sentence: "(AP Photo/Evan Vucci)", "Photograph: X/Reuters".
_PICTURE_CREDIT = re.compile(
    r"\((?:[\w.]+\s)?photo\b|\bphoto(?:graph)?\s*(?:credit)?\s*:|\bimage\s+(?:copyright|caption)"
    r"|\bgetty\s+images\b|\bcredit\s*:", re.IGNORECASE)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?|\b\d{1,2}\s*[ap]\.?m\.?",
                   re.IGNORECASE)
_AGO = re.compile(r"\b\d+\s*(?:min(?:ute)?s?|hours?|hrs?|days?)\s+ago\b|\d+\s*(?:分钟|小时|天)前",
                  re.IGNORECASE)
# A line that says when the page was published or updated ("Published 3 hours ago | Updated
# Dec. 2, 2026 10:15 a.m.", "发布时间：2026-12-02"), whatever else it carries.
_DATE_LABEL = re.compile(r"^\W*(?:(?:first\s+|last\s+)?(?:published|updated|posted|modified)"
                         r"|发布|更新|发表|编辑于)", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")
MIN_WORDS_BESIDE_A_DATE = 4


def is_furniture(sentence: str) -> bool:
    """Whether a line is page furniture: labelled as a pointer, caption, byline or reading
    time, a row of menu items, a "published/updated" line, or a date with hardly a word
    beside it."""
    line = sentence.strip()
    if _LABELLED.match(line) or _POINTER.match(line) or _PICTURE_CREDIT.search(line):
        return True
    if line.count("|") >= 2:
        return True
    if not (VISIBLE_DATE.search(line) or _TIME.search(line) or _AGO.search(line)):
        return False
    if _DATE_LABEL.match(line):
        return True
    rest = _AGO.sub(" ", _TIME.sub(" ", VISIBLE_DATE.sub(" ", line)))
    return len(_WORD.findall(rest)) + len(CJK.findall(rest)) // 2 < MIN_WORDS_BESIDE_A_DATE


def is_prose(sentence: str) -> bool:
    """Whether a line reads as a sentence of the article: ended by a stop, and long enough."""
    line = sentence.strip()
    if not _PROSE_END.search(line):
        return False
    return len(CJK.findall(line)) >= MIN_CJK_PROSE_CHARS or len(line) >= MIN_PROSE_CHARS


def lead_indices(sentences: Sequence[str]) -> list[int]:
    """The positions of the page's lead sentences: its first prose sentences that are no
    furniture (at most `LEAD_SENTENCES`, `LEAD_CHARS`), else its first line that is none."""
    picked: list[int] = []
    size = 0
    for number, sentence in enumerate(sentences[:LEAD_WINDOW]):
        if is_furniture(sentence) or not is_prose(sentence):
            if picked:
                break  # the lead is one run of sentences: a heading or a caption ends it
            continue
        if picked and size + len(sentence) > LEAD_CHARS:
            break
        picked.append(number)
        size += len(sentence)
        if len(picked) == LEAD_SENTENCES:
            break
    if picked:
        return picked
    return next(([n] for n, s in enumerate(sentences[:LEAD_WINDOW]) if not is_furniture(s)), [])
