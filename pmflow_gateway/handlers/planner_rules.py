"""The rules planner: the default planner, no model needed (zh and en).

It reads the question the way a search box user would phrase it: what kind of fact is asked
for (keywords, then the kind of the names it recognises), which names and place it is about
(gazetteer plus name shapes), which time words it uses, and whether there is anything left
to search for at all. Deterministic, regex only, well under a millisecond per question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pmflow_gateway.contract.gazetteer import (
    CITIES,
    COMMODITIES,
    COMPANIES,
    COUNTRIES,
    CRYPTO,
    CURRENCIES,
    DEFAULT_PREFERRED_DOMAINS,
    ENGLISH_STOP_WORDS,
    EVERYDAY_WORD_COMPANIES,
    INDICES,
    MARKET_NAMES,
    MODEL_VENDOR_DOMAINS,
    MODELS,
    NAME_VARIANT_WORDS,
    NOT_NAMES,
    STOCK_EXCHANGE_DOMAINS,
)
from pmflow_gateway.contract.relevance import RECENT
from pmflow_gateway.contract.text import CJK, CJK_CHARS, is_cjk
from pmflow_gateway.handlers.place_queries import other_language_query
from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlannerInfo,
    QueryKind,
    RouteDecided,
)


def _latin(words: str) -> str:
    """Latin words delimited by anything that is not a Latin letter or digit.

    `\\b` would fail between a Chinese character and a Latin word ("腾讯的CEO"), because
    Python counts CJK characters as word characters.
    """
    return rf"(?<![a-z0-9])(?:{words})(?![a-z0-9])"


def _names(names: Sequence[str]) -> re.Pattern[str]:
    """One pattern for names: Chinese as substrings, Latin on word edges, longest first."""
    ordered = sorted(set(names), key=len, reverse=True)
    zh = [re.escape(n.lower()) for n in ordered if CJK.search(n)]
    latin = [re.escape(n.lower()) for n in ordered if not CJK.search(n)]
    parts = [*zh, _latin("|".join(latin))] if latin else zh
    return re.compile("|".join(parts))


# Kinds in priority order: a weather word wins over a market word, and so on.
_KIND_WORDS: tuple[tuple[QueryKind, re.Pattern[str]], ...] = (
    (QueryKind.weather, re.compile(
        r"天气|气温|温度|下雨|降雨|有雨|下雪|降雪|暴雨|台风|雾霾|空气质量|带伞|冷不冷|热不热|更热|更冷"
        r"|多少度|几度|预报|晴天|阴天|多云|大风|刮风|湿度|紫外线|降温|升温|凉快|暖和|冷吗|很冷|多冷|热吗"
        r"|很热|多热|有雾|大雾|雷阵雨|雷雨|冰雹|" + _latin(
            r"weather|forecast|temperature|rain(?:ing|y)?|snow(?:ing)?|hot|cold|humid(?:ity)?"
            r"|sunny|cloudy|windy|storms?|fog(?:gy)?|freezing|chilly|heat ?wave|umbrella"
            r"|warm(?:er)?|hotter|colder|cooler"
            r"|air quality|aqi|uv index"))),
    (QueryKind.market, re.compile(
        r"股价|股票|股市|汇率|金价|油价|大盘|收盘|开盘|市值|行情|涨跌|"
        + _latin(r"stocks?|share price|exchange rate|market cap|forex|crypto|ticker"))),
    (QueryKind.news, re.compile(
        r"新闻|消息|头条|要闻|动态|快讯|热点|报道|资讯|新鲜事|发生了什么|大事|发布会|宣布|"
        + _latin(r"news|headlines?|happened|happening|going on|updates?|breaking|latest on"
                 r"|announce[sd]?|announcements?"))),
    (QueryKind.company, re.compile(
        r"公司|财报|营收|利润|融资|估值|裁员|董事长|创始人|总裁|总部|销量|收购|"
        + _latin(r"ceo|cfo|founders?|owns?|owners?|owned|headquarter(?:s|ed)?|earnings|revenue"
                 r"|profits?|funding"
                 r"|valuation|layoffs?|ipo|acquisitions?|acquire[sd]?"))),
    (QueryKind.model, re.compile(
        r"大模型|模型|上下文|" + _latin(r"models?|llms?|context window|tokens?"))),
)
# Names whose kind is known: asking about one of them is a question of that kind.
_NAME_KINDS: tuple[tuple[QueryKind, re.Pattern[str]], ...] = (
    (QueryKind.model, _names(MODELS)),
    (QueryKind.company, _names(COMPANIES)),
    (QueryKind.market, _names(MARKET_NAMES)),
)
_INSTRUMENTS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (name, frozenset(n.lower() for n in names))
    for name, names in (("currency", CURRENCIES), ("crypto", CRYPTO),
                        ("commodity", COMMODITIES), ("index", INDICES)))
_WEAK_MARKET = re.compile(r"价格|" + _latin(r"price|quote"))
_TICKER = re.compile(r"\$?[A-Z]{1,5}|\d{6}")
_PLACES = _names([name for pair in CITIES for name in pair])
_COUNTRIES = _names([name for pair in COUNTRIES for name in pair])
_STOCK_CODE = re.compile(r"(?<!\d)\d{6}(?!\d)")

_TIME = re.compile(
    r"未来\s*[0-9一二三四五六七八九十两]+\s*(?:个)?\s*(?:天|日|周|星期|小时|月)|截至今天|截至目前"
    r"|这个周末|这周末|本周末|周末|今天|今晚|今日|明天|明晚|后天|昨天|昨晚|本周|这周|下周|本月|今年|最近"
    r"|近期|现在|" + _latin(r"next \d+ (?:days|hours|weeks)|next (?:week|month)"
                          r"|this (?:weekend|week|month|year)|right now|today|tonight|tomorrow"
                          r"|yesterday|now"))
_DAYS_AHEAD = re.compile(r"(?:未来|next)\s*(\d+)\s*(?:天|日|days)")

_COMPARE = re.compile(r"对比|比较|区别|差异|差别|" + _latin(
    r"vs\.?|versus|compare[sd]?|comparison|difference between|better than"))
_WHICH = re.compile(r"哪个|哪家|哪一个|谁更|谁的|" + _latin(r"which"))
_BOTH = re.compile(r"和|与|跟|还是|" + _latin(r"and|or"))
_DIRECT = re.compile(
    r"是谁|谁是|是多少|多少|几度|几点|什么时候|何时|哪天|哪一天|哪年|几号|在哪|哪里|是哪|是什么|什么价格"
    r"|多久|多长时间|叫什么|叫啥|开放时间|营业时间|几点开门|^(?:who|when|where)(?:'s)?(?![a-z])|"
    + _latin(
        r"how (?:much|many|long|old|far|tall|big|high|deep)|what time|release date|launch date"
        r"|opening hours"
        r"|what(?:'s| is| was)(?: the)?(?: current)? (?:price|temperature|ceo|founder|population"
        r"|context window|exchange rate|market cap|capital)"))
_PRICE = re.compile(r"股价|价格|汇率|收盘价|开盘价|市值|金价|油价|" + _latin(
    r"price|rate|quote|market cap"))
_TREND = re.compile(r"走势|趋势|表现|涨|跌|怎么样|如何|行情|" + _latin(
    r"trend|performance|perform|do|doing|up|down|moving"))

# What a question says besides its subject; whatever remains after removing these, the
# names and the time words is the thing to search for.
_ZH_NOISE = re.compile(
    r"帮我|帮忙|请问|请|麻烦|查一下|查查|查询|搜一下|搜索|看看|看一下|一下|告诉我|我想知道|想知道|有没有"
    r"|有什么|有哪些|什么时候|是什么|什么|怎么样了|怎么样|如何|怎么|会不会|是不是|是谁|是多少|多少钱|几块钱|多少|是哪个|哪个"
    r"|哪些|最新|最近|现在|目前|当前|那个|这个|情况|进展|继续|然后|还有|说说|讲讲|详细|怎么弄|别的|其他"
    r"|他们|她们|他|她|它|说的|对不对|对吗|真的吗|外面|这里|这边|本地|当地|好的|谢谢|嗯|哦|再|新|吗|呢|吧|啊"
    r"|了|的|和|与"
    r"|跟|还是|对比|比较")
_EN_STOP = frozenset(ENGLISH_STOP_WORDS)
_NOT_NAMES = frozenset(NOT_NAMES)
_VARIANT_WORDS = frozenset(NAME_VARIANT_WORDS)
_FILLERS = re.compile(
    r"^(?:帮我|请问|请|麻烦|我想知道|想知道|我想问)?(?:查一下|查查|看看|看一下|搜一下|告诉我)?"
    r"|[？?！!。.\s]+$"
    r"|^(?:please |can you (?:tell me|check) )", re.IGNORECASE)
_ZH_SUFFIX_NAME = re.compile(
    rf"[{CJK_CHARS}]{{2,4}}(?:汽车|科技|集团|银行|证券|控股|股份|电器|电子)")
_ZH_LEAD_NAME = re.compile(
    rf"^([{CJK_CHARS}]{{2,6}}?)"
    r"(?=的|最近|最新|今天|今晚|明天|后天|未来|这周|本周|下周|周末|现在|天气|股价|财报|总部|融资|今年"
    r"|裁员|销量|市值|发布)")
_NAME_STOP_CHARS = set("的是和与跟在了吗呢有什么哪这那该本家个我你他它们请帮查看")
_LATIN_IN_ZH = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9.+&'\-]*(?: [A-Za-z0-9][A-Za-z0-9.+\-]*)*")
_EN_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.&'\-]*")

@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    text: str
    kind: QueryKind | None = None
    is_place: bool = False


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
        if missing and route.previous_question:
            merged = follow_up_question(route.question, route.previous_question)
            followed, still_missing = draft(merged)
            if not still_missing:
                return followed, PlannerInfo(
                    mode="rules", reason=f"follow-up planned as {merged[:200]!r}")
        return plan, PlannerInfo(mode="rules", reason=missing)


def follow_up_question(question: str, previous: str) -> str:
    """A follow-up that names no subject ("那明天呢", "what about tomorrow?", "它的股价呢")
    asked as a whole question: a bare time change is the previous question at the new time;
    anything else is the new question about the previous question's subject."""
    previous = " ".join(previous.split())[:1000]
    lower = question.lower()
    asked = _TIME.search(lower)
    was = _TIME.search(previous.lower())
    if asked and not _has_residue(lower, [], asked):
        when = question[asked.start():asked.end()]
        if was:
            return previous[:was.start()] + when + previous[was.end():]
        return f"{previous} {when}"
    zh = is_cjk(previous)
    subject = _find_names(previous, previous.lower(), zh=zh)
    names = " ".join(_dedupe(s.text for s in subject))
    return f"{names} {question}" if names else question


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
    text = " ".join(question.split())
    # Names are matched in `lower` and reported from `text`: the offsets must agree.
    lower = text.lower()
    if len(lower) != len(text):  # a few letters ("İ") grow when lowered
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    zh = is_cjk(text) or (not re.search(r"[a-z]", lower) and locale.startswith("zh"))
    spans = _find_names(text, lower, zh=zh)
    places = [s.text for s in spans if s.is_place]
    entities = _dedupe(s.text for s in spans)
    time_match = _TIME.search(lower)
    time_hint = _normalise(text[time_match.start():time_match.end()]) if time_match else None
    has_subject = bool(entities) or _has_residue(lower, spans, time_match)
    kind = _kind(lower, spans, has_subject=has_subject)

    if kind is QueryKind.weather and not places and entities:
        places = entities[:1]  # a place the gazetteer does not know is still the place asked
    missing: str | None = None
    if kind is QueryKind.weather and not places:
        missing = "weather question without a place"
    elif not has_subject:
        missing = "nothing to search for: the question names no subject"
    if missing:
        contract = AnswerContract.clarify
    elif _COMPARE.search(lower) or (_WHICH.search(lower) and _BOTH.search(lower)
                                    and len(entities) >= 2):
        contract = AnswerContract.compare_with_sources
    elif _DIRECT.search(lower) or (_PRICE.search(lower) and not _TREND.search(lower)):
        contract = AnswerContract.direct_fact
    else:
        contract = AnswerContract.summary_with_sources
    compare = contract is AnswerContract.compare_with_sources
    core = _FILLERS.sub("", text).strip()
    location = places[0] if places else None
    if kind is QueryKind.weather and location:
        where = ("和" if zh else " vs ").join(places[:3]) if compare else location
        topic = f"{where}{time_hint or ''}天气" if zh else f"{where} weather {time_hint or ''}"
        queries = _weather_queries(places if compare else [location], time_hint, zh=zh)
    else:
        topic = core
        queries = [] if missing else _queries(core, entities, kind, compare=compare, zh=zh)
    plan = ExternalQueryPlan(
        query_kind=kind,
        answer_contract=contract,
        freshness_required=(needs_freshness or bool(RECENT.search(lower))
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


def _find_names(text: str, lower: str, *, zh: bool) -> list[_Span]:
    """Every name in the question, in reading order, overlaps resolved to the longest."""
    found = [_Span(m.start(), m.end(), text[m.start():m.end()], is_place=True)
             for m in _PLACES.finditer(lower)]
    found += [_Span(m.start(), m.end(), text[m.start():m.end()])
              for m in _COUNTRIES.finditer(lower)]
    for kind, pattern in _NAME_KINDS:
        found += [_Span(m.start(), m.end(), text[m.start():m.end()], kind)
                  for m in pattern.finditer(lower)]
    found += [_Span(m.start(), m.end(), m.group(), QueryKind.market)
              for m in _STOCK_CODE.finditer(text)]
    if zh:
        found += [_Span(m.start(), m.end(), m.group().rstrip(".-"))
                  for m in _LATIN_IN_ZH.finditer(text)
                  if m.group().lower().rstrip(".-") not in _NOT_NAMES]
        for m in _ZH_SUFFIX_NAME.finditer(text):
            name = m.group()
            # "这家理想汽车" -> "理想汽车": the name starts after the last function word.
            cut = max((i + 1 for i, ch in enumerate(name[:-2]) if ch in _NAME_STOP_CHARS),
                      default=0)
            if len(name) - cut >= 4:
                found.append(_Span(m.start() + cut, m.end(), name[cut:], QueryKind.company))
    else:
        found += _capitalised_phrases(text)
    kept: list[_Span] = []
    # Sorted by start, longest first: a span can only overlap the last one kept.
    for span in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
        elif kept[-1].kind is None and span.kind is not None:
            # "GPT-5" is a longer name than the known "GPT", and still a model.
            kept[-1] = replace(kept[-1], kind=span.kind)
    if zh and not kept:
        # A name no list knows, at the head of the question: "芜湖明天天气", "泡泡玛特最近股价".
        lead = _ZH_LEAD_NAME.search(_FILLERS.sub("", text))
        name = lead.group(1) if lead else ""
        if name and not (set(name) & _NAME_STOP_CHARS) and not _is_noise(name):
            start = text.find(name)
            kept.append(_Span(start, start + len(name), name))
    return kept


def _capitalised_phrases(text: str) -> list[_Span]:
    """Runs of capitalised words (or versions right after one) in English text: names."""
    spans: list[_Span] = []
    run: list[re.Match[str]] = []

    def close_run() -> None:
        if run:
            name = text[run[0].start():run[-1].end()].removesuffix("'s")
            spans.append(_Span(run[0].start(), run[0].start() + len(name), name))
            run.clear()

    for token in _EN_TOKEN.finditer(text):
        word = token.group().removesuffix("'s")
        is_name = word.lower() not in _EN_STOP and word.lower() not in _NOT_NAMES
        starts_name = is_name and any(c.isupper() for c in word)
        adjacent = bool(run) and text[run[-1].end():token.start()] == " "
        continues = starts_name or word[0].isdigit() or word.lower() in _VARIANT_WORDS
        if adjacent and is_name and continues:
            run.append(token)
            continue
        close_run()
        if starts_name:
            run.append(token)
    close_run()
    return spans


def _kind(lower: str, spans: Sequence[_Span], *, has_subject: bool) -> QueryKind:
    # A kind word inside a name of several words is part of the name, not the question's
    # kind: "Model Context Protocol" is a protocol, not a model release.
    masked = lower
    for span in spans:
        if span.kind is None and " " in span.text.strip():
            masked = masked[:span.start] + " " * (span.end - span.start) + masked[span.end:]
    for kind, pattern in _KIND_WORDS:
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


def _is_noise(chunk: str) -> bool:
    if _TIME.search(chunk) or RECENT.search(chunk):
        return True
    stripped = _ZH_NOISE.sub("", chunk)
    for _, pattern in _KIND_WORDS:
        stripped = pattern.sub("", stripped)
    return len(stripped) < 2


def _has_residue(lower: str, spans: Sequence[_Span], time_match: re.Match[str] | None) -> bool:
    """Whether anything searchable is left once names, time words and filler are removed."""
    cuts = [(s.start, s.end) for s in spans if s.start >= 0]
    if time_match:
        cuts.append(time_match.span())
    pieces, at = [], 0
    for start, end in sorted(cuts):
        pieces.append(lower[at:max(start, at)])
        at = max(at, end)
    rest = " ".join([*pieces, lower[at:]])
    for _, pattern in _KIND_WORDS:
        rest = pattern.sub(" ", rest)
    rest = _ZH_NOISE.sub(" ", rest)
    if len(CJK.findall(rest)) >= 2:
        return True
    words = re.findall(r"[a-z][a-z'\-]+", rest)
    return any(len(w) >= 3 and w not in _EN_STOP for w in words)


def _weather_queries(places: Sequence[str], time_hint: str | None, *, zh: bool) -> list[str]:
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
    other = other_language_query(place, time_hint, zh=zh)
    return [first, other, second] if other else [first, second]


def _queries(core: str, entities: Sequence[str], kind: QueryKind,
             *, compare: bool, zh: bool) -> list[str]:
    """The question as asked, its keywords, and one phrasing that names the subject directly."""
    if zh:
        keywords = _zh_keywords(core, entities)
    else:
        keywords = " ".join(w for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9.&'\-]*", core)
                            if w.lower() not in _EN_STOP)
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


def _zh_keywords(core: str, entities: Sequence[str]) -> str:
    """The question without its filler words. Names and kind words are kept whole, so a
    one-character filler never cuts a word in two ("新闻" must not lose its "新")."""
    kept = [re.escape(e) for e in sorted(entities, key=len, reverse=True)]
    kept += [pattern.pattern for _, pattern in _KIND_WORDS]
    protected = re.compile("|".join(kept), re.IGNORECASE)
    pieces, at = [], 0
    for match in protected.finditer(core):
        pieces += [_ZH_NOISE.sub(" ", core[at:match.start()]), f" {match.group()} "]
        at = match.end()
    pieces.append(_ZH_NOISE.sub(" ", core[at:]))
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
