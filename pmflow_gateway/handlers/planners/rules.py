"""The rules planner: the default planner, no model needed (zh and en).

It reads the question the way a search box user would phrase it: what kind of fact is asked
for (keywords, then the kind of the names it recognises), which names and place it is about
(gazetteer plus name shapes), which time words it uses, and whether there is anything left
to search for at all. Deterministic, regex only, well under a millisecond per question.
The words it reads (kind, time and filler words, names) are in `words.py`; this module
decides the plan: the kind, the answer contract and the search phrasing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.currencies import currency_codes, currency_names
from pmflow_gateway.contract.gazetteer import (
    COMMODITIES,
    CRYPTO,
    CURRENCIES,
    DEFAULT_PREFERRED_DOMAINS,
    EVERYDAY_WORD_COMPANIES,
    INDICES,
    MODEL_VENDOR_DOMAINS,
    STOCK_EXCHANGE_DOMAINS,
)
from pmflow_gateway.contract.metrics import asked_metrics, metric_words
from pmflow_gateway.contract.places import Place, local_language, search_name
from pmflow_gateway.contract.qualifiers import SAME_PERIOD, names_only_a_role, replaced_by
from pmflow_gateway.contract.relevance import RECENT, asks_a_level
from pmflow_gateway.contract.slots import Slot, asked_slot
from pmflow_gateway.contract.text import CJK, CJK_CHARS, is_cjk, strip_invisible
from pmflow_gateway.contract.variants import EDITION as _EDITION_WORD
from pmflow_gateway.contract.variants import is_qualifier
from pmflow_gateway.contract.when import asked as asked_when
from pmflow_gateway.contract.when import canonical_hint
from pmflow_gateway.handlers.planners.place_queries import other_language_query
from pmflow_gateway.handlers.planners.words import (
    EN_STOP,
    FILLERS,
    KIND_WORDS,
    TIME,
    ZH_NOISE,
    Span,
    find_names,
    latin,
    points_without_naming,
)
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlannerInfo,
    QueryKind,
    RouteDecided,
)

_INSTRUMENTS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (name, frozenset(n.lower() for n in names))
    for name, names in (("currency", (*CURRENCIES, *currency_names(), *currency_codes())),
                        ("crypto", CRYPTO),
                        ("commodity", COMMODITIES), ("index", INDICES)))
_WEAK_MARKET = re.compile(r"价格|" + latin(r"price|quote"))
_TICKER = re.compile(r"\$?[A-Z]{1,5}|\d{6}")

_DAYS_AHEAD = re.compile(r"(?:未来|next)\s*(\d+)\s*(?:天|日|days)")

_COMPARE = re.compile(r"对比|比较|区别|差异|差别|" + latin(
    r"vs\.?|versus|compare[sd]?|comparison|difference between|better than"))
# "Who won Rovers vs United" asks the winner of one match, not a comparison of two teams.
_RESULT = re.compile(r"谁赢|谁胜|输赢|胜负|" + latin(r"who won|who wins|who beat|winner"))
_WHICH = re.compile(r"哪个|哪家|哪一个|谁更|谁的|" + latin(r"which"))
_BOTH = re.compile(r"和|与|跟|还是|" + latin(r"and|or"))
_DIRECT = re.compile(
    r"是谁|谁是|是多少|多少|几度|几点|什么时候|何时|哪天|哪一天|哪年|几号|在哪|哪里|是哪|是什么|什么价格"
    r"|多久|多长时间|叫什么|叫啥|开放时间|营业时间|几点开门|^(?:who|when|where)(?:'s)?(?![a-z])|"
    + latin(
        r"how (?:much|many|long|old|far|tall|big|high|deep)|what time|release date|launch date"
        r"|opening hours"
        r"|what(?:'s| is| was)(?: the)?(?: current)? (?:price|temperature|ceo|founder|population"
        r"|context window|exchange rate|market cap|capital)"))
_PRICE = re.compile(r"股价|价格|汇率|收盘价|开盘价|市值|金价|油价|" + latin(
    r"price|rate|quote|market cap"))
_TREND = re.compile(r"走势|趋势|表现|涨|跌|怎么样|如何|行情|" + latin(
    r"trend|performance|perform|do|doing|up|down|moving"))


class RulesPlanner:
    """Keyword and gazetteer rules; deterministic and fast."""

    def __init__(
        self, *, domains: Mapping[tuple[QueryKind, str], tuple[str, ...]] | None = None
    ) -> None:
        self._domains = DEFAULT_PREFERRED_DOMAINS if domains is None else domains

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        def draft(question: str) -> tuple[ExternalQueryPlan, str | None]:
            return draft_plan(question, locale=route.locale,
                              needs_freshness=route.query_profile.needs_freshness,
                              domains=self._domains)

        plan, missing = draft(route.question)
        if route.previous_question and (
                narrowed := in_the_region(route.question, route.previous_question)):
            # "the one in oregon" answers "which Marlow Springs?": the last question, asked
            # of the town in that region.
            followed, still_missing = draft(narrowed)
            if not still_missing:
                return followed, PlannerInfo(
                    mode="rules", reason=f"follow-up planned as {narrowed[:200]!r}")
        # "Pro呢" names an edition, not a subject: it is the previous subject's edition.
        only_editions = bool(plan.subject_entities) and all(
            is_qualifier(s) for s in plan.subject_entities)
        # "And for 2025?", "那上半年呢": a question that names nothing and goes on from the
        # last one is about the last one's subject.
        # So does a short one that names nothing in a thread ("能坐几公里？", "谁得分最多").
        goes_on = (not plan.subject_entities and not plan.location_hint
                   and (_GOES_ON.match(route.question) is not None
                        or _is_short(route.question)))
        if (missing or only_editions or goes_on) and route.previous_question:
            merged = follow_up_question(route.question, route.previous_question)
            followed, still_missing = draft(merged)
            if not still_missing:
                return followed, PlannerInfo(
                    mode="rules", reason=f"follow-up planned as {merged[:200]!r}")
        if (not missing and not route.previous_question and not plan.subject_entities
                and not plan.location_hint and _GOES_ON.match(route.question)):
            # "what about last year?" with no question before it: about what?
            missing = "the question goes on from an earlier question that is not there"
            plan = plan.model_copy(update={"answer_contract": AnswerContract.clarify,
                                           "search_queries": []})
        return plan, PlannerInfo(mode="rules", reason=missing)


def _is_short(question: str) -> bool:
    return (len(CJK.findall(question)) <= 10 and len(question.split()) <= 2) or (
        not CJK.search(question) and len(question.split()) <= 6)


_GOES_ON = CaseBlind(r"\s*(?:and|what about|how about|same for|also|那|还有|那么|再|同样)")
_STOCK_WORDS = CaseBlind(r"股票|股价|(?<![a-z])(?:stock|shares?)(?![a-z])")


def follow_up_question(question: str, previous: str) -> str:
    """A follow-up that names no subject ("那明天呢", "what about tomorrow?", "它的股价呢")
    asked as a whole question: a bare time change is the previous question at the new time;
    anything else is the new question about the previous question's subject, and about its
    metric when it names none ("And for the whole of 2025?" after a revenue question)."""
    previous = " ".join(previous.split())[:1000]
    if (edition := _another_edition(question, previous)) is not None:
        return edition
    lower = question.lower()
    asked = _time_span(question)
    was = _time_span(previous)
    if was and _THE_DAY_AFTER.fullmatch(lower.strip(" ?？。.!！")) and (
            later := _DAY_AFTER.get(was[0])) is not None:
        # "and the day after?" after tomorrow's forecast asks the day after tomorrow's.
        return previous[:was[1][0]] + later + previous[was[1][1]:]
    if asked and not _has_residue(lower, [], asked[1]):
        when = question[asked[1][0]:asked[1][1]]
        if was:
            return previous[:was[1][0]] + when + previous[was[1][1]:]
        return f"{previous} {when}"
    zh = is_cjk(previous)
    subject = find_names(previous, previous.lower(), zh=zh)
    kept = [s for s in subject if not replaced_by(question, s.text)]
    between = previous[kept[0].end:kept[-1].start] if len(kept) > 1 else ""
    if (not zh and len(kept) > 1 and len(between.split()) <= 6
            and not _SIDE_BY_SIDE.search(between) and not asked_metrics(between)):
        # "Kestrel Bridge closure in Harrowmere": two names written apart stay apart (run
        # together, "Kestrel Bridge Harrowmere" would read as one).
        names = previous[kept[0].start:kept[-1].end]
    else:
        names = " ".join(_dedupe(s.text for s in kept))
    if (asked_slot(question) in (Slot.any, Slot.date) and not asked_metrics(question)
            and not asks_a_level(question) and not _STOCK_WORDS.search(question)):
        names = " ".join([names, *metric_words(previous)]).strip()
    if not names:
        return question
    period = _PERIOD.search(previous)
    if (period and not asked and not _PERIOD.search(question)
            and asked_metrics(question) - {"population"}):
        # "and net income?" after a question about last quarter's revenue: last quarter's.
        names = f"{names}{'' if zh else ' '}{period.group()}"
    elif (period and SAME_PERIOD.search(question)
          and (same := _YEAR_OF.sub("", period.group()).strip())):
        # "那去年同期呢" after the third quarter of 2026: the third quarter, a year before.
        names = f"{names} {same}"
    elif (not asked and (year := _EDITION_YEAR.search(previous)) and _EDITIONED.search(previous)
          and not _YEAR_OF.search(question) and not SAME_PERIOD.search(question)):
        # "how much prize money does she get?" after "who won the Pellimore Prize 2026":
        # that year's prize, not the year before's.
        if zh:
            names = f"{names}{year.group()}"
        else:  # after the question: "pellimore 2026" would read as one name
            return f"{names} {question.rstrip('?？!！. ')} in {year.group()}"
    if was and not asked and not _NOW.search(lower) and _kind(
            previous.lower(), subject, has_subject=True) is QueryKind.weather:
        # "how windy is it gonna get" after tomorrow's high asks of tomorrow's wind.
        return f"{names} {question} {was[0]}"
    return f"{names} {question}"


# A follow-up about now names its time without a day: "what about the current temperature",
# 是不是已经在下雨了.
_NOW = re.compile(r"(?<![a-z])(?:now|current(?:ly)?|right now|at the moment|so far)(?![a-z])"
                  r"|现在|目前|已经|正在|此刻|当前")


# What has a year's edition: a prize, a cup, a festival, a season.
_EDITIONED = CaseBlind(r"奖|杯|赛季|届|节|(?<![a-z])(?:prize|award|awards|cup|championships?"
                        r"|festival|games|olympics|season|edition|marathon|open|show|fair)"
                        r"(?![a-z])")
# A year that names an edition or a season of what was asked ("the 2026 prize", 2026赛季).
_EDITION_YEAR = re.compile(r"(?<![\d.])(?:19|20)\d\d(?![\d.])(?:年|赛季)?")


_THE_DAY_AFTER = re.compile(r"(?:and |what about |how about )?(?:the )?(?:day after|next day)"
                            r"|那?(?:后一天|第二天|再后一天|隔天)呢?")
_DAY_AFTER = {"yesterday": "today", "today": "tomorrow", "tomorrow": "the day after tomorrow",
              "昨天": "今天", "今天": "明天", "明天": "后天", "后天": "大后天"}


# Names set side by side ("Skjern vs Holstebro") are asked about together, as one.
_SIDE_BY_SIDE = CaseBlind(r"(?<![a-z])(?:vs?|versus|and|or|against)(?![a-z])|[,&/]")
_YEAR_OF = CaseBlind(r"(?:(?:in|for) )?(?:19|20)\d\d年?|fy ?'?\d{2,4}")
# A reporting period (not a day): what a follow-up about another figure keeps.
_PERIOD = CaseBlind(
    r"(?<![a-z])(?:(?:last|this|previous|past|latest|most recent) (?:fiscal )?(?:quarter|year"
    r"|half|month)|(?:the )?(?:first|second|third|fourth)[- ]quarter(?: of)?(?: (?:19|20)\d\d)?"
    r"|q[1-4](?: ?(?:fy)?'?(?:19|20)?\d\d)?|fy ?'?(?:19|20)?\d\d|(?:in |for )?(?:19|20)\d\d)"
    r"(?![a-z\d年])|上个?季度|上一季度|本季度|第?[一二三四]季度|前三季度|去年|前年|今年|上半年|下半年"
    r"|(?:19|20)\d\d年(?:第?[一二三四]季度|上半年|下半年|全年)?|上个?月")


# What a reply to "which one?" says beside the region: "the one in oregon", "I mean Maine",
# 俄勒冈那个, 是北卡的. Nothing else may be asked in it.
_ONLY_POINTING = CaseBlind(
    r"(?:i mean|i meant|no,?|sorry,?|the one|that one|one|in|the|of|at|please|那个|这个|的"
    r"|是|我说的是|我是说|指的是|在|里|那边|那里|[\s,.!?，。！？])*")


def in_the_region(question: str, previous: str) -> str | None:
    """A reply naming only a region or country ("the one in oregon") after a question about a
    town it does not place: that question about the town in that region ("marlow springs,
    Oregon weather tomorrow?", 浙江青岚镇天气). None for anything else."""
    zh = is_cjk(question) or is_cjk(previous)
    spans = find_names(question, question.lower(), zh=zh)
    mention = spans[0].mention if len(spans) == 1 else None
    if mention is None or not mention.readings:
        return None
    region = spans[0]
    if mention.readings[0].kind not in ("region", "country"):
        return None  # (Oregon is also a town in Ohio, after the state)
    rest = question[:region.start] + " " + question[region.end:]
    if not _ONLY_POINTING.fullmatch(rest):
        return None
    town = next((s for s in find_names(previous, previous.lower(), zh=zh)
                 if s.kind is None and not (s.mention and s.mention.readings and all(
                     p.kind in ("region", "country") for p in s.mention.readings))), None)
    if town is None or town.text.casefold() == region.text.casefold():
        return None
    if CJK.search(town.text) and town.start and CJK.search(previous[town.start - 1]):
        return None  # a known name inside a longer one (林斯 in 马洛斯普林斯): not the town
    place = mention.readings[0]
    if CJK.search(town.text):
        written = region.text if CJK.search(region.text) else (place.zh or (region.text,))[0]
        return previous[:town.start] + written + previous[town.start:]
    written = region.text if not CJK.search(region.text) else (place.en or (region.text,))[0]
    if written.islower():
        written = written.title()
    return f"{previous[:town.end]}, {written}{previous[town.end:]}"


# An edition's word written before a name ("the base Lumora X7", 标准版): the follow-up's
# edition takes its place.
_BASE_BEFORE = CaseBlind(r"(?:\b(?:base|standard|regular|basic|entry-level)\s+|标准版)$")
_ZH_BASE_AFTER = re.compile(r"^(?:标准版|基础版)")
# The edition without an edition's name: "the regular x7?", 标准版呢.
_BASE_WORD = CaseBlind(r"(?<![a-z])(?:base|standard|regular|basic|vanilla|entry-level)(?![a-z])"
                        r"|标准版|基础版|普通版")


def _another_edition(question: str, previous: str) -> str | None:
    """"And the Max?" after "How much does the base Lumora X7 cost?" is the previous question
    about that edition: "How much does the Lumora X7 Max cost?". None when the follow-up names
    more than editions, or the previous question no subject to give them to."""
    zh = is_cjk(question) or is_cjk(previous)
    subject = next((s for s in find_names(previous, previous.lower(), zh=zh)
                    if not s.is_place and not is_qualifier(s.text)), None)
    if subject is None or _SIDE.search(question):
        return None
    # The follow-up may repeat a word of the name ("the regular x7?" after the X7 Pro).
    spans = find_names(question, question.lower(), zh=zh)
    if not all(is_qualifier(s.text) or set(s.text.casefold().split())
               <= set(subject.text.casefold().split()) for s in spans):
        return None
    asked = list(dict.fromkeys(_written_edition(e) for e in _EDITION_WORD.findall(question)))
    if not asked and not _BASE_WORD.search(question):
        return None
    name = " ".join(w for w in subject.text.split() if not is_qualifier(w))
    before = _BASE_BEFORE.sub("", previous[:subject.start])
    after = _ZH_BASE_AFTER.sub("", previous[subject.end:])
    sep = "" if (zh and not name[-1:].isascii()) or not asked else " "
    return f"{before}{name}{sep}{' '.join(asked)}{after}"


# A team's side ("the women's team", 女篮) is asked in the follow-up's own words ("how did the
# women's team do?"), not in the previous question's.
_SIDE = CaseBlind(r"(?<![a-z])(?:women['’]?s?|ladies|reserves?)(?![a-z])"
                   r"|女足|女篮|女排|女队|女子|青年队|预备队")


def _written_edition(word: str) -> str:
    """An edition as it follows a name: "women's" -> "Women", "pro" -> "Pro"."""
    word = re.sub(r"['’]s$", "", word)
    return word[:1].upper() + word[1:] if word.isascii() and word.islower() else word


def plan_by_rules(question: str, *, needs_freshness: bool = False,
                  locale: str = "zh-CN") -> ExternalQueryPlan:
    return draft_plan(question, locale=locale, needs_freshness=needs_freshness)[0]


def draft_plan(
    question: str,
    *,
    locale: str = "zh-CN",
    needs_freshness: bool = False,
    domains: Mapping[tuple[QueryKind, str], tuple[str, ...]] = DEFAULT_PREFERRED_DOMAINS,
) -> tuple[ExternalQueryPlan, str | None]:
    """The plan, and what is missing when the question cannot be searched as it stands."""
    # What the user sees is what is planned: no zero-width or bidi characters inside a name,
    # and full-width letters and digits read as themselves (ＧＰＴ－５ is GPT-5).
    text = " ".join(unicodedata.normalize("NFKC", strip_invisible(question)).split())
    # Names are matched in `lower` and reported from `text`: the offsets must agree.
    lower = text.lower()
    if len(lower) != len(text):  # a few letters ("İ") grow when lowered
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    zh = is_cjk(text) or (not re.search(r"[a-z]", lower) and locale.startswith("zh"))
    spans = [_as_known_place(s, zh=zh) for s in find_names(text, lower, zh=zh)]
    places = [s.text for s in spans if s.is_place]
    entities = _dedupe(s.text for s in spans)
    unsure = next((s.mention.name for s in spans if s.mention and s.is_place
                   and s.mention.place is None and s.mention.readings), None)
    time = _time_span(text)
    time_hint, time_at = time if time else (None, None)
    has_subject = bool(entities) or _has_residue(lower, spans, time_at)
    kind = _kind(lower, spans, has_subject=has_subject)

    if kind is QueryKind.weather and not places and entities:
        places = entities[:1]  # a place the gazetteer does not know is still the place asked
    missing: str | None = None
    if kind is QueryKind.weather and unsure:
        # Several places answer to the name and none is much more asked about: which one?
        missing, places = f"ambiguous place: {unsure}", []
    elif kind is QueryKind.weather and not places:
        missing = "weather question without a place"
    elif points_without_naming(lower, spans, weather=kind is QueryKind.weather):
        missing = "the question points at its subject without naming it"
    elif spans and all(is_qualifier(s.text) and s.kind is None and not s.is_place
                       for s in spans):
        # "那个Pro版多少钱", "the Pro version's price": an edition of what? Any page about
        # any Pro would pass as evidence. (A known name that is also an edition word, gold
        # the commodity, is a name.)
        missing = "the question names an edition without naming what it is an edition of"
    elif not has_subject:
        missing = "nothing to search for: the question names no subject"
    elif not entities and names_only_a_role(text):
        missing = "the question asks who holds a role without naming whose"
    if missing:
        contract = AnswerContract.clarify
    elif (_COMPARE.search(lower) or (_WHICH.search(lower) and _BOTH.search(lower)
                                     and len(entities) >= 2)) and not _RESULT.search(lower):
        contract = AnswerContract.compare_with_sources
    elif _DIRECT.search(lower) or (_PRICE.search(lower) and not _TREND.search(lower)):
        contract = AnswerContract.direct_fact
    else:
        contract = AnswerContract.summary_with_sources
    compare = contract is AnswerContract.compare_with_sources
    core = FILLERS.sub("", text).strip()
    location = places[0] if places else None
    if kind is QueryKind.weather and location:
        where = ("和" if zh else " vs ").join(places[:3]) if compare else location
        topic = f"{where}{time_hint or ''}天气" if zh else f"{where} weather {time_hint or ''}"
        known = {s.text: s.mention.place for s in spans if s.mention and s.mention.place}
        queries = _weather_queries(places if compare else [location], time_hint, zh=zh,
                                   known=known)
    else:
        topic = core
        queries = [] if missing else _queries(core, entities, kind, compare=compare, zh=zh)
        if queries and zh and (english := english_query(text, spans)):
            queries.insert(1, english)  # second: a search capped at two queries runs it
    plan = ExternalQueryPlan(
        query_kind=kind,
        answer_contract=contract,
        freshness_required=(needs_freshness or bool(RECENT.search(lower)) or time is not None
                            or kind in (QueryKind.weather, QueryKind.market, QueryKind.news)),
        topic=topic.strip(),
        subject_entities=entities,
        location_hint=location,
        time_range_hint=time_hint,
        preferred_domains=_preferred_domains(kind, entities, zh=zh, domains=domains),
        search_queries=queries,
        result_limit=5 if compare else 3,
        requires_multi_source=compare or kind is QueryKind.market,
        clarify_on_ambiguity=True,  # asking which one beats guessing between two places
    )
    return plan, missing


def _kind(lower: str, spans: Sequence[Span], *, has_subject: bool) -> QueryKind:
    # A kind word inside a name of several words is part of the name, not the question's
    # kind: "Model Context Protocol" is a protocol, not a model release.
    masked = lower
    for span in spans:
        if span.kind is None and " " in span.text.strip():
            masked = masked[:span.start] + " " * (span.end - span.start) + masked[span.end:]
    for kind, pattern in KIND_WORDS:
        if pattern.search(masked):
            return kind
    for kind in (QueryKind.model, QueryKind.company, QueryKind.market):
        # Without a company or market word, an everyday word stays a word ("苹果多少钱一斤").
        if any(s.kind is kind and s.text not in EVERYDAY_WORD_COMPANIES for s in spans):
            return kind
    # "the price of AAPL": a bare price question about a ticker-shaped name.
    if _WEAK_MARKET.search(lower) and any(_TICKER.fullmatch(s.text) for s in spans):
        return QueryKind.market
    return QueryKind.generic_web if has_subject else QueryKind.unknown


def _time_span(text: str) -> tuple[str, tuple[int, int]] | None:
    """The question's time hint and where it stands: a day or period in its canonical form
    ("明儿" and "tmrw" read as 明天 and tomorrow), else a vaguer time word as written."""
    when = asked_when(text)
    if when is not None:
        return canonical_hint(text, when), (when.start, when.end)
    match = TIME.search(text.lower())
    if match is None:
        return None
    return _normalise(text[match.start():match.end()]), match.span()


def _has_residue(lower: str, spans: Sequence[Span], time_at: tuple[int, int] | None) -> bool:
    """Whether anything searchable is left once names, time words and filler are removed."""
    cuts = [(s.start, s.end) for s in spans if s.start >= 0]
    if time_at:
        cuts.append(time_at)
    pieces, at = [], 0
    for start, end in sorted(cuts):
        pieces.append(lower[at:max(start, at)])
        at = max(at, end)
    rest = " ".join([*pieces, lower[at:]])
    for _, pattern in KIND_WORDS:
        rest = pattern.sub(" ", rest)
    rest = ZH_NOISE.sub(" ", rest)
    if len(CJK.findall(rest)) >= 2:
        return True
    words = re.findall(r"[a-z][a-z'\-]+", rest)
    return any(len(w) >= 3 and w not in EN_STOP for w in words)


def _as_known_place(span: Span, *, zh: bool) -> Span:
    """A place the table knows is named as pages about it name it: "湖北荆州" -> 荆州 (or
    湖北荆州 when the bare name is another place too), "tromso" -> Tromsø, "Perth,
    Scotland" -> "Perth, United Kingdom"."""
    place = span.mention.place if span.mention else None
    if not span.is_place or place is None:
        return span
    name = search_name(place, zh=zh) or span.text
    if span.mention is not None and span.mention.qualifier is not None and name == (
            place.zh[0] if zh and place.zh else place.name):
        # Asked with its region or country: keep saying which, even when the bare name
        # would do, so that every stage checks the page is about that one.
        name = span.text
    return Span(span.start, span.end, name, span.kind, span.is_place, span.mention)


def _weather_queries(places: Sequence[str], time_hint: str | None, *, zh: bool,
                     known: Mapping[str, Place] | None = None) -> list[str]:
    days = _DAYS_AHEAD.search(time_hint or "")
    if len(places) > 1:
        return [f"{p} {time_hint or ''}天气" if zh else f"{p} weather {time_hint or ''}"
                for p in places[:3]]
    place = places[0]
    if zh:
        first = f"{place} {time_hint}天气" if time_hint else f"{place} 天气"
        second = f"{place} 天气 {days.group(1)}日预报" if days else f"{place} 天气预报"
    else:
        first = f"{place} weather {time_hint}" if time_hint else f"{place} weather"
        second = (f"{place} {days.group(1)} day weather forecast" if days
                  else f"{place} weather forecast")
    # Second, so that a search capped at two queries still runs it.
    table_place = (known or {}).get(place)
    other = other_language_query(table_place, time_hint, zh=zh) if table_place else None
    return [first, other, second] if other else [first, second]


def _queries(core: str, entities: Sequence[str], kind: QueryKind,
             *, compare: bool, zh: bool) -> list[str]:
    """The question as asked, its keywords, and one phrasing that names the subject directly."""
    if zh:
        keywords = _zh_keywords(core, entities)
    else:
        keywords = " ".join(w for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9.&'\-]*", core)
                            if w.lower() not in EN_STOP)
    extra = ""
    if compare and len(entities) >= 2:
        extra = f"{entities[0]} 和 {entities[1]} 对比" if zh else f"{entities[0]} vs {entities[1]}"
    elif entities and kind is QueryKind.news:
        extra = f"{entities[0]} 最新消息" if zh else f"{entities[0]} latest news"
    elif entities and kind is QueryKind.market:
        extra = _market_query(entities, zh=zh)
    elif entities and kind is QueryKind.company:
        extra = EVERYDAY_WORD_COMPANIES.get(entities[0], "")
    return _dedupe(q for q in (core, keywords, extra) if q)


# What a Chinese question asks, in the words English pages use: a question about a foreign
# company, team or place is also searched in English ("McClatchy第三季度营收多少" ->
# "McClatchy Q3 revenue").
_ZH_TO_EN: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(zh), en) for zh, en in (
        (r"(?<!前)第?[一1]季度", "Q1"), (r"(?<!前)第?[二2]季度", "Q2"),
        (r"(?<!前)第?[三3]季度", "Q3"), (r"(?<!前)第?[四4]季度", "Q4"),
        (r"前三季度", "nine months"), (r"上半年", "first half"), (r"全年|年度", "full year"),
        (r"营收|营业收入|收入|销售额", "revenue"), (r"净利润|利润|盈利", "net income"),
        (r"亏损", "loss"), (r"市值", "market cap"), (r"估值", "valuation"),
        (r"股价|价格|多少钱|售价", "price"), (r"汇率", "exchange rate"), (r"指数", "index"),
        (r"裁员|裁掉|裁", "layoffs jobs"), (r"收购|买下", "acquisition"), (r"融资", "funding"),
        (r"比分|几比几", "score"), (r"冠军|谁赢|夺冠|获胜", "won"), (r"进球", "scored goal"),
        (r"死亡|死了|遇难", "killed dead"), (r"受伤", "injured"), (r"停课", "schools closed"),
        (r"罚款", "fine"), (r"判[了处]?|刑期", "sentenced"), (r"发布|推出|上线", "launch"),
        (r"跌", "fell"), (r"涨", "rose"), (r"开盘", "opened"), (r"收盘", "closed"),
        (r"天气", "weather"), (r"首席执行官|CEO|总裁", "CEO"), (r"主教练|教练", "coach"),
        (r"多少人", "how many people"), (r"什么时候|何时|哪天", "when"),
        (r"在哪|哪里", "where"), (r"谁", "who")))


def english_query(text: str, spans: Sequence[Span]) -> str | None:
    """The question in English words when it names something foreign (a Latin name, a place
    outside China): its names as English pages write them and what it asks of them."""
    names = []
    for span in spans:
        place = span.mention.place if span.mention else None
        if place is not None and local_language(place) == "en" and place.en:
            names.append(place.en[0])
        elif not CJK.search(span.text):
            names.append(span.text)
    if not names:
        return None
    asked = [en for pattern, en in _ZH_TO_EN if pattern.search(text)]
    return " ".join(_dedupe([*names, *asked]))


def _zh_keywords(core: str, entities: Sequence[str]) -> str:
    """The question without its filler words. Names and kind words are kept whole, so a
    one-character filler never cuts a word in two ("新闻" must not lose its "新")."""
    kept = [re.escape(e) for e in sorted(entities, key=len, reverse=True)]
    kept += [pattern.pattern for _, pattern in KIND_WORDS]
    protected = re.compile("|".join(kept), re.IGNORECASE)
    pieces, at = [], 0
    for match in protected.finditer(core):
        pieces += [ZH_NOISE.sub(" ", core[at:match.start()]), f" {match.group()} "]
        at = match.end()
    pieces.append(ZH_NOISE.sub(" ", core[at:]))
    return " ".join("".join(pieces).split())


def _instrument(name: str) -> str:
    lowered = name.lower()
    return next((kind for kind, names in _INSTRUMENTS if lowered in names), "stock")


def _market_query(entities: Sequence[str], *, zh: bool) -> str:
    """How the instrument is quoted: a currency pair has a rate, a coin or a commodity a
    price, an index a close; anything else is a share."""
    first = entities[0]
    kind = _instrument(first)
    if kind == "currency":
        pair = [e for e in entities if _instrument(e) == "currency"][:2]
        if zh:
            return f"{'兑'.join(pair)} 汇率"
        return f"{'/'.join(pair)} exchange rate"
    if kind in ("crypto", "commodity"):
        return f"{first} 价格" if zh else f"{first} price"
    if kind == "index":
        return f"{first} 收盘" if zh else f"{first} close"
    company = EVERYDAY_WORD_COMPANIES.get(first)
    if company:
        return f"{company} stock price"
    return f"{first} 股价" if zh else f"{first} stock price"


def _preferred_domains(kind: QueryKind, entities: Sequence[str], *, zh: bool,
                       domains: Mapping[tuple[QueryKind, str], tuple[str, ...]]) -> list[str]:
    found = list(domains.get((kind, "zh" if zh else "en"), ()))
    if kind is QueryKind.market and entities and _instrument(entities[0]) not in ("stock",
                                                                                  "index"):
        found = [d for d in found if d not in STOCK_EXCHANGE_DOMAINS]
    if kind is QueryKind.model:
        for entity in entities:
            found += [d for prefix, d in MODEL_VENDOR_DOMAINS if entity.lower().startswith(prefix)]
    return _dedupe(found)


def _normalise(hint: str) -> str:
    """Whitespace only: runs collapse to one space, and none is kept next to Chinese text."""
    hint = " ".join(hint.split())
    return re.sub(rf"(?<=[{CJK_CHARS}]) | (?=[{CJK_CHARS}])", "", hint)


def _dedupe(items: Iterable[str]) -> list[str]:
    """Stripped, empty ones dropped, first spelling kept when two differ only in case."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        key = item.strip().lower()
        if key and key not in seen:
            seen.add(key)
            kept.append(item.strip())
    return kept
