"""The question contract: is this evidence about what was asked?

One definition, used by every adapter (to score and to decide whether to try the next one),
by the evidence verifier (to drop what is about something else, with the reason) and by the
composer and the answer verifier (to keep only the lines about the asked place, subject and
day). A wrong answer is worse than a refusal, so every rule here errs towards "not about it".
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.currencies import currency_groups
from pmflow_gateway.contract.gazetteer import (
    ALIAS_GROUPS,
    CITIES,
    COUNTRIES,
    EVERYDAY_WORD_COMPANIES,
    TERM_ALIASES,
)
from pmflow_gateway.contract.judged import Judged, json_of, of_the_last
from pmflow_gateway.contract.lexicon import is_chinese_word, is_everyday_word
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.metrics import asked_metrics, asked_periods, names_an_asked_metric
from pmflow_gateway.contract.places import (
    Place,
    PlaceMention,
    find_places,
    place_names,
    qualified_forms,
    region_after,
    same_place,
)
from pmflow_gateway.contract.salience import (
    in_passing,
    is_weather_line,
    is_weather_report,
    reads_temperature,
)
from pmflow_gateway.contract.specs import SPEC, spec_pattern
from pmflow_gateway.contract.terms import overlap, terms
from pmflow_gateway.contract.text import CJK, CJK_CHARS, split_sentences
from pmflow_gateway.contract.variants import (
    asked_models,
    asked_titles,
    family_mentions,
    is_qualifier,
)
from pmflow_gateway.contract.when import asked as asked_when
from pmflow_gateway.contract.when import names_calendar_days, speaks_of
from pmflow_gateway.schemas import ExternalQueryPlan, QueryKind

TOPIC_COVERAGE = 0.5  # share of the question's terms a page must carry when it names nothing
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
# A market page quotes a level: "closed at $231.40", "收报3412.56点", "中间价报7.1234".
_QUOTE = CaseBlind(
    r"(?:(?:closed|closes|trades|traded|trading|opened|priced|quoted|stands?|stood|settled)"
    # "closed Friday at $63.18"
    r"(?:\s+(?:on\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|yesterday|today))?"
    r"\s+(?:at|near|around)|(?:rose|fell|gained|lost|climbed|slipped|dropped|jumped|eased"
    r"|firmed|weakened|strengthened)(?:\s+\d+(?:\.\d+)?\s*%)?\s+to|收报|收于|报价?|价格为|[价率]为"
    # An exchange rate: "set the reference rate at 14.82 crowns per dollar", "兑换2.35南屿币".
    r"|(?<![a-z])(?:rate|fixing)\s+(?:at|of|was|is|stood at)|兑换?|可兑换?"
    r"|现价|最新价|成交价|price\s*[:：])\s*[$¥€£]?\s*"
    # A level is never counted in millions or 亿: "revenue rose 8% to $1.38 billion" quotes none.
    r"(\d+(?:,\d{3})*(?:\.\d+)?)(?![.,]?\d|\s*(?:billion|million|trillion|bn|mn|亿))")
_PLACE_SUFFIX = re.compile(r"[市区县省]$")
# How an instrument moved: asked ("how did the index open", 跌了多少) and stated ("fell 0.5%",
# 上涨1.2%), an answer as good as a level to such a question.
_ASKS_MOVE = CaseBlind(
    r"涨|跌|涨跌|走势|表现|开盘|收盘|(?<![a-z])(?:how did|how is|how are|move[ds]?|moving"
    r"|up or down|rise|rose|fall|fell|gain(?:ed|s)?|los[et]|open(?:ed)?|close[ds]?|perform)"
    r"(?![a-z])")
_ASKS_LEVEL = CaseBlind(r"价格|股价|报价|多少钱|现价|售价|定价|卖多少"
                         r"|(?<![a-z])(?:price|priced|quote|trading at|worth|costs?"
                         r"|(?:stocks?|shares?) (?:close|closed|open|opened)"
                         r"(?! (?:higher|lower|up|down|flat))"
                         r")(?![a-z])")
_STATES_MOVE = CaseBlind(
    r"(?:涨|跌|上涨|下跌|收涨|收跌|升|降|涨幅|跌幅)\s*-?\d+(?:\.\d+)?\s*(?:%|％|点)"
    r"|(?<![a-z])(?:rose|fell|gained|lost|declined|dropped|climbed|slipped|slumped|jumped"
    r"|rallied|added|shed|was (?:up|down)|(?:up|down))\s+(?:by\s+)?-?\d+(?:\.\d+)?\s*(?:%|per ?cent"
    r"|points?)")

# Words that make a question about now: its answer changes, so an undated page cannot hold it.
# "Is it still", "the next season", 下届: about what holds now or comes next, which changes.
RECENT = CaseBlind(
    r"今天|今晚|今日|明天|明晚|后天|昨天|昨晚|最新|最近|近期|现在|目前|当前|实时|未来|本周|这周|下周"
    r"|周末|今年|本月|刚刚|仍在|仍然|依然|还在|下个?赛季|下届|下一届|下一场|下一次|下次|下一轮"
    r"|(?<![a-z0-9])(?:today|tonight|tomorrow|yesterday|latest|now"
    r"|current(?:ly)?|recent(?:ly)?|lately|this (?:week|weekend|month|year)|next week"
    r"|next \d+ (?:days|hours|weeks)|breaking|still|upcoming|next (?:season|edition|race|match"
    r"|game|meeting|round|election|launch|release|event|tournament|one))(?![a-z0-9])")
# Questions whose answer changes hands even when no time is named: who holds a title now,
# who won, what it costs, how many there are, which is the most.
CHANGING = CaseBlind(
    r"冠军|得主|总统|首相|总理|主席|首席执行官|现任|价格|价钱|多少钱|人口|纪录|排名|最"
    r"|(?<![a-z])(?:won|wins?|winners?|champions?(?:ship)?|president|prime minister|ceo"
    r"|leader|head of|prices?|costs?|population|record|rank(?:ing|ed)?|most|tallest|largest"
    r"|biggest|highest|richest|fastest|best)(?![a-z])")


@functools.cache
def _alias_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, set[str]] = {}
    groups: list[tuple[str, ...]] = [*ALIAS_GROUPS, *TERM_ALIASES, *CITIES, *COUNTRIES,
                                     *currency_groups()]
    for group in groups:
        for name in group:
            index.setdefault(name.casefold(), set()).update(group)
    return {key: tuple(sorted(forms)) for key, forms in index.items()}


def name_forms(name: str, kind: QueryKind | None = None) -> tuple[str, ...]:
    """Every spelling of a name that counts as naming it: itself, its aliases in both scripts,
    and a Chinese place without its 市/区/县 suffix. An everyday word that is also a company
    (苹果) stands for the company only in company and market questions."""
    name = name.strip()
    if len(name) > _CACHED_NAME_CHARS:
        return _name_forms(name, kind)
    return _cached_name_forms(name, kind)


_ALIASED = re.compile(r"^(.+?)\s*[(（]\s*([^()（）]{1,40}?)\s*[)）]$")


def _name_forms(name: str, kind: QueryKind | None) -> tuple[str, ...]:
    if not name:
        return ()
    if aliased := _ALIASED.match(name):
        # "Halvora Therapeutics (HLVR)": either name names it.
        return tuple(sorted({*_name_forms(aliased.group(1), kind),
                             *_name_forms(aliased.group(2), kind)}))
    if kind in (QueryKind.company, QueryKind.market) and name in EVERYDAY_WORD_COMPANIES:
        company = EVERYDAY_WORD_COMPANIES[name]
        return (f"{name}公司", company, *_alias_index().get(company.casefold(), ()))
    forms = {name, _PLACE_SUFFIX.sub("", name) if CJK.search(name) else name}
    forms.update(_alias_index().get(name.casefold(), ()))
    forms.update(_alias_index().get(_PLACE_SUFFIX.sub("", name).casefold(), ()))
    if (place := place_of(name)) is not None:
        forms.update(place_names(place))  # 珀斯 -> Perth, Jingdezhen -> 景德镇
    forms.update(qualified_forms(name))  # "Fennick, Maine" -> "Fennick, ME"
    return tuple(sorted(f for f in forms if f))


@functools.lru_cache(maxsize=1024)
def _place_mention(name: str) -> PlaceMention | None:
    """The place mention a name is, all of it (qualifier included), or None."""
    if not name or len(name) > _CACHED_NAME_CHARS:
        return None
    found = find_places(name, place_question=True)
    if len(found) != 1 or found[0].text.casefold() != name.strip().casefold():
        return None
    return found[0]


def place_of(name: str) -> Place | None:
    """The one place the table knows a name as, or None (unknown, or ambiguous)."""
    mention = _place_mention(name)
    return mention.place if mention else None


def names_the_place(hint: str, text: str, kind: QueryKind | None = None) -> bool:
    """Whether the text names the asked place. A place the question qualified ("Perth,
    Scotland", 湖北荆州) must be that place, not a namesake; a bare name accepts every
    namesake, so that pages about two of them make the answer stage ask which one."""
    mention = _place_mention(hint)
    if mention is None or mention.place is None or mention.qualifier is None:
        return names(hint, text, kind)
    return same_place(text, mention.place)


def _in_order(chars: str, *, gap: int, head: str = "") -> re.Pattern[str]:
    """`head`, then every one of `chars` in order with at most `gap` characters between."""
    between = f"[{CJK_CHARS}]{{0,{gap}}}?"
    return re.compile(re.escape(head) + ("" if not head else between)
                      + between.join(map(re.escape, chars)))


# Asked about dozens of times per question for the same few names; the cache key is bounded.
_CACHED_NAME_CHARS = 100
_cached_name_forms = functools.lru_cache(maxsize=4096)(_name_forms)


# A title in 《》 is the same title whatever a page puts between its words, brackets or not:
# 《山海 归途》 is 《山海·归途》 and 山海归途.
_TITLE = re.compile(r"^《([^《》]{1,40})》$")
_TITLE_GAP = r"[\s·・•‧\-‐–—_:：,，、.。!！?？'\"“”‘’]*"


@functools.lru_cache(maxsize=4096)
def _form_pattern(form: str) -> re.Pattern[str]:
    """The pattern of one form. A Latin form matches whatever its accents ("Tromso" names
    Tromsø, "Zurich" Zürich): case-insensitive patterns search the text's `_fold`."""
    if title := _TITLE.match(form):
        chars = [re.escape(c) for c in title.group(1) if not re.fullmatch(_TITLE_GAP, c)]
        return re.compile("《?" + _TITLE_GAP.join(chars) + "》?", re.IGNORECASE)
    if CJK.search(form) and _ZH_ORG.search(form) and (len(form) >= 5 or form[-2:] == "机场"):
        # An institution is named by an abbreviation of its name: 汀澜农商银行 is 汀澜农村商业
        # 银行, 琅坪机场 is 琅坪国际机场 (the same first two characters, then every character
        # in order, few between; four are too few but for an airport: 北京大学 is not 北京
        # 师范大学).
        if _ORDINAL.search(form[2:]):
            return re.compile(re.escape(form))  # 第一中学 is never 第二十一中学
        return _in_order(form[2:], gap=2, head=form[:2])
    if CJK.search(form) and _ZH_LAW.search(form) and len(form) >= 6:
        # A regulation is named shorter than its title: 江西物业条例 is 江西省物业管理条例, and
        # 建筑垃圾管理条例 never 生活垃圾分类管理条例 (every character, in order, few between).
        return _in_order(form, gap=3)
    if CJK.search(form):
        return re.compile(re.escape(form))
    # Short all-capital forms (US, EU, BTC) are acronyms: "us" in running text is not one.
    flags = 0 if form.isupper() and len(form) <= 4 else re.IGNORECASE
    bare = form if flags == 0 else plain(form)
    # Between the words of a name a page may write a possessive ("Fernhill Cloud's Team
    # plan"), and between a model's letters and its number a space or a hyphen or none
    # ("Note 12", "note12", "GPT-5").
    split = bare.split()
    words = _model_spaced(split[0]) if split else ""
    for before, word in itertools.pairwise(split):
        joined = before[-1:].isdigit() != word[:1].isdigit()  # "Aero 7" is also "aero7"
        words += (r"[\s\-]?" if joined else r"(?:['’]s)?\s+") + _model_spaced(word)
    return re.compile(rf"(?<![A-Za-z0-9]){words}(?![A-Za-z0-9])", flags)


_ZH_LAW = re.compile(r"(?:条例|办法|规定|细则)$")
_ORDINAL = re.compile(r"[第\d一二三四五六七八九十]")
# The words a Chinese school, hospital, museum, station or court's name ends in.
ZH_INSTITUTIONS = (r"医院|保健院|卫生院|中学|小学|大学|学院|幼儿园|博物馆|图书馆|体育馆|科技馆"
                   r"|美术馆|剧院|机场|火车站|高铁站|客运站|动物园|植物园|法院|检察院|研究院|研究所")
_ZH_ORG = re.compile(rf"(?:银行|协会|商会|商场|{ZH_INSTITUTIONS})$")
_LETTERS_DIGITS = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])|-")


def _model_spaced(word: str) -> str:
    parts = [p for p in _LETTERS_DIGITS.split(word) if p]
    return r"[\s\-]?".join(re.escape(p) for p in parts) if len(parts) > 1 else re.escape(word)


class _Needle(NamedTuple):
    """What a form's pattern needs in a text: `text` itself (CJK forms, acronyms) or its
    `fold` to contain `needle`; `pattern` None when containing it is the whole test."""

    needle: str | None
    exact: bool
    pattern: re.Pattern[str] | None


@functools.lru_cache(maxsize=4096)
def _needle(form: str) -> _Needle:
    pattern = _form_pattern(form)
    if _TITLE.match(form):
        return _Needle(None, True, pattern)
    if CJK.search(form) and pattern.pattern != re.escape(form):
        return _Needle(form[:1], True, pattern)  # a regulation's name, spelt shorter
    if CJK.search(form):
        return _Needle(form, True, None)  # the pattern is the form itself
    exact = not pattern.flags & re.IGNORECASE
    bare = form if exact else plain(form)
    if not bare.isascii():
        return _Needle(None, False, pattern)
    # The longest run of letters or digits: whatever the text puts between a model's letters
    # and its number, that run is in it.
    run = max((p for w in bare.split() for p in _LETTERS_DIGITS.split(w)), key=len, default="")
    needle = run if len(run) < len(bare) else bare
    return _Needle(needle if exact else needle.casefold(), exact, pattern)


@functools.cache
def _plain_table() -> dict[int, str]:
    """Latin letters with accents and their bare letter, one for one (so positions hold)."""
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[0]
        if base != chr(code) and base.isascii() and base.isalpha():
            table[code] = base
    table.update({ord(a): b for a, b in zip("øØđĐłŁıİ", "oOdDlLiI", strict=True)})
    return table


# Both are asked for the same few texts about thirty times a question (each name's check
# folds the sentence it reads): worked out once per text.
@cached_if_short(maxsize=4096)
def plain(text: str) -> str:
    """The text with the accents of Latin letters removed, letter for letter."""
    return text.translate(_plain_table())


@cached_if_short(maxsize=4096)
def _fold(text: str) -> str:
    """The text as a case-insensitive pattern of a Latin form sees it: accents removed
    (`plain`), then casefolded."""
    return plain(text).casefold()


def _named(form: str, text: str, fold: str) -> bool:
    """Whether the form's pattern finds it (in `text` for exact forms, in `fold` =
    `_fold(text)` for the rest), with a substring test first: most texts do not contain most
    forms, and `in` costs a fraction of a pattern search."""
    needle, exact, pattern = _needle(form)
    if needle is not None and needle not in (text if exact else fold):
        if exact and ("·" in text or "・" in text) and not form.isascii() and (
                undotted := _NAME_DOT.sub("", text)) != text:
            # A dot may part a Chinese name where the question does not: 山海归途 is
            # 《山海·归途》, 埃隆马斯克 埃隆·马斯克.
            return _named(form, undotted, fold)
        return False
    return pattern is None or pattern.search(text if exact else fold) is not None


_NAME_DOT = re.compile(f"(?<=[{CJK_CHARS}])[·・•‧](?=[{CJK_CHARS}])")


def names(name: str, text: str, kind: QueryKind | None = None, *,
          exactly: bool = False) -> bool:
    """Whether the text names `name` in any of its forms, or (unless `exactly`), for a long
    rare word, in a spelling one slip away ("kestral" names Kestrel)."""
    fold = _fold(text)
    return (any(_named(form, text, fold) for form in name_forms(name, kind))
            or (not exactly and _near_miss(name, fold))
            or _named_with_its_specs(name, text, kind, exactly=exactly))


@functools.lru_cache(maxsize=1024)
def _without_specs(name: str) -> tuple[str, tuple[str, ...]]:
    """The name without its configurations, and the configurations (none: most names)."""
    specs = tuple(found.group() for found in SPEC.finditer(name))
    return (" ".join(SPEC.sub(" ", name).split()) if specs else name), specs


def _named_with_its_specs(name: str, text: str, kind: QueryKind | None, *,
                          exactly: bool) -> bool:
    """A product asked with its configuration ("fathom 9 256gb", 星岚x9 12+256) where a
    sentence writes the configuration its own way or apart from the name ("the Nexlo Fathom 9
    with 256GB", "星岚X9提供两个版本：12GB+256GB"): one sentence names the product without
    it, and every configuration, in any spelling. Another sentence's configuration is
    another model's ("星岚X9 Pro仅提供16GB+512GB" is no X9 Pro 12+256). A name that is only a
    configuration names nothing."""
    bare, specs = _without_specs(name)
    if not specs or len(bare) < 2 or not any(c.isalpha() for c in bare):
        return False
    return any(all(spec_pattern(spec).search(sentence) for spec in specs)
               and names(bare, sentence, kind, exactly=exactly)
               for sentence in split_sentences(text))


def spelt_as_asked(plan: ExternalQueryPlan, text: str) -> bool:
    """Whether the text names every asked subject as the question spells it."""
    return all(names(s, text, plan.query_kind, exactly=True) for s in plan.subject_entities)


_WORD_TOKEN = re.compile(r"[a-z]+")
NEAR_MISS_CHARS = 6  # shorter names have too many neighbours one letter away


def _near_miss(name: str, fold: str) -> bool:
    """A name with one rare word misspelt by one letter (changed, dropped, added, or two
    swapped), where the text has the right spelling ("gulstrand pharma" for Gullstrand
    Pharma); the same first letter on both sides."""
    return bool(_near_misses(name, fold))


def _near_misses(name: str, fold: str) -> list[str]:
    """The spellings of the name one slip away that the folded text writes."""
    words = _fold(name).split()
    if not words or len(words) > 4 or not all(w.isascii() and w.isalpha() for w in words):
        return []
    tokens = set(_WORD_TOKEN.findall(fold))
    found = []
    for i, word in enumerate(words):
        if len(word) < NEAR_MISS_CHARS or is_everyday_word(word):
            continue
        for token in tokens:
            if (token[0] == word[0] and abs(len(token) - len(word)) <= 1 and token != word
                    and one_edit_apart(token, word) and not is_everyday_word(token)):
                phrase = " ".join([*words[:i], token, *words[i + 1:]])
                if len(words) == 1 or re.search(rf"(?<![a-z]){re.escape(phrase)}(?![a-z])",
                                                fold):
                    found.append(phrase)
    return found


def one_edit_apart(a: str, b: str) -> bool:
    """Whether one letter changed, dropped, added, or two neighbours swapped, makes a of b."""
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > 1:
        return False
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (i + 1 < len(a) and a[i] == b[i + 1]
                                         and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:])
    return a[i:] == b[i + 1:]


# How a page declares a short name: "Halvora Therapeutics (NASDAQ: HLVR)", 科润电气(301287).
_DECLARED_ALIAS = r"\s*[(（]\s*(?:[A-Za-z]{{2,10}}\s*[:：]\s*)?([A-Z0-9][A-Z0-9.]{{1,7}})\s*[)）]"


def with_declared_aliases(plan: ExternalQueryPlan, texts: Iterable[str]) -> ExternalQueryPlan:
    """The plan with the short names the evidence declares for its subjects: a quote page
    that names only the ticker is about the company another page says has that ticker. Pages
    that declare two (星途科技（301562）, 星途科技（920318）) speak of two companies of one
    name: neither is declared."""
    subjects = list(plan.subject_entities)
    pages = list(texts)
    changed = False
    for i, subject in enumerate(subjects):
        if _ALIASED.match(subject) or not subject.strip():
            continue
        pattern = _alias_declaration(subject, plan.query_kind)
        declared = {found.group(1) for text in pages
                    if (found := pattern.search(plain(text))) and found.group(1) != subject}
        if len(declared) == 1:
            subjects[i] = f"{subject} ({declared.pop()})"
            changed = True
    return plan.model_copy(update={"subject_entities": subjects}) if changed else plan


@functools.lru_cache(maxsize=1024)
def _alias_declaration(subject: str, kind: QueryKind) -> re.Pattern[str]:
    """Where a page declares a short name for `subject`: any of its forms, then the alias."""
    forms = "|".join(re.escape(plain(f)) for f in name_forms(subject, kind)
                     if not CJK.search(f) or CJK.search(subject))
    return re.compile(rf"(?:{forms}){_DECLARED_ALIAS.format()}", re.IGNORECASE)


def asked_names(plan: ExternalQueryPlan) -> list[str]:
    """The place and subjects the question asks about (the place first)."""
    found = [plan.location_hint] if plan.location_hint else []
    return list(dict.fromkeys([*found, *plan.subject_entities]))


def asked_day(plan: ExternalQueryPlan) -> str | None:
    """The canonical day the plan's time hint asks (today, tomorrow, mon, weekend, period,
    ...), or None when it names no day."""
    return _day_of_hint(plan.time_range_hint or "")


# Read for every piece of evidence at three stages; time hints are a small vocabulary
# (明天, this weekend, 未来5天), so the cache holds nearly all of them.
@cached_if_short(maxsize=1024)
def _day_of_hint(hint: str) -> str | None:
    found = asked_when(hint)
    return found.day if found else None


def timeless(plan: ExternalQueryPlan) -> bool:
    """A general question that names no time, no year and no recency, and whose answer does
    not change hands ("How tall is the Eiffel Tower?"): an encyclopedic page without a date
    can answer it."""
    asked = " ".join([plan.topic, *plan.search_queries])
    return (plan.query_kind is QueryKind.generic_web and not plan.time_range_hint
            and not RECENT.search(asked) and not CHANGING.search(asked)
            and not names_a_year(asked))


def names_a_year(text: str) -> bool:
    """A year in the text ties what it says to a time ("won the 2022 final")."""
    return bool(_YEAR.search(text))


def off_topic(plan: ExternalQueryPlan, text: str) -> str | None:
    """Why this evidence text is not about what the plan asks, or None when it is.

    The asked place must be named (in any of its forms); every asked subject must be, except
    in a comparison, where one is enough; a year the question names must appear; a single day
    asked (tomorrow, the day after) must be spoken of; and a question that names nothing must
    share most of its terms with the page.
    """
    return _JUDGED.get((json_of(plan), text),
                       lambda: _off_topic(plan, text))


_JUDGED: Judged[str | None] = Judged(maxsize=4096)


def _off_topic(plan: ExternalQueryPlan, text: str) -> str | None:
    kind = plan.query_kind
    if plan.location_hint and not names_the_place(plan.location_hint, text, kind):
        return f"off-topic: does not mention the asked place {plan.location_hint[:40]}"
    subjects = [s for s in plan.subject_entities if s != plan.location_hint]
    named = [s for s in subjects if names(s, text, kind)]
    compare = plan.answer_contract.value == "compare_with_sources"
    if subjects and (not named if compare else len(named) < len(subjects)):
        missing = [s for s in subjects if s not in named]
        return f"off-topic: does not mention the asked subject {', '.join(missing)[:60]}"
    variants = [s for s in named if only_a_variant(s, text, kind)]
    # A comparison's page may be about one of its names only: "Korvo X9 Pro review" is about
    # the asked X9 Pro, though it names the asked X9 only as part of the longer name.
    if variants and (not compare or len(variants) == len(named)):
        return f"off-topic: names {variants[0][:40]} only as part of a longer name"
    if why := _not_salient(plan, text):
        return why
    if why := _kind_clash(plan, text):
        return why
    years = set(_YEAR.findall(" ".join([plan.topic, *plan.search_queries])))
    if missing_years := sorted(y for y in years if y not in text):
        return f"off-topic: not about the asked year {', '.join(missing_years)}"
    if plan.location_hint and (part := _part_of_place(plan, text.split("\n", 1)[0])):
        return f"off-topic: about {part[:20]}, a part of the asked place"
    # A market question asks a level, unless it asks a figure the page states (market cap).
    if (kind is QueryKind.market and not _QUOTE.search(text)
            and not names_an_asked_metric(plan.topic, text)
            and not (_ASKS_MOVE.search(plan.topic) and not _ASKS_LEVEL.search(plan.topic)
                     and _STATES_MOVE.search(text))):
        return "off-topic: quotes no price or level of the asked instrument"
    day = asked_day(plan)
    if day not in (None, "today", "period") and not speaks_of(text, day) and not (
            names_calendar_days(text)):  # "Monday, December 7": the composer knows the date
        return f"off-topic: says nothing about the asked day ({plan.time_range_hint})"
    if not asked_names(plan) and _coverage(plan, text) < TOPIC_COVERAGE:
        return "off-topic: shares too little with the question"
    return None


@functools.lru_cache(maxsize=4096)
def _form_search(form: str) -> tuple[re.Pattern[str], bool]:
    """The form's pattern, and whether it searches the text as it is (CJK forms, acronyms)
    rather than its `plain` form."""
    pattern = _form_pattern(form)
    return pattern, bool(CJK.search(form)) or not pattern.flags & re.IGNORECASE


def _mentions(name: str, text: str, kind: QueryKind | None) -> list[tuple[int, int]]:
    """Where the text names `name`: positions in `text` (`plain` keeps them), a spelling
    one slip away (`_near_miss`) when the name is nowhere as asked."""
    bare = plain(text)
    spans = []
    for form in name_forms(name, kind):
        pattern, exact = _form_search(form)
        spans += [m.span() for m in pattern.finditer(text if exact else bare)]
    fold = _fold(text)
    # (Positions in the folded text are the text's only where folding kept every letter.)
    if not spans and len(fold) == len(text) and (misses := _near_misses(name, fold)):
        spans = [m.span() for phrase in misses
                 for m in re.finditer(rf"(?<![a-z]){re.escape(phrase)}(?![a-z])", fold)]
    return spans


@functools.cache
def _classes() -> dict[str, tuple[str, ...]]:
    """Known names by class: a page titled with another place is not about the asked place,
    and one titled with another company not about the asked company."""
    return {"place": tuple(n for pair in CITIES for n in pair),
            "entity": tuple(n for group in ALIAS_GROUPS for n in group)}


def _rivals(name: str, *, place: bool) -> tuple[str, ...]:
    """The other known names of the asked name's class, or none when its class is unknown."""
    forms = {f.casefold() for f in name_forms(name)}
    for cls, known in _classes().items():
        if (place and cls == "place") or forms & {k.casefold() for k in known}:
            return tuple(k for k in known if k.casefold() not in forms and len(k) >= 2
                         and not any(k.casefold() in f or f in k.casefold() for f in forms))
    return ()


def _not_about(name: str, text: str, kind: QueryKind | None, *, place: bool) -> str | None:
    """Why a page that names `name` is not about it: its title names another of the same
    class, every mention is in passing, or another of the same class is named more often."""
    title, _, body = text.partition("\n")
    if _mentions(name, title, kind):
        return None
    named = aliased.group(1) if (aliased := _ALIASED.match(name)) else name  # 澜图智能 (301286)
    if (not place and kind in _PEOPLE_KINDS and _unknown_name(named)
            and not _mentions(name, _lead(body), kind)):
        # A name nobody has told us about (a person, mostly) is a page's subject only when
        # its title or first sentence names it: "X and others congratulated" is in passing.
        return f"off-topic: names {name[:30]} only in passing, not in its title or lead"
    if not place and (namesake := _namesake(name, title)):
        return f"off-topic: about {namesake[:30]}, not {name[:30]}"
    if place and kind is QueryKind.weather and (where := _forecast_place(title)):
        return f"off-topic: a forecast for {where[:30]}, names {name[:30]} only in passing"
    rivals = _rivals(name, place=place)
    title_fold = _fold(title)
    if other := next((r for r in rivals if _named(r, title, title_fold)), None):
        return f"off-topic: about {other[:30]}, names {name[:30]} only in passing"
    spans = _mentions(name, body, kind)
    if spans and all(in_passing(body, start, end) for start, end in spans):
        return f"off-topic: names {name[:30]} only in passing"
    body_fold = _fold(body)  # only the rivals the body names can outnumber the asked name
    counts = {r: len(_form_pattern(r).findall(body)) for r in rivals
              if _named(r, body, body_fold)}
    if counts and (top := max(counts, key=lambda r: counts[r])) and counts[top] > len(spans):
        return f"off-topic: mostly about {top[:30]}, not {name[:30]}"
    return None


# Words after a company's first word that do not make another company of it.
_SAME_COMPANY = frozenset({"inc", "corp", "corporation", "co", "company", "ltd", "limited",
                           "llc", "plc", "group", "holdings", "ag", "sa", "nv", "se", "gmbh",
                           "says", "said", "reports", "reported", "posts", "shares", "stock"})


def _namesake(name: str, title: str) -> str | None:
    """Another name that shares the asked name's first word, in a title that does not name
    the asked one: "Tessaro Marine posts quarterly results" is not about Tessaro Motors."""
    words = name.split()
    if (len(words) < 2 or not words[0][:1].isupper() or CJK.search(name)
            or re.search(r"\d", name)):
        return None  # a model's editions are the variant check's (GPT-5 mini, X9 Lite)
    for m in re.finditer(rf"(?<![\w-]){re.escape(words[0])}\s+([A-Z][\w&'’-]*)", title):
        word = m.group(1).casefold()
        if word != words[1].casefold() and word not in _SAME_COMPANY and not is_qualifier(word):
            return m.group(0)
    return None


# A forecast page's title names the place it forecasts before its weather words: "云桥县天气预报",
# "Fennick, OR Weather Forecast".
_FORECAST_TITLE = CaseBlind(
    r"^\s*(.{2,40}?)\s*(?:[-–—|:]\s*)?(?:未来\s*\d+\s*天|今天|明天|一周|\d+\s*天)?\s*"
    r"(?:天气预报|天气|气象)(?![网站台局通])|^\s*(.{2,40}?)\s*(?:[-–—|:]\s*)?(?:\d+[- ]day\s+)?"
    r"(?:weather|forecast)\b")
_PLACE_WRITTEN = re.compile(rf"[{CJK_CHARS}]{{1,8}}[县市区镇乡村州]$|^[A-Z][\w .'-]*, [A-Z]{{2}}$")


def _forecast_place(title: str) -> str | None:
    """The place a forecast page's title names, when it is written as a place (a county, a
    town, "Town, ST") or is one the table knows."""
    # Runs of white space made one: the pattern's spaces around the place would otherwise
    # split a run of them every way (4 s on a title of 400 spaces).
    found = _FORECAST_TITLE.match(" ".join(title.split()))
    where = (found.group(1) or found.group(2) or "").strip(" ,") if found else ""
    if not where or asked_when(where) is not None:
        return None
    if _PLACE_WRITTEN.search(where) or qualified_forms(where) or any(  # a country's may not
            m.start == 0 and m.end == len(where) and any(p.kind != "country" for p in m.readings)
            for m in find_places(where, place_question=True)):
        return where
    return None


# Kinds of question that can be about a person (a weather or market question is about a
# place or an instrument).
_PEOPLE_KINDS = (QueryKind.news, QueryKind.generic_web, QueryKind.company)


def _unknown_name(name: str) -> bool:
    """A name the gazetteer does not know and that is no model number."""
    return name.casefold() not in _alias_index() and not re.search(r"\d", name)


def _lead(body: str) -> str:
    sentences = split_sentences(body)
    return sentences[0] if sentences else ""


def _not_salient(plan: ExternalQueryPlan, text: str) -> str | None:
    """Evidence is about a name when the name is its subject, not when it merely mentions
    it; in a comparison, or a question with several names, one being the page's own is
    enough (each must still be named)."""
    reasons = [_not_about(n, text, plan.query_kind, place=n == plan.location_hint)
               for n in asked_names(plan)]
    # With several names, one of them is the page's subject and the others what it says of
    # it ("how much did WeWork pay for Meetup": a page about WeWork naming Meetup once).
    if plan.answer_contract.value == "compare_with_sources" or len(reasons) > 1:
        return None if any(r is None for r in reasons) else reasons[0] if reasons else None
    return next((r for r in reasons if r), None)


def _kind_clash(plan: ExternalQueryPlan, text: str) -> str | None:
    """A weather question is answered by a weather report and nothing else, and a weather
    report answers nothing else."""
    weather = plan.query_kind is QueryKind.weather
    if weather and not is_weather_line(text):
        return "off-topic: not a weather report"
    if not weather and is_weather_report(text):
        return "off-topic: a weather report, the question is not about the weather"
    return None


def fits_the_question(plan: ExternalQueryPlan, sentence: str) -> bool:
    """Whether a sentence may answer: of the question's kind (a weather line for weather, no
    temperature otherwise) and not naming the asked names only in passing."""
    weather = plan.query_kind is QueryKind.weather
    if any(only_a_variant(n, sentence, plan.query_kind) for n in _variant_checked(plan)):
        return False
    if is_weather_line(sentence) if weather else not reads_temperature(sentence):
        spans = [sp for n in asked_names(plan) for sp in _mentions(n, sentence, plan.query_kind)]
        return not spans or not all(in_passing(sentence, s, e) for s, e in spans)
    return False


def only_a_variant(name: str, text: str, kind: QueryKind | None = None) -> bool:
    """Whether the text names `name`, in any of its forms, only inside longer names ("Arsenal
    Women" for Arsenal) or without a qualifier the question gave it."""
    found = [m for form in name_forms(name, kind) for m in family_mentions(form, text)]
    return bool(found) and not any(found)


@of_the_last
def _variant_checked(plan: ExternalQueryPlan) -> tuple[str, ...]:
    """The names whose variants are something else: the asked subjects (not the place),
    model names and offices the question gives."""
    subjects = [n for n in plan.subject_entities if n != plan.location_hint]
    return tuple(dict.fromkeys([*subjects, *asked_models(plan.topic, subjects),
                                *asked_titles(plan.topic)]))


def asks_a_level(question: str) -> bool:
    """Whether a question asks a price or a quote ("现在多少钱一吨", "share price")."""
    return bool(_ASKS_LEVEL.search(question))


def quotes_a_level(text: str) -> bool:
    """Whether the text quotes a market level (a price, a close, a rate)."""
    return bool(_QUOTE.search(text))


def quoted_levels(text: str) -> list[float]:
    """Every market level the text quotes ("closed at $231.40" -> 231.4)."""
    return [float(m.group(1).replace(",", "")) for m in _QUOTE.finditer(text)]


def _part_of_place(plan: ExternalQueryPlan, title: str) -> str | None:
    """A page titled with a district of the asked city (北京市朝阳区) is about that district,
    unless the question names it."""
    for form in name_forms(plan.location_hint or ""):
        if CJK.search(form):
            part = _district_after(form, title)
            if part and part not in plan.topic:
                return part
    return None


def _coverage(plan: ExternalQueryPlan, text: str) -> float:
    wanted = [terms(q) for q in [plan.topic, *plan.search_queries] if q.strip()]
    return max((overlap(t, text) for t in wanted if t), default=0.0)


# What follows a city's name when a district of it is named: 市?朝阳区. One pattern for every
# city (a pattern per name, with this character class, took 7 ms to compile).
# Not 部分区域 ("some areas") nor 行政区划.
_DISTRICT_AFTER = re.compile(rf"市?((?!部分)[{CJK_CHARS}]{{1,4}}[区县])(?![域划])")


def _district_after(form: str, title: str) -> str | None:
    """The district named right after the first mention of `form` that has one."""
    at = title.find(form)
    while at >= 0:
        if part := _DISTRICT_AFTER.match(title, at + len(form)):
            return part.group(1)
        at = title.find(form, at + 1)
    return None


@functools.cache
def _known_names() -> tuple[tuple[str, str], ...]:
    """Every known name of two characters or more, with its casefolded key."""
    return tuple((name, name.casefold()) for group in [*ALIAS_GROUPS, *CITIES]
                 for name in group if len(name) >= 2)


_Known = dict[str, list[tuple[str, str]]]


@functools.cache
def _known_index() -> tuple[_Known, _Known, list[tuple[str, str]]]:
    """The known names by the first two characters of what a text must contain for each
    (`_needle`): looked up in the text as is, in its fold, or (no needle) always tried."""
    exact: _Known = {}
    folded: _Known = {}
    always = []
    for name, key in _known_names():
        needle, is_exact, _ = _needle(name)
        if needle is None:
            always.append((name, key))
        else:
            (exact if is_exact else folded).setdefault(needle[:2], []).append((name, key))
    return exact, folded, always


def _known_in(text: str, fold: str) -> list[tuple[str, str]]:
    """The known names whose needle's first two characters the text has: the only ones it
    can name (a few of several hundred)."""
    exact, folded, always = _known_index()
    found = list(always)
    for haystack, index in ((text, exact), (fold, folded)):
        for pair in {haystack[i:i + 2] for i in range(len(haystack) - 1)} & index.keys():
            found += index[pair]
    return found


def names_something_else(plan: ExternalQueryPlan, sentence: str) -> bool:
    """A sentence that names a known place or company that was not asked, and nothing that
    was: a line about another city on a page about several."""
    asked = asked_names(plan)
    if not asked or any(names(a, sentence, plan.query_kind) for a in asked):
        return False
    if plan.query_kind in (QueryKind.company, QueryKind.market) and _OPENS_WITH_A_FIRM.match(
            sentence):
        return True  # "Quillon Technologies slipped 1.2% to $31.75."
    asked_forms = _asked_forms(plan)
    fold = _fold(sentence)
    return any(_named(n, sentence, fold) for n, key in _known_in(sentence, fold)
               if key not in asked_forms)


# A line whose subject is a firm by its name: no list need know it.
_OPENS_WITH_A_FIRM = re.compile(
    r"(?!The\s|This\s|That\s|Its\s)(?:[A-Z][\w&'’.-]*\s){1,3}(?:Technologies|Technology|Systems|Group|Holdings|Inc\.?|Ltd\.?"
    r"|Corp\.?|Corporation|Motors|Bank|Bancorp|Industries|Pharmaceuticals|Therapeutics|Labs"
    r"|Energy|Airlines|Insurance|Logistics|Robotics|Semiconductors?|Electronics|Foods"
    r"|Capital|Partners|Networks|Software|Materials|Mining|plc|PLC|AG|SA|NV)"
    r"(?:,|\s+(?:shares?\s+|stock\s+)?[a-z])")


def about_another(plan: ExternalQueryPlan, sentence: str) -> bool:
    """A sentence that names the asked name only to set another beside it: 澜岫科技的竞争对手
    岑川智能公布…, 与瑞砾股份无关联的瑞砾控股…, "Halvora's rival Grevholt reported…",
    "Grevholt, unrelated to Halvora, …": what it states is the other's."""
    if any(_kin_firm(form).search(sentence) and form not in sentence.casefold()
           for form in _asked_forms(plan) if _FIRM_KIND.search(form)):
        return True  # asked 鸿岚地产, the line names 鸿岚集团 (the building society, not Insurance)
    if not _RELATION_WORD.search(sentence):
        return False  # most lines: one scan, not one per asked form
    if (separate := _SEPARATE.search(sentence)) and not any(
            names(a, separate.group(1), plan.query_kind) for a in asked_names(plan)):
        return True  # "The separate Hollin Creek fire, 40 miles north of Hollin Ridge, ..."
    for pattern in (_PART_OF, _RELATED_NAMED):
        if (other := pattern.search(sentence)) and not _is_asked(other.group(1), plan):
            # "Brightmoor Systems Asia, the company's Singapore-listed subsidiary, ...",
            # "Rival Quillon Technologies posted ...", 控股子公司澄峰智能同期净利润为…
            return True
    return any(_beside(form).search(sentence) for form in _asked_forms(plan))


# What kind of firm a name says it is: the same first word with another kind is another firm.
_FIRM_KINDS_ZH = (r"集团|地产|置业|保险|银行|证券|控股|股份|科技|汽车|电器|电子|医药|制药|能源|传媒"
                  r"|物流|航空|食品|建设|矿业|化工|钢铁|电力|电气|通信|软件|智能|光电|重工|机械|实业"
                  r"|新能源|新材料|环保|生物|物业|水务|燃气|百货|半导体|机器人|航运|影业|酒业|乳业|纺织|家居"
                  r"|电池|动力|储能|光伏|芯片|微电子|精密|装备|农业|文旅|教育|数据|信息|网络|游戏|电商"
                  r"|零售|医疗|健康|材料|投资|资本|信托|基金|租赁|船舶|轮胎|玻璃|水泥|纸业|药业|文化|体育")
FIRM_KINDS_EN = (r"insurance|bank|building society|credit union|group|holdings|capital"
                  r"|technologies|systems|motors|energy|airlines|logistics|foods|properties"
                  r"|homes|pharma|pharmaceuticals|media|mining|steel|telecom|software|robotics")
# More kinds a page writes after a firm's first name, capitalised ("Corvane Labs"): in
# lower case, after a place, most are everyday words ("denver power outage").
_MORE_FIRM_KINDS_EN = (r"labs|biotech|therapeutics|semiconductors?|electronics|materials|networks"
                       r"|industries|airways|healthcare|chemicals|aerospace|automotive|studios"
                       r"|realty|petroleum|utilities")
_FIRM_KIND = re.compile(rf"(?:{_FIRM_KINDS_ZH})$|(?<![a-z])(?:{FIRM_KINDS_EN})$")


@functools.lru_cache(maxsize=1024)
def _kin_firm(form: str) -> re.Pattern[str]:
    """The asked firm's first name with another kind after it: 鸿岚集团 for 鸿岚地产."""
    kind = _FIRM_KIND.search(form)
    assert kind is not None
    stem = form[:kind.start()].strip()
    if CJK.search(form):
        return re.compile(rf"{re.escape(stem)}(?!{re.escape(kind.group())})(?:{_FIRM_KINDS_ZH})")
    return re.compile(rf"(?<![\w]){re.escape(stem)}\s+(?!{re.escape(kind.group())})"
                      rf"(?:{FIRM_KINDS_EN})(?![\w])", re.IGNORECASE)


def _is_asked(name: str, plan: ExternalQueryPlan) -> bool:
    """Whether a name read off a line is an asked one: a Chinese one read on (澄峰智能同期净利润)
    starts with it."""
    name = name.strip().casefold()
    if CJK.search(name):
        return any(name.startswith(form) for form in _asked_forms(plan))
    return name in _asked_forms(plan)


# A name said to be a part of the group a page is about: what it states is the part's.
_PART_OF = re.compile(
    r"((?:[A-Z][\w&'’-]*\s?){1,5}),\s+(?:the company's|the company’s|the group's|the group’s"
    r"|its|a|an)\s+(?:[\w-]+\s+){0,2}(?:subsidiary|unit|arm|affiliate|division)\b")

# Another name, introduced by how it relates to the page's: "rival Quillon Technologies".
_RELATED_NAMED = re.compile(
    rf"(?:^|(?<=[，,;；。]))\s*(?:(?:控股|全资|参股)子公司|竞争对手|(?i:rivals?|competitors?)\s+)"
    rf"((?:[{CJK_CHARS}]{{2,8}})|(?:[A-Z][\w&'’-]*\s?){{1,4}})")

_RELATIONS = (r"(?:竞争对手|对手|同行|友商|子公司|母公司|控股股东|合作伙伴|合作方|供应商|客户)",
              r"(?:rivals?|competitors?|peers?|parent(?: company)?|subsidiary|suppliers?"
              r"|customers?|partners?)")


_RELATION_WORD = CaseBlind(rf"{_RELATIONS[0]}|无关|无[{CJK_CHARS}]{{1,3}}?关[系联]|没有关联"
                           rf"|不是同一|{_RELATIONS[1]}"
                           r"|unrelated|no relation|not to be confused|separate")
# A line about another thing of the same kind, said to be another: "the separate X fire".
_SEPARATE = re.compile(r"(?<![A-Za-z])[Tt]he (?:separate|unrelated) ((?:[A-Z][\w'-]*\s?){1,4})")


@functools.lru_cache(maxsize=1024)
def _beside(form: str) -> re.Pattern[str]:
    name = re.escape(form)
    if CJK.search(form):
        return re.compile(rf"{name}的{_RELATIONS[0]}|[（(]{name}(?:控股|全资|参股|旗下)?子公司[）)]"
                          rf"|与{name}(?:并|毫|之间)?(?:无关|没有|不是同一|无(?:任何)?"
                          rf"[{CJK_CHARS}]{{0,3}}?(?:关联|关系))")
    return re.compile(
        rf"(?<![\w]){name}(?:'s|’s)\s+{_RELATIONS[1]}\b"
        rf"|(?<![\w]){name}(?:'s|’s)\s+(?:[\w-]+\s+)?(?:subsidiary|parent company|rival)\b"
        rf"|(?:subsidiary|unit|arm|affiliate|division) of (?:the\s+)?{name}(?![\w])"
        rf"|(?:unrelated to|no relation to|not to be confused with|(?:rivals?|competitors?) "
        rf"(?:of|to))\s+(?:the\s+)?{name}(?![\w])", re.IGNORECASE)


@of_the_last
def _asked_forms(plan: ExternalQueryPlan) -> frozenset[str]:
    """Every form of every asked name, casefolded."""
    return frozenset(f.casefold() for a in asked_names(plan)
                     for f in name_forms(a, plan.query_kind))


def subject_readings(plan: ExternalQueryPlan, texts: Iterable[str]) -> tuple[str, str] | None:
    """An asked subject that is an everyday word and a company's name (苹果, 小米) in a question
    that did not say which (not a company or market question), when the evidence reads it
    both ways: (the word, the company)."""
    if plan.query_kind in (QueryKind.company, QueryKind.market):
        return None
    pages = list(texts)
    for word in plan.subject_entities:
        company = EVERYDAY_WORD_COMPANIES.get(word)
        if company is None:
            continue
        as_company = [names(word, t, QueryKind.company) for t in pages]
        if any(as_company) and any(word in t and not c for t, c in zip(pages, as_company,
                                                                        strict=True)):
            return word, company
    return None


def firm_readings(plan: ExternalQueryPlan, texts: Iterable[str]) -> tuple[str, list[str]] | None:
    """A bare name no list knows, asked of a firm's figures, that the evidence reads as two
    firms or more by the kind written after it ("Corvane Systems" and "Corvane Logistics" for
    "corvane", 澄峰科技 and 澄峰电气 for 澄峰): (the name, the firms). Nobody may guess which."""
    pages = list(texts)
    if plan.query_kind is not QueryKind.weather and (
            teams := _place_prefixed(plan, pages) or _named_before(plan, pages)
            or _listed_twice(plan, pages)):
        return teams
    if plan.query_kind not in (QueryKind.company, QueryKind.market) and not (
            asked_metrics(plan.topic) or asked_periods(plan.topic)):
        return None
    for name in plan.subject_entities:
        if (name == plan.location_hint or _FIRM_KIND.search(name.casefold())
                or not _unknown_name(name)):
            continue
        firms: dict[str, str] = {}
        for text in pages:
            # Not in a title-cased headline: "Corvane Completes Capital Raise" names no firm.
            for m in _firm_named(name).finditer(_body(text)):
                firms.setdefault(" ".join(m.group().split()).casefold(), m.group())
        if len(firms) >= 2:
            return name, list(firms.values())
    return None


def _listed_twice(plan: ExternalQueryPlan, pages: list[str]) -> tuple[str, list[str]] | None:
    """An asked firm the pages list under two tickers: "Halden Group Inc. (NYSE: HLDN)" and
    "Halden Group Ltd. (TSX: HGL)", 星途科技（301562） and 星途科技（920318）. Two companies
    of one name, unless the question gives the ticker or the exchange."""
    asked = plan.topic.casefold()
    for name in plan.subject_entities:
        if name == plan.location_hint or len(name) < 2:
            continue
        found: dict[str, str] = {}
        for text in pages:
            for m in _ticker_after(name).finditer(_body(text)):
                if (market := _market(m)) is not None:
                    found.setdefault(f"{market} {_bare_code(m['ticker'])}",
                                     " ".join(m.group().split()))
        markets = {key.split(" ", 1)[0] for key in found}
        # Two codes of the A-share market, or two exchanges' tickers: two companies. An A+H
        # (002594 and 01211) or another dual listing, or two classes of shares, are one's.
        two = markets == {"a-share"} if "a-share" in markets or "hk" in markets else len(
            markets) >= 2
        if len(found) >= 2 and two and not any(
                key.split(" ", 1)[1] in asked or _exchange_asked(reading, asked)
                for key, reading in found.items()):
            return name, list(found.values())
    return None


def _exchange_asked(reading: str, asked: str) -> bool:
    exchange = _EXCHANGE.search(reading)
    return exchange is not None and exchange.group().casefold() in asked


# An exchange a ticker is written with: "NYSE: HLDN", "TSX: HGL", "HKEX: 0700".
_EXCHANGE = re.compile(r"(?<![A-Za-z])(?:NYSE|NASDAQ|Nasdaq|AMEX|TSX|TSXV|LSE|ASX|HKEX|SGX|SSE"
                       r"|SZSE|BSE|NSE|Euronext|XETRA|OTC)(?![A-Za-z])|创业板|科创板|北交所|主板"
                       r"|深交所|上交所|港交所")


def _market(ticker: re.Match[str]) -> str | None:
    """Where a ticker trades: its exchange as written, "a-share" for a six-digit code, "hk"
    for a four- or five-digit one; None for what is no ticker ("(US)", "(2024)", "(GPU)")."""
    code, exchange = ticker["ticker"], ticker["exchange"]
    if exchange:
        return exchange.casefold()
    digits = _bare_code(code)
    if digits.isdigit() and not (len(digits) == 4 and digits[:2] in ("19", "20")):
        return "a-share" if len(digits) == 6 else "hk" if len(digits) in (4, 5) else None
    return None


def _bare_code(code: str) -> str:
    """The code without its market's suffix: 600519.SH is 600519."""
    return code.split(".", 1)[0].casefold() if code[:1].isdigit() else code.casefold()


@functools.lru_cache(maxsize=1024)
def _ticker_after(name: str) -> re.Pattern[str]:
    """The name, its legal form and the ticker in brackets right after it: "Halden Group
    Inc. (NYSE: HLDN)", 星途科技（301562）, 比亚迪（01211.HK）."""
    forms = (r"(?:(?:\s*,\s*|\s+)(?:Inc|Ltd|Corp|Co|Plc|PLC|AG|SA|NV|N\.V|LLC|Limited"
             r"|Corporation)\.?)?")
    return re.compile(rf"{_spelt(name)}{forms}\s{{0,3}}[（(]\s*"
                      rf"(?:(?P<exchange>[A-Za-z]{{2,8}})\s*[:：]\s*)?"
                      rf"(?P<ticker>[A-Z]{{1,6}}(?:\.[A-Z]{{1,2}})?|\d{{4,6}}(?:\.[A-Z]{{2}})?)"
                      rf"\s*[)）]")


def _spelt(name: str) -> str:
    """The name's pattern, any case for a Latin one, any space between its words."""
    words = [re.escape(w) for w in name.split()]
    return (r"(?<![\w])(?i:" + r"\s+".join(words) + ")" if name.isascii()
            else r"\s*".join(words))


def _place_prefixed(plan: ExternalQueryPlan, pages: list[str]) -> tuple[str, list[str]] | None:
    """A bare Chinese name no list knows that the pages write after two places: 临舟海鹰 and
    澄川海鹰 for 海鹰, two clubs of one nickname. A prefix is read only where a clause starts
    with it, and an everyday word (此前, 目前) is none."""
    for name in plan.subject_entities:
        if (not CJK.search(name) or len(name) > 3 or name == plan.location_hint
                or not _unknown_name(name)):
            continue
        found: dict[str, str] = {}
        prefixed = re.compile(rf"(?:^|(?<=[。，；：、,;:\s]))([{CJK_CHARS}]{{2}}){re.escape(name)}")
        for text in pages:
            for m in prefixed.finditer(text):
                if not is_chinese_word(m.group(1)):
                    found.setdefault(m.group(1), m.group())
        if len(found) >= 2:
            return name, list(found.values())
    return None


def _body(text: str) -> str:
    """An evidence text without its title line (its first line, when it has more)."""
    return text.partition("\n")[2] or text


def _named_before(plan: ExternalQueryPlan, pages: list[str]) -> tuple[str, list[str]] | None:
    """A bare one-word name no list knows that the pages write after two different proper
    names: "the Sable Creek College Foxhounds" and "the Marrow Valley University Foxhounds"
    for "foxhounds", two teams of one nickname."""
    for name in plan.subject_entities:
        if (CJK.search(name) or " " in name.strip() or name == plan.location_hint
                or not _unknown_name(name)):
            continue
        found: dict[str, str] = {}
        # After "the", capitalised words of letters only: no sentence's end, no possessive,
        # no model number ("the X5 Pro").
        before = re.compile(rf"(?<![\w])[Tt]he\s+((?:[A-Z][a-z]+(?:-[A-Z][a-z]+)?\s+){{1,4}})"
                            rf"(?i:{re.escape(name)})(?![\w'’])")
        for text in pages:
            for m in before.finditer(_body(text)):  # "The Hawks Host The Top-Ranked Foxhounds"
                words = [w for w in m.group(1).split() if w not in _NOT_A_PREFIX]
                if words:
                    found.setdefault(words[0].casefold(),
                                     " ".join([*words, m.group().split()[-1]]))
        if len(found) >= 2:
            return name, list(found.values())
    return None


# Capitalised words before a name that are not part of another's: "The Foxhounds", "Sunday's".
_NOT_A_PREFIX = frozenset({
    "Coach", "Senior", "Junior", "Freshman", "New", "Old", "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March", "April", "May",
    "June", "July", "August", "September", "October", "November", "December"})


@functools.lru_cache(maxsize=1024)
def _firm_named(name: str) -> re.Pattern[str]:
    """A firm of the name as a page writes one: the name and its kind at the head of a
    sentence or a clause (澄峰电气披露…, "Corvane Logistics posted"), the kind capitalised in
    English ("Corvane capital spending" names no firm)."""
    if CJK.search(name):
        return re.compile(rf"(?:^|(?<=[。，；：、（(“\s]))(?:据|由)?{re.escape(name)}"
                          rf"(?:{_FIRM_KINDS_ZH})(?=[（(，、]|(?:公司|集团)?(?:发布|公布|披露|宣布|表示|称"
                          rf"|公告|实现|营收|净利|股价|今年|上半年|第?[一二三四]季度|前三季度|\d))")
    kinds = "|".join(k.title() for k in f"{FIRM_KINDS_EN}|{_MORE_FIRM_KINDS_EN}".split("|"))
    # Up to two capitalised words may come between: "Halvorsen Marine Systems".
    return re.compile(rf"(?<![\w])(?i:{re.escape(name)})(?:\s+[A-Z][a-z]+){{0,2}}?\s+(?:{kinds})"
                      rf"(?![\w])")


@functools.lru_cache(maxsize=4096)
def _qualified(form: str) -> re.Pattern[str]:
    """A form of a place with what tells which place it is: the province or city before a
    Chinese name, the state or country after a Latin one."""
    if CJK.search(form):
        # A form that ends in its own suffix (青岚镇) needs no other after it.
        suffix = "" if form[-1] in "市区县镇乡" else "[市区县镇乡]"
        return re.compile(rf"([{CJK_CHARS}]{{2,3}}?)[省市]?{re.escape(form)}{suffix}")
    # "Paris, Texas", "Springfield, Ill.": a capitalised word after the comma, never
    # "South Dakota, and".
    return re.compile(rf"{re.escape(form)}\s*,\s*((?-i:[A-Z])[A-Za-z.]+)", re.IGNORECASE)


def place_readings(plan: ExternalQueryPlan, texts: Iterable[str]) -> list[str]:
    """The different places the evidence reads the asked place as ("Paris, France" and
    "Paris, Texas"; 北京市朝阳区 and 辽宁省朝阳市), one qualifier per page at most."""
    place = plan.location_hint
    if not place:
        return _subject_regions(plan, texts)
    readings: list[str] = []
    pages = list(texts)
    for text in pages:
        for form in name_forms(place):
            qualified = _qualified(form).search(text)
            if qualified and qualified.group(1) not in readings:
                readings.append(qualified.group(1))
                break
            if qualified:
                break
    if len(readings) < 2 and not CJK.search(place) and place_of(place) is None:
        return _regions_of(place, pages) or readings
    return readings



def asked_place(plan: ExternalQueryPlan) -> str:
    """The place whose readings `place_readings` tells apart: the plan's place, else the
    first asked name that no table knows (a town asked as a subject: "the parking fine in
    ashgrove")."""
    if plan.location_hint:
        return plan.location_hint
    return next((n for n in plan.subject_entities if n and (
        (_ZH_INSTITUTION_NAME.search(n) or _bare_zh_name(n)) if CJK.search(n)
        else not qualified_forms(n) and not find_places(n))), "")


def _bare_zh_name(name: str) -> bool:
    """A short Chinese name that no table knows and no dictionary has (霁溪): a place or a
    firm, told apart from a namesake by the province or city a page writes before it."""
    return (len(name) <= 3 and re.fullmatch(f"[{CJK_CHARS}]+", name) is not None
            and _unknown_name(name) and not is_chinese_word(name))


# A Chinese school, hospital, court or station: namesakes are told apart by the county or city
# written before the name (浙江省萸山县望篁中学, 四川省砚坪县望篁中学).
_ZH_INSTITUTION_NAME = re.compile(f"(?:{ZH_INSTITUTIONS})$")
_ZH_UNIT = "省市县区镇乡"


def _subject_regions(plan: ExternalQueryPlan, texts: Iterable[str]) -> list[str]:
    return _regions_of(asked_place(plan), texts)


def _regions_of(name: str, texts: Iterable[str]) -> list[str]:
    """The regions the evidence places a name no table knows in ("Ashgrove, North Carolina"
    and "Ashgrove, Georgia", "Wendlecombe in Northumberland" and "the Somerset town"):
    namesakes, when there are two or more. One region per page."""
    if not name:
        return []
    if CJK.search(name):
        return _zh_regions_of(name, texts)
    readings: list[str] = []
    # "Ashgrove, N.C.", and a letterhead's "ASHGROVE CITY, UTAH".
    written = re.compile(rf"(?<![\w]){re.escape(name)}(?:\s+(?:city|town|village|township"
                         rf"|borough))?(?=\s*,)", re.IGNORECASE)
    pages = list(texts)
    in_words: list[str] = []
    for text in pages:
        region = next((text[m.end():after[0]].strip(" ,") for m in written.finditer(text)
                       if (after := region_after(text, m.end())) is not None), None)
        if region is None and (worded := _region_in_words(name, text)):
            in_words.append(worded)
        elif region and region not in readings:
            readings.append(region)
    # A region said in words counts where no page names it beside another reading: "Kelby
    # in Cumbria" and "Kelby, England" are one place said two ways.
    for region in dict.fromkeys(in_words):
        if region not in readings and not any(
                _names_region(region, t) and _names_region(other, t)
                for t in pages for other in [*readings, *in_words] if other != region):
            readings.append(region)
    return readings if len(readings) >= 2 else []


def _zh_regions_of(name: str, texts: Iterable[str]) -> list[str]:
    """The counties or cities the evidence writes right before a Chinese name, one per page:
    namesakes when there are two or more."""
    readings: list[str] = []
    for text in texts:
        unit = next(filter(None, (_unit_before(text, at) for at in _all_at(name, text))), None)
        if unit is None:
            unit = _addressed_unit(name, text)
        if unit and not any(unit.endswith(r) or r.endswith(unit) for r in readings):
            readings.append(unit)
    return readings if len(readings) >= 2 else []


# A county or city written with its province: the page's own place, named where a notice
# starts ("广东省南溪县供水有限公司公告：…清河湾镇墟…停水"; of 广东省临江市南溪县, the county).
_ADDRESSED_UNIT = re.compile(
    rf"[{CJK_CHARS}]{{2,3}}?省(?:[{CJK_CHARS}]{{2,3}}?[市州](?=[{CJK_CHARS}]{{2,3}}?[县区]))?"
    rf"([{CJK_CHARS}]{{2,3}}?[县市区])")
_SENTENCE_END = re.compile(r"[。！？!?\n]")
# "相邻的青禾湾镇": a town beside the page's own county is not in it.
_NEIGHBOUR = re.compile(r"相邻|邻近|毗邻|周边|附近|邻县|邻市")


def _addressed_unit(name: str, text: str) -> str | None:
    """The county or city written with its province in the first sentence that names `name`,
    before the name (one pass over the text)."""
    start = 0
    for end in [*(m.start() for m in _SENTENCE_END.finditer(text)), len(text)]:
        at = text.find(name, start, end)
        if at >= 0:
            units = list(_ADDRESSED_UNIT.finditer(text, start, at))
            if units and not _NEIGHBOUR.search(text, units[-1].end(), at):
                return units[-1].group(1)
        start = end + 1
    return None


def _all_at(name: str, text: str) -> Iterator[int]:
    at = text.find(name)
    while at >= 0:
        yield at
        at = text.find(name, at + 1)


def _unit_before(text: str, at: int) -> str | None:
    """The county, city or province written right before `at`: 萸山县 of 浙江省萸山县望篁中学."""
    for n in (2, 3, 4):
        unit = text[max(at - n, 0):at]
        if len(unit) < n or unit[-1] not in _ZH_UNIT or not CJK.fullmatch(unit[0]):
            continue
        if unit[0] in "我本该全此":
            return None  # 我县望篁中学: the page's own county, not another
        before = text[at - n - 1] if at > n else ""
        if not before or before in _ZH_UNIT or not CJK.match(before):
            return unit
    return None


# What a page says a place no table knows is in: "Wendlecombe in Northumberland", "Stellingford
# High Street in Kent", "the Somerset town". Never a month, a day, or an institution's word
# ("Kelby Rovers in League Two", "in March").
_NOT_A_REGION = frozenset({
    "league", "cup", "division", "conference", "round", "final", "court", "council",
    "parliament", "congress", "senate", "street", "road", "square", "park", "hall", "centre",
    "center", "stadium", "arena", "group", "series", "championship", "trophy", "week",
    "quarter", "year", "the", "its", "his", "her", "their", "our", "this", "that", "act", "bill",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "spring", "summer", "autumn", "winter", "english",
    "chinese", "french", "german", "spanish"})
_REGION_WORD = r"(?-i:[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?)"
_KIND_OF_PLACE = r"(?:town|village|city|borough|parish|suburb|county|district|hamlet)"


@functools.lru_cache(maxsize=1024)
def _in_region(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?<![\w]){re.escape(name)}(?:\s+(?-i:[A-Z][a-z]+)){{0,2}},?\s+in\s+({_REGION_WORD})"
        rf"|(?<![\w])(?-i:[Tt]he)\s+({_REGION_WORD})\s+{_KIND_OF_PLACE}(?:'s|’s)?(?![\w])",
        re.IGNORECASE)


def _region_in_words(name: str, text: str) -> str | None:
    """The region a page puts an unlisted place in, in words rather than after a comma."""
    if name.casefold() not in text.casefold():
        return None
    for match in _in_region(name).finditer(text):
        region = match.group(1) or match.group(2)
        words = region.casefold().replace("-", " ").split()
        if region.casefold() != name.casefold() and not set(words) & _NOT_A_REGION:
            return region
    return None


def _names_region(region: str, text: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(region)}(?![\w])", text) is not None
