"""The words of a question the rules planner reads: what kind of fact the words ask for,
which time words and filler it uses, and which names it mentions (gazetteer plus name shapes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.currencies import currency_codes, currency_names
from pmflow_gateway.contract.dates import MONTHS
from pmflow_gateway.contract.gazetteer import (
    COMPANIES,
    ENGLISH_STOP_WORDS,
    MARKET_NAMES,
    MODELS,
    NAME_VARIANT_WORDS,
    NOT_NAMES,
)
from pmflow_gateway.contract.lexicon import (
    CHINESE_SURNAMES,
    NAME_ENDS,
    is_everyday_word,
    is_misspelling,
    unknown_chinese_head,
)
from pmflow_gateway.contract.places import (
    PlaceMention,
    find_places,
    is_after_place_word,
    region_after,
    region_before,
)
from pmflow_gateway.contract.relevance import FIRM_KINDS_EN, RECENT, ZH_INSTITUTIONS
from pmflow_gateway.contract.text import CJK, CJK_CHARS
from pmflow_gateway.contract.variants import is_qualifier
from pmflow_gateway.contract.when import EN_WEEKDAYS
from pmflow_gateway.contract.when import asked as asked_when
from pmflow_gateway.schemas import QueryKind


def latin(words: str) -> str:
    """Latin words delimited by anything that is not a Latin letter or digit.

    `\\b` would fail between a Chinese character and a Latin word ("腾讯的CEO"), because
    Python counts CJK characters as word characters.
    """
    return rf"(?<![a-z0-9])(?:{words})(?![a-z0-9])"


def _names(names: Sequence[str]) -> re.Pattern[str]:
    """One pattern for names: Chinese as substrings, Latin on word edges, longest first."""
    zh = {n.lower() for n in names if CJK.search(n)}
    spelled = {n.lower() for n in names if not CJK.search(n)}
    parts = [one_of(zh)] if zh else []
    return re.compile("|".join([*parts, latin(one_of(spelled))] if spelled else parts))


_Trie = dict[str, "_Trie"]


def one_of(words: set[str]) -> str:
    """A pattern for any of the words, the longest that matches first (as an alternation of
    them sorted longest first), written as their trie: each position is tried once, not once
    per word (the market names: 14 -> 4 us a question)."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def pattern(node: _Trie) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items())
                    if char]
        if not branches:
            return ""
        either = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        # Longer first: a word that ends here is matched only when no longer one goes on.
        return f"(?:{either})?" if "" in node else either
    return pattern(trie)


# Kinds in priority order: a weather word wins over a market word, and so on.
KIND_WORDS: tuple[tuple[QueryKind, re.Pattern[str]], ...] = (
    (QueryKind.weather, re.compile(
        r"天气|气温|温度|下雨|降雨|有雨|下雪|降雪|暴雨|台风|雾霾|空气质量|带伞|冷不冷|热不热|更热|更冷"
        r"|多少度|几度|预报|晴天|阴天|多云|大风|刮风|湿度|紫外线|降温|升温|凉快|暖和|冷吗|很冷|多冷|热吗"
        r"|很热|多热|有雾|大雾|雷阵雨|雷雨|冰雹|" + latin(
            # The misspellings and shorthand users type into a search box count too.
            r"weather|wether|wheather|weahter|forecast|forcast|temperature|temps?|rain(?:ing|y)?|hot|cold|humid(?:ity)?"
            # Not a town's snow rules: "the snow emergency parking fine", "snow route".
            r"|snow(?:ing)?(?! (?:emergenc(?:y|ies)|routes?|removal|plow\w*|parking|ban|fines?"
            r"|tickets?|ordinance))"
            r"|sunny|cloudy|windy|storms?(?! (?:drains?|water|sewers?))|fog(?:gy)?|freezing|chilly"
            r"|heat ?wave|umbrella"
            r"|warm(?:er)?|hotter|colder|cooler"
            # "What will the high be tomorrow", "tonight's low": the day's temperature.
            r"|(?:the|today'?s|tomorrow'?s|tonight'?s|daytime|overnight) (?:high|low)s?"
            r"(?= (?:be|in|today|tomorrow|tonight|gonna|going to)\b|\?|$)"
            # Never a market's: "the FTSE 100 high today", "Halvora stock high today".
            r"|(?<!\d )(?<!stock )(?<!shares )(?<!index )(?<!price )(?<!crude )(?<!oil )"
            r"(?:highs?|lows?) (?:today|tomorrow|tonight|this weekend|(?:the )?day after"
            r" tomorrow|on [a-z]+day)"
            r"|air quality|aqi|uv index"))),
    (QueryKind.market, re.compile(
        r"股价|股票|股市|汇率|金价|油价|大盘|收盘|开盘|市值|行情|涨跌|期货|多少点|点位|"
        + latin(r"stocks?|shares|share price|exchange rate|market cap|forex|crypto|ticker"))),
    (QueryKind.news, re.compile(
        r"新闻|消息|头条|要闻|动态|快讯|热点|报道|资讯|新鲜事|发生了什么|大事|发布会|宣布|"
        + latin(r"news|headlines?|happened|happening|going on|updates?|breaking|latest on"
                 r"|announce[sd]?|announcements?"))),
    (QueryKind.company, re.compile(
        r"公司|财报|营收|利润|融资|估值|裁员|董事长|创始人|总裁|总部|销量|收购|"
        + latin(r"ceo|cfo|founders?|owns?|owners?|owned|headquarter(?:s|ed)?|earnings|revenue"
                 r"|profits?|funding"
                 r"|valuation|layoffs?|ipo|acquisitions?|acquire[sd]?"))),
    (QueryKind.model, re.compile(
        r"大模型|模型|上下文|" + latin(r"models?|llms?|context window|tokens?"))),
)

# Names whose kind is known: asking about one of them is a question of that kind.
_NAME_KINDS: tuple[tuple[QueryKind, re.Pattern[str]], ...] = (
    (QueryKind.model, _names(MODELS)),
    (QueryKind.company, _names(COMPANIES)),
    (QueryKind.market, _names([*MARKET_NAMES, *currency_names()])),
)
# Currency codes count only in capitals: "TRY" is the lira, "try" a verb.
_CURRENCY_CODE = re.compile(rf"(?<![A-Za-z])(?:{'|'.join(currency_codes())})(?![A-Za-z])")

_STOCK_CODE = re.compile(r"(?<!\d)\d{6}(?!\d)")

TIME = re.compile(
    r"未来\s*[0-9一二三四五六七八九十两]+\s*(?:个)?\s*(?:天|日|周|星期|小时|月)|截至今天|截至目前"
    r"|这个周末|这周末|本周末|周末|今天|今晚|今日|明天|明晚|后天|昨天|昨晚|本周|这周|下周|本月|今年|最近"
    r"|近期|现在|" + latin(r"next \d+ (?:days|hours|weeks)|next (?:week|month)"
                          r"|this (?:weekend|week|month|year)|right now|today|tonight|tomorrow"
                          r"|yesterday|now"))

# What a question says besides its subject; whatever remains after removing these, the
# names and the time words is the thing to search for.
ZH_NOISE = re.compile(
    r"帮我|帮忙|请问|请|麻烦|查一下|查查|查询|搜一下|搜索|看看|看一下|一下|告诉我|我想知道|想知道|有没有"
    r"|有什么|有哪些|什么时候|是什么|什么|怎么样了|怎么样|如何|怎么|会不会|是不是|是谁|是多少|多少钱|几块钱|多少|是哪个|哪个"
    r"|哪些|最新|最近|现在|目前|当前|那个|这个|情况|进展|继续|然后|还有|说说|讲讲|详细|怎么弄|别的|其他"
    r"|他们|她们|他|她|它|说的|对不对|对吗|真的吗|外面|这里|这边|本地|当地|好的|谢谢|嗯|哦|再|新|吗|呢|吧|啊"
    r"|了|的|和|与"
    r"|跟|还是|对比|比较")

EN_STOP = frozenset(ENGLISH_STOP_WORDS)
_NOT_NAMES = frozenset(NOT_NAMES)
_VARIANT_WORDS = frozenset(NAME_VARIANT_WORDS)
FILLERS = CaseBlind(
    r"^(?:帮我|请问下?|请|麻烦|我想知道|想知道|我想问下?|想问下?|求问|问下)?"
    r"(?:查一下|查下|查查|看看|看一下|看下|搜一下|告诉我)?"
    r"|[？?！!。.\s]+$"
    r"|^(?:please |can you (?:tell me|check) )")
# A craft, a ship or a mission named by its number (澄光二号, 天舟七号): the number is the name's.
_ZH_NUMBERED_NAME = re.compile(
    rf"([{CJK_CHARS}]{{2,4}}?)[一二三四五六七八九十]{{1,3}}号(?![线楼院门口站台车])")
# Before a day of the month (上海十五号, 这个月二十号) or a numbered document (中央一号文件).
_NOT_A_CRAFT = re.compile(r"[年月周天日]|今|明|这个|下个|上个|中央")
_ZH_SUFFIX_NAME = re.compile(
    rf"[{CJK_CHARS}]{{2,4}}(?:汽车|科技|集团|银行|证券|控股|股份|电器|电子|地产|置业|保险|医药|制药"
    r"|能源|传媒|物流|航空|食品|矿业|化工|钢铁|光电|重工|实业)")
# A school, hospital, court, museum or station is named by what comes before its kind's word:
# "岑浦市妇幼保健院今天挂号排队要多久" asks of 岑浦市妇幼保健院, not of every hospital in 岑浦.
_ZH_INSTITUTION = re.compile(rf"[{CJK_CHARS}]{{2,10}}?(?:{ZH_INSTITUTIONS})(?![院校馆站园所生])")
# A regulation named without 《》: "珀溪市建筑垃圾管理条例规定的最高罚款" asks of
# 珀溪市建筑垃圾管理条例, not of any 珀溪市 rule (生活垃圾分类管理条例 is another law).
_ZH_LAW_NAME = re.compile(
    rf"(?<![{CJK_CHARS}《])(?:请问|想问|请|问)?([{CJK_CHARS}]{{4,24}}?"
    r"(?:条例|管理办法|实施办法|实施细则|暂行规定|管理规定))")
_ZH_LEAD_NAME = re.compile(
    rf"^([{CJK_CHARS}]{{2,6}}?[0-9A-Za-z]{{0,6}})"
    r"(?=(?:19|20)\d\d年|第?[一二三四1-4]季度|前三季度|上半年|全年|上季度|营收|营业收入|收入|净利润|利润|市值|分红"
    r"|的|最近|最新|今天|今日|今儿|今晚|明天|明日|明儿|后天|后儿|大后天|未来|这周|本周|下周|周末|现在|天气|股价|财报|总部|融资|今年"
    r"|昨天|昨晚|昨日|前天"
    r"|去年|前年|明年|下半年|本季度|上个季度|上个?月|本月"
    # An economy's figures: "塔里维亚失业率是多少" asks about 塔里维亚.
    r"|失业率|通胀|通货膨胀|CPI|GDP|国内生产总值|经济增长|基准利率|利率|汇率|物价|人口|就业|贸易"
    r"|裁员|销量|市值|发布|空气|气温|降雨|下雨|下雪|雾霾|地震|停电|停水"
    # A team's results: "青岚猎鹰比分多少" asks about 青岚猎鹰.
    r"|比分|赛果|战况|战绩|排名|赛程|首发|阵容|下一场|主场|客场"
    # A place's prices and services: "雁汀居民用电第一档多少钱" asks about 雁汀.
    r"|居民|用电|用水|电价|水价|气价|房价|租金|房租|楼市|中考|高考|招生|猪肉|菜价|物价"
    # A follow-up asked whole: "澜海新能源 净利润呢" (the name, a space, the new question).
    r"|\s)")
_NAME_STOP_CHARS = set("的是和与跟在了吗呢有什么哪这那该本家个我你他它们请帮查看")
_LATIN_IN_ZH = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9.+&'\-]*(?: [A-Za-z0-9][A-Za-z0-9.+\-]*)*")
_TITLE = re.compile(r"《[^《》]{1,40}》")
# Letters of any Latin alphabet: "Kölner Haie" is one name, not "K" and "lner".
_EN_TOKEN = re.compile(r"[^\W_][\w.&'\-]*")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str
    kind: QueryKind | None = None
    is_place: bool = False
    mention: PlaceMention | None = None
    """For a place: which place (or places, when it is ambiguous) the table knows."""


# A place or a club followed by one of these is a team ("江苏女排"); English writes the team
# word apart ("Brann women's"), where the variant rules read it.
# A follow-up asked whole puts a space between them: "青岚猎鹰 女篮呢".
_TEAM_WORD = re.compile(r" ?(女排|女篮|女足|男排|男篮|男足|女队|男队|青年队|预备队|俱乐部|队)")


def _with_team_word(text: str, span: Span) -> Span:
    team = _TEAM_WORD.match(text, span.end)
    if team is None:
        return span
    return Span(span.start, team.end(), span.text + team.group(1), span.kind)


# A short name given in brackets right after a name is the same thing: "Halvora
# Therapeutics (HLVR)", 科润电气(301287).
_ALIAS_IN_BRACKETS = re.compile(r"\s*[(（]\s*([A-Z0-9][A-Z0-9.]{1,7})\s*[)）]")


def _with_alias(text: str, span: Span) -> Span:
    alias = _ALIAS_IN_BRACKETS.match(text, span.end)
    if alias is None or span.is_place:
        return span
    return Span(span.start, alias.end(), f"{span.text} ({alias.group(1)})", span.kind)


def _is_country(mention: PlaceMention) -> bool:
    return bool(mention.readings) and all(p.kind == "country" for p in mention.readings)


def find_names(text: str, lower: str, *, zh: bool) -> list[Span]:
    """Every name in the question, in reading order, overlaps resolved to the longest.
    Places come from the place table (`contract.places`): a country is a subject, any other
    place the question's place."""
    weather = KIND_WORDS[0][1].search(lower) is not None
    found = [Span(m.start, m.end, m.text, is_place=not _is_country(m), mention=m)
             for m in find_places(text, place_question=weather)]
    # A title in 《》 is one name, brackets and all: the contract matches it whatever
    # punctuation a page puts between its words.
    found += [Span(m.start(), m.end(), m.group()) for m in _TITLE.finditer(text)]
    for kind, pattern in _NAME_KINDS:
        found += [Span(m.start(), m.end(), text[m.start():m.end()], kind)
                  for m in pattern.finditer(lower)]
    found += [Span(m.start(), m.end(), m.group(), QueryKind.market)
              for m in _STOCK_CODE.finditer(text)]
    found += [Span(m.start(), m.end(), m.group(), QueryKind.market)
              for m in _CURRENCY_CODE.finditer(text)]
    if zh:
        found += [Span(m.start(), m.end(), m.group().rstrip(".-"))
                  for m in _LATIN_IN_ZH.finditer(text)
                  if m.group().lower().rstrip(".-") not in _NOT_NAMES]
        found += [Span(m.start(1) + cut, m.end(), m.group(1)[cut:])
                  for m in (_ZH_LAW_NAME.finditer(text) if _names_a_law(text) else ())
                  if len(m.group(1)) - (cut := _law_start(m.group(1))) >= 6]
        for m in (() if weather else _ZH_INSTITUTION.finditer(text)):
            cut = _institution_start(m.group())
            if len(m.group()) - cut >= 4:
                found.append(Span(m.start() + cut, m.end(), m.group()[cut:]))
        found += [Span(m.start(), m.end(), m.group())
                  for m in (_ZH_NUMBERED_NAME.finditer(text) if "号" in text else ())
                  if not _NOT_A_CRAFT.search(m.group(1)) and not find_places(m.group(1))]
        for m in _ZH_SUFFIX_NAME.finditer(text):
            name = m.group()
            # "这家理想汽车" -> "理想汽车": the name starts after the last function word.
            cut = max((i + 1 for i, ch in enumerate(name[:-2]) if ch in _NAME_STOP_CHARS),
                      default=0)
            if len(name) - cut >= 4:
                found.append(Span(m.start() + cut, m.end(), name[cut:], QueryKind.company))
    else:
        found += _capitalised_phrases(text) + _rare_words(text, lower) + _tickers(text, lower)
        found += _town_at_the_end(text, lower)
        found += [_institution(text, m) for m in _INSTITUTION.finditer(lower)]
    found = [_with_alias(text, _with_team_word(text, span)) for span in found]
    kept: list[Span] = []
    # Sorted by start, longest first: a span can only overlap the last one kept.
    for span in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
        elif kept[-1].kind is None and span.kind is not None:
            # "GPT-5" is a longer name than the known "GPT", and still a model.
            kept[-1] = replace(kept[-1], kind=span.kind)
    kept = _with_place_generics(text, kept)
    kept = [_with_char_before(text, span) for span in kept]
    kept = [trimmed for span in kept if (trimmed := _without_time_at_edges(text, span, zh=zh))]
    # A weather question's name with its region is the place; any other question's only
    # after "in", "at", "near" ("gas prices in larkspur indiana", not "acme energy texas").
    kept = _places_in_regions(text, kept, anywhere=weather)
    if zh and not kept:
        # A name no list knows, at the head of the question: "芜湖明天天气", "泡泡玛特最近股价".
        asked = _LEAD_TIME.sub("", FILLERS.sub("", text))
        lead = _ZH_LEAD_TOWN.search(asked) or _ZH_LEAD_NAME.search(asked)
        name = lead.group(1) if lead else ""
        if not (name and not (set(name) & _NAME_STOP_CHARS) and not is_noise(name)):
            name = _unknown_head(asked)
            cut = 3 if len(name) >= 5 else 2 if len(name) == 4 and name[-1] in NAME_ENDS else 0
            if cut and name[0] in CHINESE_SURNAMES:
                # 林知夏霁川演唱会: 林知夏's concert in 霁川, two names no page writes together
                # (韩雪澄州: 韩雪 and 澄州).
                start = text.find(name)
                return [Span(start, start + cut, name[:cut]),
                        Span(start + cut, start + len(name), name[cut:])]
        if name:
            start = text.find(name)
            # A name that ends in a town's or county's suffix is a place (望澄镇, 岚汀县).
            lead_span = Span(start, start + len(name), name, is_place=name[-1] in "镇乡县")
            lead_span = _without_time_at_edges(text, lead_span, zh=zh) or lead_span
            kept.append(lead_span if lead_span.is_place else _with_team_word(text, lead_span))
    return kept


def _unknown_head(asked: str) -> str:
    """The head of a question that no everyday Chinese word covers (澄州 of 澄州电动车不戴头盔罚
    多少钱): a name; "和" ends one (曦和) but never joins two."""
    head = unknown_chinese_head(asked)
    core = head[:-1] if len(head) == 2 and head.endswith("和") else head
    if not head or set(core) & _NAME_STOP_CHARS or TIME.search(head) or RECENT.search(head):
        return ""
    return head


# A town or county no list knows, at the head of the question, whatever is asked of it:
# "望澄镇停电通知" (after the time words a question may start with).
_ZH_LEAD_TOWN = re.compile(rf"^([{CJK_CHARS}]{{2,3}}?[镇乡县])(?![镇乡县])")
# The time words a question may start with, before the name it asks about: 明天岚汀县天气.
_LEAD_TIME = re.compile(r"^(?:今天|今日|今晚|明天|明日|明晚|后天|昨天|昨晚|昨日|前天"
                        r"|最近|近期|现在|目前)")


def _names_a_law(text: str) -> bool:
    # The pattern tries every position of the question: search it only where it can match.
    return "条例" in text or "办法" in text or "规定" in text or "细则" in text


def _law_start(name: str) -> int:
    """Where a regulation's name starts: at the place that issued it (我想了解深圳市控烟条例),
    else after the last function word in front of it."""
    places = find_places(name)
    return places[0].start if places else _after_stop(name)


def _institution_start(name: str) -> int:
    """Where an institution's name starts: after the asking and time words in front of it
    (我想知道明天望篁中学 -> 望篁中学)."""
    head = name[:-2]
    said = [m.end() for pattern in (ZH_NOISE, TIME) for m in pattern.finditer(head)
            if len(m.group()) > 1]  # one character (和, 与) may be the name's own: 协和医院
    asking = (i + 1 for i, ch in enumerate(head) if ch in "的是在请帮查看问")
    start = max([*said, *asking], default=0)
    # A name never starts with a joining or moving word: 北京大学和清华大学, 有人去医院.
    while start < len(head) and head[start] in "和与及跟去到有人我你他想要":
        start += 1
    return start


def _after_stop(name: str) -> int:
    """Where a Chinese name starts after the last function word in front of it."""
    return max((i + 1 for i, ch in enumerate(name[:-2]) if ch in _NAME_STOP_CHARS), default=0)


# The generic words English place names end in ("Marlow Springs", "Harlow Falls"). Typed in
# lower case, the word before one may be a place of its own (Marlow) or no known word at all,
# and the generic word an everyday one (falls) or another place (Springs): the two are one
# name, a place no table knows. (A known place that ends in one, "kansas city", is found
# whole by the place table first.)
_PLACE_GENERIC = CaseBlind(
    r" (?:springs|falls|heights|creek|beach|harbou?r|hills|valley|city|junction|crossing"
    r"|ferry|bay|lake|ridge|grove|mills|landing|bluffs?|rapids|vale|village|glen|hollow"
    r"|cove|shores|plains|pines|corners|meadows?|wells|township|county|island|isle|skerry"
    # ... and those of companies, teams and institutions ("quarnfield robotics").
    r"|robotics|foods|motors|logistics|pharma|pharmaceuticals|therapeutics|biosciences"
    r"|airlines|airways|holdings|group|technologies|labs|semiconductors?|electronics"
    r"|materials|mining|chemicals|insurance|bancorp|bank|brewing|automotive|aerospace"
    r"|marine|shipping|freight|railways?|utilities|industries|manufacturing|instruments"
    r"|realty|properties|hotels|resorts|inc|corp|corporation|ltd|llc|plc|ventures"
    r"|building society|credit union|insurance"
    r"|rovers|united|athletic|wanderers|rangers)(?![\w'’])")


# "the vessel point maritime museum": in lower case, everyday words before an institution's
# word, after "the", are its name.
_INSTITUTION = re.compile(
    r"(?<![a-z])the\s+((?:(?!the\s|of\s|in\s|at\s|and\s)[a-z][a-z'’.-]*\s+){1,4}"
    r"(?:museum|hospital|library|university|college|airport|stadium|arena|reservoir|zoo"
    r"|gallery|theatre|theater|cathedral|aquarium|observatory|conservatory))(?![a-z])")


def _institution(text: str, match: re.Match[str]) -> Span:
    """The institution's name: without the everyday words before a rare one ("the comet
    halvard observatory" is the Halvard Observatory's comet)."""
    start = match.start(1)
    words = list(re.finditer(r"\S+", text[start:match.end(1)]))
    rare = next((w for w in words[:-1] if not is_everyday_word(w.group().lower().rstrip("."))),
                None)
    if rare is not None:
        start += rare.start()
    return Span(start, match.end(1), text[start:match.end(1)])


def _with_place_generics(text: str, spans: list[Span]) -> list[Span]:
    """A name and the place-name word typed after it are one name, which no table knows (a
    weather question takes it for its place, and a region after it for its region)."""
    out: list[Span] = []
    i = 0
    while i < len(spans):
        span = spans[i]
        generic = (None if span.kind is not None or CJK.search(span.text)
                   else _PLACE_GENERIC.match(text, span.end))
        if generic and not span.text.islower() and generic.group().islower():
            generic = None  # "the Kelsby ferry": a capitalised name would write "Ferry"
        i += 1
        if generic is None:
            out.append(span)
            continue
        end = generic.end()
        out.append(Span(span.start, end, text[span.start:end]))
        while i < len(spans) and spans[i].start < end:
            i += 1  # the generic word, read as a name of its own
    return out


def _places_in_regions(text: str, spans: list[Span], *, anywhere: bool = True) -> list[Span]:
    """A name no list knows, asked with the region or country it lies in, is the place asked
    ("Fennick, Maine", "Hollis Ferry, OR", 浙江璃川): the town, not the region, whose weather
    a page about the region would give."""
    out: list[Span] = []
    i = 0
    while i < len(spans):
        span = spans[i]
        joined = (_with_region_after(text, span) or _with_name_after(text, span, spans[i + 1:])
                  or _with_town_suffix(text, span, spans[i + 1:])
                  ) if anywhere or is_after_place_word(text, span.start) else None
        if joined is not None and not anywhere and len(
                text[span.end:joined.end].strip(" ,")) < 4:
            joined = None  # a state's code ("alder creek wa") only in a weather question
        if joined is None:
            out.append(span)
            i += 1
            continue
        out.append(joined)
        i += 1
        while i < len(spans) and spans[i].start < joined.end:
            i += 1  # the region, read as a name of its own
    return out


def _with_region_after(text: str, span: Span) -> Span | None:
    if span.kind is not None or span.is_place or span.mention is not None or CJK.search(
            span.text):
        return None
    after = region_after(text, span.end, typed=True)
    if after is None:
        return None
    region = text[span.end:after[0]].strip(" ,")
    # Written as pages write it, with its comma: "larkspur indiana" is "larkspur, indiana".
    return Span(span.start, after[0], f"{span.text}, {region}", is_place=True)


def _with_name_after(text: str, span: Span, rest: list[Span]) -> Span | None:
    """浙江璃川, 浙江省璃川市: a province, then a Chinese name no list knows."""
    if not span.is_place or span.mention is None or not CJK.search(span.text):
        return None
    start = span.end + (text[span.end:span.end + 1] in ("省", "市")
                        and not span.text.endswith(("省", "市")))
    lead = _ZH_LEAD_NAME.match(text[start:])
    name = lead.group(1) if lead else ""
    end = start + len(name)
    if (not CJK.search(name) or set(name) & _NAME_STOP_CHARS or is_noise(name)
            or asked_when(name) is not None
            or any(s.start < end for s in rest) or region_before(text, start) is None):
        return None
    return Span(span.start, end, text[span.start:end], is_place=True)


def _with_char_before(text: str, span: Span) -> Span:
    """蒙兴县: a known one-character county (兴县) inside a longer name no list knows is that
    name, unless what precedes it is a time word or a function word (昨晚兴县, 在兴县)."""
    if (not span.is_place or len(span.text) != 2 or span.text[-1] not in "县镇乡"
            or span.start == 0 or not CJK.fullmatch(text[span.start - 1])
            or text[span.start - 1] in _NAME_STOP_CHARS
            or _LEAD_TIME.fullmatch(text[max(0, span.start - 2):span.start])):
        return span
    return Span(span.start - 1, span.end, text[span.start - 1:span.end], is_place=True)


def _without_time_at_edges(text: str, span: Span, *, zh: bool) -> Span | None:
    """A name found without a list reads up to the next word its finder knows, which may
    be a time word's first part: "Ravensmoor Oct 2026" names Ravensmoor in October (a month
    before a day or a year is a date), 长夜星河首周末 names 长夜星河 (首周末, 上周末: the
    weekend), 昨天桐坪化工厂 names 桐坪化工 (昨天 is when). None when nothing is left."""
    if span.is_place:
        return span
    start, end = span.start, span.end
    if zh:
        lead = TIME.match(text, start, end)
        if lead is not None:
            start = lead.end()
        if end - start > 2 and text[end - 1] in _TIME_PREFIX and TIME.match(text, end):
            end -= 1
    else:
        last = _LAST_WORD.search(text, start, end)
        if (last is not None and last.start() > start and last.group().lower() in MONTHS
                and _DAY_OR_YEAR.match(text, end)):
            end = start + len(text[start:last.start()].rstrip())
    if (start, end) == (span.start, span.end):
        return span
    if end - start < 2:
        return None
    return replace(span, start=start, end=end, text=text[start:end])


# What turns a following 周末, 周, 月 or 年 into a time phrase (上周末, 首周末, 本月).
_TIME_PREFIX = frozenset("上下首本这今明昨前后去每")
_LAST_WORD = re.compile(r"[A-Za-z]+$")
_DAY_OR_YEAR = re.compile(r"\s+\d{1,4}(?!\d)")


_TOWN = re.compile(f"[{CJK_CHARS}]{{1,3}}?[镇乡村](?![{CJK_CHARS}]*[镇乡村])")


def _with_town_suffix(text: str, span: Span, rest: list[Span]) -> Span | None:
    """石门坎镇: a known name (石门) that begins a town's longer name is not the place asked."""
    if not span.is_place or not CJK.search(span.text) or span.text[-1] in "镇乡村":
        return None
    town = _TOWN.match(text, span.end)
    if (town is None or set(town.group()) & _NAME_STOP_CHARS
            or any(s.start < town.end() for s in rest)):
        return None
    return Span(span.start, town.end(), text[span.start:town.end()], is_place=True)


MAX_NAME_WORD_CHARS = 24
# Five letters at least: shorter rare words are mostly slang and shorthand ("nite", "thru").
_LOWER_WORD = re.compile(r"(?<![\w])[a-zß-ÿā-ɏ][a-zß-ÿā-ɏ0-9'\-]{4,}(?![\w])")


# Things a town or a firm numbers that are no product of it: "fenwold route 14", "gate 3".
_NUMBERED_NOT_A_PRODUCT = frozenset({
    "route", "bus", "buses", "line", "platform", "gate", "flight", "train", "tram", "road",
    "street", "exit", "junction", "terminal", "bay", "lane", "ward", "district", "zone", "stage",
    "level", "grade", "class", "year", "room", "floor", "building", "block", "pier", "berth",
    "runway", "highway", "interstate", "channel", "episode", "season", "chapter", "article",
    "section", "item", "number", "division", "league", "round", "week", "day", "top", "under",
    "over", "aged", "ages", "plot", "unit", "phase", "hall", "court", "field", "pitch"})
_PRODUCT_LINE = re.compile(r"\s+([a-z]{3,12})\s+\d{1,3}(?![\d.:%])(?!\s*(?:day|days|hour"
                           r"|hours|week|weeks|month|months|year|years|am|pm)\b)")
_MODEL_TAIL = re.compile(r"(?:\s+(?:\d[\w.]*|gen|generation|series|mark|mk"
                         r"|(?![qh][1-4](?![\w])|fy)[a-z]{1,3}\d{1,4}[a-z]{0,2}(?=[\s?!.,]|$)"
                         r"|[a-z]{1,5}(?=\s|$)))+")
_LONE_MODEL_CODE = re.compile(
    r"(?<![\w.-])(?![qh][1-4](?![\w])|fy)[a-z]{1,3}\d{1,4}[a-z]{0,2}(?![\w.-])"
    r"(?:\s+(?:pro|max|plus|ultra|mini|lite|se|air|neo|fe)(?![\w]))*")
# A model's code: letters then digits ("x7", "s24", "gt3"), not a reporting period ("q3").
_MODEL_CODE = re.compile(r"(?![qh][1-4](?![\w])|fy)[a-z]{1,3}\d{1,4}[a-z]{0,2}")


_INFLECTIONS = (("ing", ("", "e")), ("ed", ("", "e")), ("es", ("",)), ("s", ("",)))


def _inflected_everyday(word: str) -> bool:
    """An everyday word with an ending the word list lacks: "littering", "resurfacing"."""
    for ending, adds in _INFLECTIONS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[:-len(ending)]
            stems = [stem + add for add in adds]
            if len(stem) >= 4 and stem[-1] == stem[-2]:
                stems.append(stem[:-1])  # "dropping" -> "drop"
            return any(is_everyday_word(s) for s in stems)
    return False


def _rare_words(text: str, lower: str) -> list[Span]:
    """Words no everyday English text uses, typed in lower case: names ("regus", "bozeman
    weather"), with the numbers and edition words that follow ("snapdragon 8 gen 5"); not a
    time word, a kind word, or a misspelling of an everyday word ("tmrw", "anual")."""
    spans = []
    for match in _LOWER_WORD.finditer(text):
        word = _without_possessive(match.group())
        if len(word) > MAX_NAME_WORD_CHARS:
            continue
        parts = [p for p in word.split("-") if p]
        if (word in EN_STOP or word in _NOT_NAMES
                or all(is_everyday_word(p) or _inflected_everyday(p) for p in parts)
                or is_noise(word)
                or any(p.search(word) for _, p in KIND_WORDS) or is_misspelling(word)):
            continue
        end = match.start() + len(word)
        if firm := _FIRM_AFTER.match(text, end):
            # The kind of firm is the name's: "verdalux systems" is not Verdalux Foods.
            spans.append(Span(match.start(), firm.end(), text[match.start():firm.end()]))
            continue
        # A product line and its number after the maker's name: "nexlo fathom 10".
        line = _PRODUCT_LINE.match(text, end)
        if line and not any(p.search(line.group(1)) for _, p in KIND_WORDS) and not (
                line.group(1) in EN_STOP or line.group(1) in _NUMBERED_NOT_A_PRODUCT
                or asked_when(line.group(1)) is not None):
            end = line.end()
        tail = _MODEL_TAIL.match(text, end)
        if tail:
            kept = [t for t in tail.group().split() if t[0].isdigit() or t in _VARIANT_WORDS
                    or _MODEL_CODE.fullmatch(t)
                    or t in ("gen", "generation", "series", "mark", "mk") or is_qualifier(t)]
            # Only an unbroken run of such words belongs to the name.
            run = tail.group().split()
            n = next((i for i, t in enumerate(run) if t not in kept), len(run))
            if n:
                end = text.index(run[n - 1], end) + len(run[n - 1])
        spans.append(Span(match.start(), end, text[match.start():end]))
    # A model's code stands for its model ("korvo x9 or x9 pro"), with the edition after it.
    for match in _LONE_MODEL_CODE.finditer(lower):
        spans.append(Span(match.start(), match.end(), text[match.start():match.end()]))
    return spans


# The kind of firm after a lower-case name, unless it starts an everyday compound
# ("corvane capital expenditure", "pellbrook bank holiday").
_FIRM_AFTER = re.compile(rf"\s+(?:{FIRM_KINDS_EN})(?![\w])(?!\s+(?:expenditure|spending|gains"
                         r"|markets?|bills?|prices?|day|holidays?|accounts?|stage|updates?"
                         r"|review|plan|plans|costs?|rate|rates)(?![\w]))")
# A reporting period or a year after a name is not part of it ("Norwood Freight Q3 2026").
_PERIOD_TOKEN = CaseBlind(r"[QH][1-4]|[1-4]Q|FY'?\d{2,4}|(?:19|20)\d{2}")
# Days and months are capitalised in English and name no subject or place: "Will it rain on
# Sunday?" asks about a day, and a page that says "Sunday" is not about what was asked. Within
# a name they stay ("Black Friday", "Theresa May", "March Madness").
_CALENDAR_WORDS = frozenset({*EN_WEEKDAYS, *(  # the months' full names: the longest of each
    max((n for n, m in MONTHS.items() if m == month), key=len) for month in range(1, 13))})
# In a price question a short word no everyday text uses is a ticker ("ltc price now").
_TICKER_WORD = re.compile(r"(?<![\w$])[a-z]{2,5}(?![\w])")
_PRICE_WORDS = re.compile(latin(r"price|prices|quote|trading|shares|stock|worth|cost"))


def _tickers(text: str, lower: str) -> list[Span]:
    if not _PRICE_WORDS.search(lower):
        return []
    return [Span(m.start(), m.end(), text[m.start():m.end()], QueryKind.market)
            for m in _TICKER_WORD.finditer(text)
            if m.group() not in EN_STOP and m.group() not in _NOT_NAMES
            and not is_everyday_word(m.group()) and not is_noise(m.group())
            and not any(p.search(m.group()) for _, p in KIND_WORDS)]


def _without_possessive(name: str) -> str:
    """"Orvik's" and "Larkfield Systems'" name Orvik and Larkfield Systems."""
    for mark in ("'s", "’s", "'", "’"):
        if name.endswith(mark):
            return name[:-len(mark)]
    return name


# A town no list knows, typed in lower case after "in" at the end of the question, in words
# any dictionary has: "sales tax in cedar hollow", "trash pickup in linwood park tn". Read as
# a town only where its last word is what towns are named with, so "in real time" and "in
# high school" stay words.
_TOWN_WORDS = frozenset({
    "hollow", "valley", "park", "grove", "creek", "river", "springs", "falls", "hills", "hill",
    "heights", "lake", "lakes", "bluff", "bluffs", "ridge", "bay", "beach", "harbor", "harbour",
    "port", "point", "wood", "woods", "glen", "dale", "mills", "junction", "landing", "bend",
    "ford", "plains", "prairie", "meadows", "gardens", "forest", "island", "mesa", "canyon",
    "gap", "flats", "rapids", "shores", "pines", "oaks", "cove", "crest", "vale"})
# What a park, a lake or a field of work is, not a town's name: "theme park", "state park".
_GENERIC_BEFORE = frozenset({
    "big", "small", "capital", "medical", "down", "home", "early", "late", "state", "national",
    "theme", "water", "party", "inner", "animal", "border", "steel", "tax", "college", "dog",
    "amusement", "trailer", "mobile", "ball", "skate", "car", "office", "business", "industrial",
    "public", "private", "local", "old", "main", "city", "county", "town", "nearest", "nature",
    "wildlife", "memorial", "regional", "trampoline", "safari", "golf"})
_AT_THE_END = re.compile(r"(?<![a-z])(?:in|at|near)\s+((?:[a-z]+\s+){0,5}[a-z]+)\s*[?.!]*\s*$")
_WHEN_WORDS = frozenset({"today", "tonight", "tomorrow", "now", "right", "rn", "atm",
                         "currently", "this", "week", "weekend", "year", "month"})


def _town_at_the_end(text: str, lower: str) -> list[Span]:
    found = _AT_THE_END.search(lower)
    if found is None:
        return []
    start = found.start(1)
    words = found.group(1).split()
    while words and words[-1] in _WHEN_WORDS:  # "in cedar hollow right now"
        words.pop()
    # The town's words, then at most its state ("linwood park nm").
    for n in (len(words), len(words) - 1):
        name = words[:n]
        end = start + len(" ".join(name))
        if not (2 <= n <= 3 and name[-1] in _TOWN_WORDS and name[0] not in EN_STOP
                and name[0] not in _GENERIC_BEFORE
                and not any(w in _NOT_NAMES or any(p.search(w) for _, p in KIND_WORDS)
                            for w in name)):
            continue
        town = text[start:end]
        if n == len(words):
            return [Span(start, end, town, is_place=True)]
        region = region_after(lower, end, typed=True)
        if region is not None and any(p.country == "US" for p in region[1]):  # not "centre"
            state = text[end:region[0]].strip(" ,")
            # Written as pages write it, with its comma: "linwood park, nm".
            return [Span(start, region[0], f"{town}, {state}", is_place=True)]
    return []


def _capitalised_phrases(text: str) -> list[Span]:
    """Runs of capitalised words (or versions right after one) in English text: names."""
    spans: list[Span] = []
    run: list[re.Match[str]] = []

    def close_run() -> None:
        if run:
            name = _without_possessive(text[run[0].start():run[-1].end()])
            if not all(_without_possessive(t.group()).lower() in _CALENDAR_WORDS for t in run):
                spans.append(Span(run[0].start(), run[0].start() + len(name), name))
            run.clear()

    for token in _EN_TOKEN.finditer(text):
        word = _without_possessive(token.group())
        is_name = (word.lower() not in EN_STOP and word.lower() not in _NOT_NAMES
                   and not _PERIOD_TOKEN.fullmatch(word))
        starts_name = is_name and any(c.isupper() for c in word)
        adjacent = bool(run) and text[run[-1].end():token.start()] == " "
        continues = ((starts_name or word[0].isdigit() or word.lower() in _VARIANT_WORDS)
                     and not _PERIOD_TOKEN.fullmatch(word))
        if adjacent and is_name and continues:
            run.append(token)
            continue
        close_run()
        if starts_name:
            run.append(token)
    close_run()
    return spans


def is_noise(chunk: str) -> bool:
    """Whether a chunk is only time words, freshness words, filler and kind words."""
    if TIME.search(chunk) or RECENT.search(chunk) or asked_when(chunk):
        return True
    stripped = ZH_NOISE.sub("", chunk)
    for _, pattern in KIND_WORDS:
        stripped = pattern.sub("", stripped)
    return len(stripped) < 2


# A subject named only by pointing at it: a pronoun, "this/that one", "the game" without a
# team. Without the conversation it points into, nobody can know which one is meant.
_DEICTIC_ZH = re.compile(
    r"(?:那|这|该)(?:只|个|家|场|支|款|部|位|条|次|股|队|公司|比赛|球队|股票|产品|东西|玩意)"
    r"|他们|她们|它们|咱们|我们|(?<![其吉])他(?!人)|她|它")
_DEICTIC_EN = re.compile(
    r"(?<![a-z'])(?:it|its|they|them|their|we|us|our|he|him|his|she|her|this one|that one"
    r"|the (?:(?:final|latest|last|current|next|upcoming|previous) )?(?:game|match|race|fight"
    r"|stock|share price|shares|company|team|club|product|show|film|movie|score|result"
    r"|price|law|bill|act|policy|rule|ban|deal|report|case|trial|election|vote))(?![a-z'])")


def points_without_naming(lower: str, spans: Sequence[Span], *, weather: bool) -> bool:
    """Whether the question's subject is only pointed at ("did we win last night?",
    "那只股票收盘多少", "how much is it?"): it names nothing and points at something. In a
    weather question "it" is the weather ("will it snow"), never a subject."""
    if any(span.kind is not None or span.is_place or len(span.text) > 1 for span in spans):
        return False
    if _DEICTIC_ZH.search(lower):
        return True
    found = [m.group(0) for m in _DEICTIC_EN.finditer(lower)]
    return any(not (weather and word in ("it", "its")) for word in found)
