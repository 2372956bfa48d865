"""Answer slots: what kind of value answers a question, and whether a sentence carries one.

"How much did X pay" is answered by an amount, "who won" by a name, "when" by a date, "what
time" by a time of day, "the score" by a score. A sentence that carries no such value (a
headline, a dateline, "check back for the closing price") never answers the question,
however many of its words it shares. The slot is read from the question's words in either
language; a question whose words ask no particular kind of value has the slot `any`.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import DAY_MENTION, MONTHS, VISIBLE_DATE
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.places import find_places
from pmflow_gateway.contract.text import ANY_MARKER, CJK_CHARS


class Slot(StrEnum):
    amount = "amount"  # a number with a currency or a unit: a price, a revenue, a rate
    quantity = "quantity"  # how many of something
    share = "share"  # a percentage or a fraction
    score = "score"  # the score of a match
    person = "person"  # who holds a role or did something
    place = "place"  # where something happens
    date = "date"  # when something happens or happened
    time = "time"  # the time of day
    duration = "duration"  # how long something takes or lasts (or a length: "how long is it")
    name = "name"  # which one: an organisation, a title, an award, a hospital, by its name
    any = "any"  # no particular kind of value: a summary, a yes/no question, a definition


_EN = r"(?<![a-z])(?:{})(?![a-z])"
# What a Chinese question counts: the noun after 多少 or 几 and a measure word ("招了多少新生",
# "几所学校"). A unit, money or a time after them asks an amount, not a thing counted.
_COUNTED_NOUN = (
    rf"(?:多少|几)(?>(?:个|名|位|所|家|座|辆|台|架|次|场|条|套|只|部|项|起|例|款|户|艘|颗|人次|批)?)"
    rf"(?![钱元度分米吨斤升倍万亿千百块岁号点月年天周日时秒角克斤亩人比一二两三四五六七八九十])"
    # Money is an amount, however it is named: 多少转会费, 多少租金, 多少税.
    rf"(?![{CJK_CHARS}]{{0,3}}[费价钱款金资税租薪额率])([{CJK_CHARS}]{{2}})")
# The order matters: the first slot whose words the question uses is its slot ("how many
# points did he score" asks a count, "what time is the kickoff" a time, not a date).
_ASKED: tuple[tuple[Slot, re.Pattern[str]], ...] = (
    # Idioms first: "where did the index close" asks a level, "where can I watch it" and
    # "在哪个平台" ask for a name of any kind.
    (Slot.amount, re.compile(
        r"(?<![a-z])where (?:did|does|do|is|are|will|has|have) .{1,40}(?:close|closed|trade"
        r"|trading|stand|end|ended|finish|open|opened|settle|settled)(?![a-z])", re.IGNORECASE)),
    (Slot.any, re.compile(
        r"在哪个?(?:平台|网站|频道|app|APP|台|软件|应用)|哪个(?:平台|网站|频道|台)|(?<![a-z])where "
        r"(?:can (?:i|you|we)|to|do (?:i|you|we)) (?:watch|stream|buy|get|listen|download"
        r"|see|find|read)(?![a-z])", re.IGNORECASE)),
    (Slot.share, re.compile(
        r"百分之几|多大比例|占比|比例是|百分比|" + _EN.format(
            r"what (?:percent(?:age)?|share|proportion|fraction)|how much of|per ?cent of"),
        re.IGNORECASE)),
    (Slot.score, re.compile(
        r"比分|几比几|比数|" + _EN.format(r"score|final score|scoreline"), re.IGNORECASE)),
    (Slot.time, re.compile(
        r"几点|什么时间开|几时|营业时间|开放时间|(?<!哪天)(?<!什么时候)(?:首班车|末班车|头班车)|"
        + _EN.format(
            r"what time|which time|kick-?off time|tip-?off time|start time|at what time"
            # Opening hours: "open today, till when", "christmas day hours".
            r"|(?:open|opens|close|closes)\b.{0,30}(?:till|until) when|till when"
            r"|(?:opening|business|holiday|[a-z]+ day|weekend|sunday|saturday) hours"
            r"|what are (?:the|its|their) hours"
            # A timetable's first or last one is asked by its time of day, unless "when".
            r"|(?<!when )(?<!when will the )(?<!when does the )(?<!when is the )"
            r"(?:first|last) (?:train|bus|tram|ferry|sailing|boat|flight|departure)s?"
            r"(?! of the)"),
        re.IGNORECASE)),
    (Slot.duration, re.compile(
        r"多久|多长时间|多少(?:天|小时|分钟|年时间|年)|几年|几个月|刑期|续航|" + _EN.format(
            r"how long|how many (?:days|hours|minutes|weeks|months|years)|battery life"
            r"|runtime|run time"),
        re.IGNORECASE)),
    (Slot.quantity, re.compile(
        rf"多少(?:个|人|家|名|位|辆|台|架|次|场|所|座|条|套|只|部|项|起|例|款|户|位|艘|颗|席|票)|几(?:个|人|家|名|位|席"
        rf"|辆|台|次|场|所|座|条|项|起|例|款)|[{CJK_CHARS}]{{0,3}}数量|人口|" + _EN.format(
            # A population is a count of people ("48,310 residents"), not an amount.
            r"how many|number of|count of|population|inhabitants") + "|" + _COUNTED_NOUN,
        re.IGNORECASE)),
    (Slot.date, re.compile(
        r"什么时候|啥时候|啥时|何时|哪天|哪一天|几号|几月|哪年|哪一年|日期|上市时间|发布时间|开售时间|施行|生效|截止"
        r"|" + _EN.format(r"when|whens|what date|which date|release date|launch date|on sale date"
                          r"|due date|deadline|what day|which day|how soon|until when"),
        re.IGNORECASE)),
    (Slot.place, re.compile(
        r"在哪|哪里|哪儿|何地|何处|什么地方|地点|" + _EN.format(
            r"where|wheres|which city|which venue|what venue|what city"),
        re.IGNORECASE)),
    (Slot.person, re.compile(
        r"是谁|谁是|谁[赢获拿当任做接打进得投]|谁的|哪位|哪个人|" + _EN.format(
            r"who|whom|whose|whos|which (?:player|driver|team|person|candidate|company)"),
        re.IGNORECASE)),
    # "Which agency", "what's the name of", "names of": a proper name answers, whatever it
    # names (a place, a day or a person was asked above).
    (Slot.name, re.compile(
        r"叫什么名字|叫什么|名字是|名称是|哪(?:家|所|支|部|款)|" + _EN.format(
            r"^\s*(?:and |so |but )?which|what(?:'s| is| was| are| were) (?:the )?names?"
            r"|names? of|name the|(?:is|was|are|were) (?:it |they |he |she )?called"),
        re.IGNORECASE)),
    (Slot.amount, re.compile(
        r"评分|几分|多少分|打分|罚则|处罚|多少钱|价格|价钱|价位|售价|股价|金价|油价|汇率|报价|收盘|开盘|点位|多少亿|多少万|多少元|多少美元|营收|"
        r"收入|利润|净利|市值|估值|罚款|多少度|几度|气温|温度|利率|费用|成本|多贵|多少|几块"
        r"|" + _EN.format(
            r"how much|how many dollars|rating|rated|price[sd]?|cost|costs|worth|valued?"
            r"|valuation|penalty|penalties|fined|revenue|sales|profit|income|earnings|loss|rate|rates|yield|fee|fine|salary|quote"
            r"|trading at|market cap|temperature|how (?:hot|cold|warm|high|low|tall|long|far"
            r"|heavy|big|fast|old|large|powerful)|weigh|horsepower|hp|bhp|torque|battery|capacity"
            r"|output|mileage|top speed"), re.IGNORECASE)),
)

# Values in a sentence.
# A number starts where its digits do: tried from inside a run of digits as well, a pattern
# costs the square of the run (seconds on a page's 4,000 digits) and finds nothing more.
_NUMBER = r"(?<!\d)(?<!\d[.,])\d+(?:[.,]\d+)*"
_CN_NUMBER = r"(?<![零〇一二两三四五六七八九十百千万亿])[零〇一二两三四五六七八九十百千万亿]+"
_CURRENCY = CaseBlind(
    rf"[$€£¥￥₩₹]\s*{_NUMBER}|{_NUMBER}\s*(?:[$€£¥]|元|美元|欧元|英镑|日元|港元|港币|韩元|卢比|比索"
    r"|里拉|兹罗提|克朗|法郎|卢布|泰铢|新元|澳元|加元|人民币|块|角)"
    rf"|{_NUMBER}\s*(?:万|亿|千|百)(?:元|美元|欧元|英镑|日元|港元|人民币)"
    rf"|(?<![a-z]){_NUMBER}\s*(?:(?:thousand|million|billion|trillion|bn|mn|m|k)\s+)?"
    r"(?:dollars?|euros?|pounds?|yen|yuan|renminbi|rmb|won|rupees?|pesos?|francs?|kronor|krona"
    r"|cents?|pence|¢|美分|分钱"
    r"|kroner|zloty|lira|ringgit|baht|usd|eur|gbp|jpy|cny|cnh|hkd|aud|nzd|cad|chf|sek|nok"
    r"|try|pln|inr)(?![a-z])"
    rf"|(?<![a-z])(?:usd|eur|gbp|jpy|cny|cnh|hkd|aud|nzd|cad|chf|us\$|c\$|a\$|hk\$)\s*{_NUMBER}")
_UNIT = CaseBlind(
    rf"{_NUMBER}\s*(?:%|％|‰|℃|°\s*[CF]?|度|点|个基点|基点|bp|bps|basis points?|points?|pts"
    r"|美分|cents?|/\s*(?:吨|升|斤|公斤|克|盎司|桶|股|千瓦时|度|平方米|t|l|kg|oz|bbl|share|ton|tonne)"
    r"|元/|每(?:吨|升|斤|公斤|股|桶)|per (?:ton|tonne|litre|liter|gallon|barrel|ounce|share|kg)"
    r"|万吨|吨|升|公斤|千克|克|千瓦时|兆瓦|吉瓦|mw|gw|kwh|km|公里|千米|米|m\b|miles?|feet|ft|kg|lbs?"
    r"|pounds|ounces?|万元|亿元|万人|亿人|x|倍|平方公里|平方千米|平方米|公顷|亩"
    r"|sq\.? ?(?:km|mi|m|ft)|square (?:kilomet(?:re|er)s|miles|met(?:re|er)s|feet)"
    r"|horsepower|hp|bhp|ps|kw|nm|lb-?ft|kwh|mah|mph|km/h|kph|light[- ]years?|gb|tb|mb"
    r"|megapixels?|mp|fps|hz|ghz|mhz|inch(?:es)?|cm|mm|马力|千瓦|分(?![钟之]))(?![a-z])"
    rf"|{_NUMBER}\s*(?:/\s*(?:5|10|100)(?!\d)|out of (?:5|10|100)(?!\d)|stars?(?![a-z]))"
    rf"|{_NUMBER}\s*(?:万|亿)|{_NUMBER}\s*(?:thousand|million|billion|trillion|bn)(?![a-z])"
    rf"|(?:high|low|max|min)s?\s+(?:of\s+)?-?{_NUMBER}|(?:reached|at|to|of|is|was|stood at"
    rf"|closed at|fell to|rose to)\s+-?{_NUMBER}(?![\d/-])"
    rf"|(?:报|收报|收于|升至|跌至|涨至|降至|达到?|录得)\s*-?(?!(?:19|20)\d{{2}}\s*年){_NUMBER}")
_DURATION = CaseBlind(
    rf"(?:{_NUMBER}|{_CN_NUMBER}|(?<![a-z])(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|several|a few|a couple of))\s*"
    r"(?:-\s*)?(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|decades?"
    r"|秒钟?|分钟|个?小时|天|周|个?星期|个月|年)(?![a-z])")
_SHARE = CaseBlind(
    rf"{_NUMBER}\s*(?:%|％|per ?cent|percentage points?)|百分之{_CN_NUMBER}"
    rf"|{_CN_NUMBER}成(?![员为功立])"
    r"|(?<![a-z])(?:half|a third|a quarter|two[- ]thirds|three[- ]quarters|one[- ](?:third|fifth"
    r"|quarter|tenth)|一半|三分之[一二]|四分之[一三]|五分之[一二三四])(?![a-z])")
_SCORE = CaseBlind(
    r"(?<![\d.:/-])\d{1,3}\s*(?:[-–—:：]|比)\s*\d{1,3}(?![\d:/-])(?!\.\d)"
    r"(?!\s*(?:[ap]\.?m|pm|am|点|时|分))")
_TIME = CaseBlind(
    r"(?<!\d)(?:[01]?\d|2[0-3])[:：][0-5]\d(?!\d)|(?<!\d)\d{1,2}(?:[:.]\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)"
    r"|(?:上午|下午|晚上|早上|凌晨|中午|傍晚)?\s*\d{1,2}\s*[点时](?:\s*\d{1,2}\s*分|半)?|noon|midnight")
_MONTH_WORD = "|".join(sorted(MONTHS, key=len, reverse=True))
_DATE = CaseBlind(
    rf"\d{{1,2}}\s*月(?:\s*\d{{1,2}}\s*[日号])?|\d{{4}}\s*年|(?<![a-z])(?:{_MONTH_WORD})\.?\s+\d{{1,2}}"
    rf"(?![\d:])|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_WORD})(?![a-z])"
    rf"|(?<![a-z])(?:in|by|from|until|since|on|early|late|mid|end of|start of)\s+(?:{_MONTH_WORD}"
    r"|(?:19|20)\d{2})(?![a-z])|(?:first|second|last|latter) half of (?:19|20)\d{2}"
    r"|(?<![a-z])(?:next|this|last) (?:year|month|week|spring|summer|autumn|fall|winter)(?![a-z])"
    r"|明年|今年|下个?月|本月|年底|年初|年内|上半年|下半年|[一二三四]季度|月底|月初|中旬|上旬|下旬")
_CAPITALISED_WORDS = re.compile(
    r"(?<![\w.])[A-Z][a-zà-ÿ'’\-]+(?:\s+(?:[A-Z]\.\s*)?[A-Z][a-zà-ÿ'’\-]+)*")
_ZH_NAME_BY_ROLE = (
    rf"(?:由|新任|现任|主教练|教练|主帅|首席执行官|总裁|董事长|总经理|总监|董事|监事|主任|书记|秘书长|市长|部长|主席|总统|总理|冠军|得主"
    rf"|导演|演员|作者|作家|编剧|歌手|选手|队长|院长|校长|局长|法官|被告人?"
    # A player by position: 后卫周屹然全场砍下31分.
    rf"|后卫|前锋|中锋|控卫|门将|外援|主攻|二传|球员)[{CJK_CHARS}]{{2,4}}")
_ZH_NAME_CONTEXT = re.compile(
    rf"[{CJK_CHARS}]{{2,4}}(?:表示|称|说|接任|出任|担任|当选|执教|执掌|夺冠|获胜|获得|赢得|领衔|率队|为|是|打进|攻入"
    r"|梅开二度|收获|摘得|夺得|捧得|捧起|斩获|拿下|战胜|击败|加冕|问鼎|以\d)|" + _ZH_NAME_BY_ROLE)
# A person's title before the name, not 由 (由于…) nor a winner (冠军奖金).
_ZH_ROLE_NAME = re.compile(_ZH_NAME_BY_ROLE.replace("(?:由|", "(?:").replace("|冠军|得主", ""))
_ZH_PLACE = re.compile(
    rf"在[{CJK_CHARS}A-Za-z]{{2,12}}(?:举行|举办|进行|开幕|开赛|揭幕|召开|上演|打响)"
    rf"|(?:位于|坐落于|地处|设在|设于|落户|总部在)[{CJK_CHARS}A-Za-z]{{2,}}|[{CJK_CHARS}]{{2,10}}"
    r"(?:赛道|体育场|体育馆|球场|中心|会展|场馆|剧院|广场|公园|机场|车站|港|省|市|县|区)")
_QUOTED_NAME = re.compile(r"《[^》]{1,40}》|“[^”]{1,40}”|「[^」]{1,40}」")
_EN_PLACE = re.compile(
    r"(?<![a-z])(?:in|at|from|to|near|outside|inside)\s+(?:the\s+)?[A-Z][\w'’\-]+", re.ASCII)


def asking_words() -> tuple[re.Pattern[str], ...]:
    """The patterns of the words with which questions ask for a slot."""
    return tuple(pattern for _, pattern in _ASKED)


@cached_if_short(maxsize=1024)
def asked_slot(question: str) -> Slot:
    """The kind of value that answers the question."""
    for slot, pattern in _ASKED:
        if pattern.search(question):
            return slot
    return Slot.any


def fills(slot: Slot, sentence: str, asked: tuple[str, ...] = (), question: str = "") -> bool:
    """Whether the sentence carries a value of the slot's kind; `asked` are the names the
    question gave, which are never the name that answers "who", nor is a name the
    `question` says a word of."""
    if slot is Slot.any:
        return True
    if slot is Slot.amount:
        return bool(_CURRENCY.search(sentence) or _UNIT.search(sentence)
                    or _SHARE.search(sentence))
    if slot is Slot.share:
        return bool(_SHARE.search(sentence))
    if slot is Slot.quantity:
        return _counts_something(sentence)
    if slot is Slot.score:
        return bool(_SCORE.search(_without_dates_and_times(sentence)))
    if slot is Slot.time:
        return bool(_TIME.search(sentence))
    if slot is Slot.duration:
        return bool(_DURATION.search(sentence) or _UNIT.search(sentence))
    if slot is Slot.date:
        return bool(VISIBLE_DATE.search(sentence) or _DATE.search(sentence)
                    or DAY_MENTION.search(sentence))
    if slot is Slot.person:
        if _A_HUMAN_ASKED.search(question) and not CJK_ANY.search(sentence):
            return someone_named(sentence, asked, question)
        return bool(proper_names(sentence, asked) or _ZH_NAME_CONTEXT.search(sentence))
    if slot is Slot.name:
        return bool(proper_names(sentence, asked) or _ZH_NAME_CONTEXT.search(sentence)
                    or _ZH_PLACE.search(sentence) or _QUOTED_NAME.search(sentence))
    return bool(_EN_PLACE.search(sentence) or _ZH_PLACE.search(sentence)
                or proper_names(sentence, asked))


_NUMBER_WORDS = CaseBlind(
    r"(?<![a-z])(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen"
    r"|a hundred|a thousand|a million|a billion|a (?:third|quarter|half)|half)(?![a-z])"
    rf"|{_CN_NUMBER}(?:个|人|家|名|位|辆|台|架|次|场|所|座|条|套|只|部|项|起|例|款|户|艘|颗)")


# A figure in a headline: money, a share, a temperature, a score in Chinese. Not a bare number,
# which is as often a year, a model, a route or a count of things ("Boeing 737-800", "2号航站楼").
_MONEY_WORDS = (r"thousand|million|billion|trillion|bn|mn|dollars?|euros?|pounds?|yuan|cents?"
                r"|pence")
_TITLE_FIGURE = CaseBlind(
    rf"[$€£¥￥]\s*{_NUMBER}(?:\s*(?:{_MONEY_WORDS})(?![a-z]))?"
    rf"|-?{_NUMBER}\s*(?:%|％|‰|℃|°[CF]?|度(?!数)|[万亿千百]?(?:元|美元|欧元|英镑|日元|港元)"
    rf"|(?:{_MONEY_WORDS})(?![a-z]))"
    rf"|{_NUMBER}\s*比\s*{_NUMBER}")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def figures_not_in(text: str, stated: str) -> str:
    """`text` with each figure (money, a share, a temperature, a score) that `stated` does not
    give made "…": a page's title in the sources beside an answer names the page, and a
    figure of its headline that the answer did not state was never checked against the
    question (the quarter's revenue above the asked profit, the Pro's price above the asked
    model's). The answer's citation markers ("[1]") state nothing."""
    numbers = set(_DIGITS.findall(ANY_MARKER.sub("", stated)))
    if set(_DIGITS.findall(text)) <= numbers:
        return text  # every number of it is stated (or it has none): no figure to hide
    return _TITLE_FIGURE.sub(
        lambda m: m.group() if set(_DIGITS.findall(m.group())) <= numbers else "…", text)


def without_shares(sentence: str) -> str:
    """The sentence without its percentages and fractions."""
    return _SHARE.sub(" ", sentence)


def states_a_price(sentence: str) -> bool:
    """Whether the sentence carries an amount of money (a price, not a count or a share)."""
    return bool(_CURRENCY.search(sentence))


# A number that only qualifies a noun counts nothing: "a five-year plan", "a 7-day trial".
_MODIFIER = CaseBlind(
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)-(?:year|month|week|day"
    r"|hour|minute|second|point|game|match|inch|foot|mile|page|part|step|man|person|seat"
    r"|story|storey|star|time|way)s?(?![a-z])")


_EDITION_NUMBER = re.compile(r"(?<![\d.])\d+(?:st|nd|rd|th)\s+(?:annual|anniversary|edition"
                             r"|birthday|running|season)|第\s*\d+\s*届")
# Capitalised: "40 may have died" names no day of May.
_DAY_OF_MONTH = re.compile(r"(?<![A-Za-z])(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                           r"[a-z]*\.?\s+\d{1,2}(?!\d)|\d{1,2}\s*月\s*\d{1,2}\s*[日号]")
_YEAR_NUMBER = re.compile(r"(?<![\d.])(?:19|20)\d{2}(?!\d|[.,]\d)")


def _counts_something(sentence: str) -> bool:
    """A number that is not a year, a date, a time of day, an ordinal, a modifier or an
    amount of money ("save $5 a month" counts no users)."""
    # Nor does a share: "taking 51.4% of the vote" does not say how many votes.
    rest = _MODIFIER.sub(" ", _CURRENCY.sub(" ", _SHARE.sub(" ", _without_dates_and_times(
        sentence))))
    # A day of a month ("Nov. 28", 11月28日) and an edition's number ("40th annual", 第3届)
    # count nothing; "its 5th title" counts titles.
    rest = _EDITION_NUMBER.sub(" ", _DAY_OF_MONTH.sub(" ", rest))
    # A year counts nothing, at the end of a sentence too ("from 2004 to 2017.").
    rest = _YEAR_NUMBER.sub(" ", rest)
    return bool(re.search(r"\d", rest) or _NUMBER_WORDS.search(rest))


def _without_dates_and_times(sentence: str) -> str:
    rest = VISIBLE_DATE.sub(" ", sentence)
    return _TIME.sub(" ", rest)


# Capitalised words that start a sentence or a phrase without being a name.
_NOT_NAME_WORDS = frozenset({"the", "a", "an", "this", "that", "these", "those", "it", "its",
    "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "in", "on", "at", "for",
    "from", "by", "with", "after", "before", "when", "while", "but", "and", "or", "if", "as",
    "to", "of", "since", "last", "next", "new", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december"})


def proper_names(sentence: str, asked: tuple[str, ...] = ()) -> list[str]:
    """Capitalised names that are not the asked ones: people, teams, companies and places in
    English text. A single capitalised word counts when it does not start the sentence
    ("beating Brazil"); at the start only a run of two does ("Kevin Mayer said")."""
    found = []
    asked_folds = [a.casefold() for a in asked if a]
    for match in _CAPITALISED_WORDS.finditer(sentence):
        words = match.group(0).split()
        while words and words[0].casefold().strip("'’") in _NOT_NAME_WORDS:
            words = words[1:]
        name = " ".join(words)
        first = not sentence[:match.start()].strip()
        if (words and (len(words) >= 2 or not first)
                and not any(name.casefold() in a or a in name.casefold() for a in asked_folds)):
            found.append(name)
    return found


# A person, as English news writes one: a title before a name, a name elected, appointed or
# quoted, or a name someone elected or appointed. "The Liberal Democrats have won" names a
# party, not a person.
_PERSON = re.compile(
    r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir|Dame|Cllr|Councillor)\.?\s+[A-Z]"
    r"|[A-Z][a-z]+(?:\s+[A-Z][a-z'’-]+)+,?\s+(?:was|were|has been|had been|is|has|had)\s+"
    r"(?:been\s+)?(?:elected|re-elected|appointed|named|chosen|voted|sworn|crowned|confirmed"
    r"|promoted|hired|selected)"
    r"|(?:elected|appointed|named|chose|hired|promoted|picked|selected)\s+(?:[a-z]+\s+){0,2}"
    r"[A-Z][a-z]+\s+[A-Z][a-z'’-]+"
    r"|[A-Z][a-z]+\s+[A-Z][a-z'’-]+,?\s+(?:said|says|told|who|aged?\s+\d)")


CJK_ANY = re.compile(f"[{CJK_CHARS}]")
# A question that asks for a person by what only a person is ("who is the prosecutor"): a
# team, a country or a firm answers "who won", never these. The role follows "the", "a",
# "new" or a possessive: "who will host" asks who hosts, which a country may.
_A_HUMAN_ASKED = re.compile(
    r"(?i:(?<![a-z])(?:the|a|an|new|current|former|interim|acting|[a-z]+'s|[a-z]+s)\s+"
    r"(?:[a-z-]+\s+){0,2}(?:prosecutors?|judges?|lawyers?|attorneys?|officers?|guards?"
    r"|spokes(?:man|woman|person)|actors?|actress|singers?|authors?|writers?|directors?"
    r"|characters?|protagonist|ceo|chief executive|president|chair(?:man|woman)?|coach|manager"
    r"|mayor|governor|minister|premier|chancellor|secretary|captain|founder|co-founder|witness"
    r"|victims?|suspects?|gunman|shooter|defendants?|ambassador|senator|congress(?:man|woman)"
    r"|doctor|scientists?|researchers?|pitcher|quarterback|goalkeeper|striker|scorer|hostages?"
    r"|prisoners?|journalists?|reporter|presenter|head coach)(?![a-z]))")
_WORD = re.compile(r"[a-z0-9]+")
# What a question says besides names: never a reason to set a name aside.
_FUNCTION_WORDS = frozenset({
    "who", "whom", "whose", "what", "which", "when", "where", "why", "how", "is", "are", "was",
    "were", "will", "would", "did", "does", "do", "the", "a", "an", "of", "in", "on", "at",
    "for", "to", "and", "or", "new", "current", "former"})
# A title before a name: one word after it is a name ("Judge Merchan", "Gov. Newsom").
_TITLE_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir|Dame|Judge|Justice|Mayor|Gov|Governor|Sen"
    r"|Senator|Rep|Prosecutor|Coach|President|Minister|Chancellor|Ambassador|Officer|Sgt"
    r"|Detective|Inspector|Chief|Captain|Capt|Gen|General|Col|Lt)\.?\s+$")


def someone_named(sentence: str, asked: tuple[str, ...], question: str) -> bool:
    """Whether an English sentence names someone the question did not: a name of two words or
    more ("Eva-Marie Persson") or one after a title ("Dr Ames"), none of whose words the
    question says, and not a place ("New York"). A single word names a country, a firm or a
    team as often as a person ("Sweden", "WikiLeaks")."""
    said = set(_WORD.findall(question.casefold())) - _FUNCTION_WORDS
    for name in proper_names(sentence, asked):
        words = name.split()
        at = sentence.find(name)
        while words and (words[0].casefold().rstrip(".") in said
                         or _TITLE_BEFORE.search(f"{words[0]} ")):
            # "Governor Elsa Varnholt" asked of the governor: Elsa Varnholt; "Judge Merchan"
            at = sentence.find(words[1], at) if len(words) > 1 else at
            words = words[1:]
        titled = bool(_TITLE_BEFORE.search(sentence, 0, at)) or len(name.split()) > len(words)
        if not words or (len(words) < 2 and not titled):
            continue
        if any(w in said for w in _WORD.findall(" ".join(words).casefold())):
            continue
        if _INSTITUTION.search(name) or _is_place(" ".join(words)):
            continue
        return True
    return False


# The last word of a name that is an institution's or a thing's, never a person's surname.
_INSTITUTION = re.compile(
    r"\s(?:Embassy|Consulate|Ministry|Department|Office|Agency|Committee|Commission|University"
    r"|College|School|Hospital|Church|Bank|Group|Inc|Corp|Company|Association|Union|Republic"
    r"|Kingdom|Stadium|Arena|Airport|Station|Police|Army|Navy|Network|Institute|Foundation"
    r"|League|Cup|Championship|Prize|Awards?|Act|Administration|Government|Senate|Assembly"
    r"|Parliament|Congress|Board|Authority|Bureau|Corporation|Ltd|Club|Federation|Party"
    r"|Council|Cent(?:er|re)|Organi[sz]ation|Times|Post|News)\.?$")


def _is_place(name: str) -> bool:
    found = find_places(name)
    return bool(found) and found[0].start == 0 and found[0].end >= len(name.rstrip(".,"))


def names_a_person_by_role(sentence: str) -> bool:
    """Whether a sentence names a person by the title before the name (Mr, Dr; 财务总监祁慧敏):
    not by what the name does or says, which a party, a team or a council does too
    (民生联盟获得67席, "Pellbrook Council said")."""
    return bool(_HONORIFIC.search(sentence) or _ZH_ROLE_NAME.search(sentence))


_HONORIFIC = re.compile(r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir|Dame)\.?\s+[A-Z]")


def names_a_person(sentence: str) -> bool:
    """Whether an English sentence names a person as one (see `_PERSON`); a Chinese one by
    its name's context (董事长张三, 由李四接任)."""
    return bool(_PERSON.search(sentence) or _ZH_NAME_CONTEXT.search(sentence))


_COUNTED = re.compile(_COUNTED_NOUN)


def counted_noun(question: str) -> str | None:
    """The thing a Chinese question asks the number of ("新生" in 今年招了多少新生), or None."""
    found = _COUNTED.search(question)
    return found.group(1) if found else None


# Units a question may ask its value in, by family: "battery mah" asks a capacity in mAh, which
# a line giving the price does not state. Either unit of a family answers (miles or km).
_UNIT_FAMILIES = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"(?<![a-z])mah(?![a-z])|毫安",
    r"(?<![a-z])(?:kwh|kilowatt[- ]hours?)(?![a-z])|千瓦时",
    r"(?<![a-z])(?:km|kilomet(?:er|re)s?|miles?)(?![a-z/])|公里|千米",
    r"(?<![a-z])(?:mph|kph|km/h)(?![a-z])|时速|公里/小时",
    r"(?<![a-z])(?:megapixels?|mp)(?![a-z])|像素",
    r"(?<![a-z])(?:kg|kilograms?|kilos?)(?![a-z])|公斤|千克",
    r"(?<![a-z])(?:watts?|kw)(?![a-z])|千瓦(?!时)",
    r"(?<![a-z])(?:inch(?:es)?)(?![a-z])|英寸",
))


def unit_asked(question: str) -> re.Pattern[str] | None:
    """The family of units the question names for its value, if it names one."""
    # "the next 13-inch mbp" names a model by its size; it does not ask a size.
    # A capitalised word is a name or an office ("an MP's salary", "Harry Watts").
    return next((family for family in _UNIT_FAMILIES
                 if any(not _NUMBER_BEFORE.search(question, 0, m.start())
                        and not m.group()[:1].isupper() for m in family.finditer(question))),
                None)


_NUMBER_BEFORE = re.compile(r"\d[\s-]*$")

# A value per unit of what is bought: "per kwh", 每升; a line says it per, a, each or "/" (18.4
# cents per kWh, $4.10/gal, 3.5元/吨 of water per cubic metre).
_PER_UNITS = tuple(
    (re.compile(rf"(?<![a-z])per\s+(?:{en})(?![a-z])|每\s*(?:{zh})", re.IGNORECASE),
     re.compile(rf"(?:(?<![a-z])(?:per|a|an|each)\s+|/\s*)(?:{en}|{short})(?![a-z])"
                rf"|(?:每|/)\s*(?:{zh})", re.IGNORECASE))
    for en, short, zh in ((r"kwh|kilowatt[- ]hours?", "kwh", "度|千瓦时"),
                          (r"gallons?", "gal", "加仑"), (r"lit(?:re|er)s?", "l", "升"),
                          (r"kg|kilo(?:gram)?s?", "kg", "公斤|千克"),
                          (r"cubic met(?:re|er)s?|m3", "m3", "立方米|吨")))


def per_unit_asked(question: str) -> re.Pattern[str] | None:
    """What a line must say of a value asked per unit ("how much per kwh"): that it is per
    that unit, not a total that merely names it ("a home using 900 kWh will pay $11.70
    more")."""
    return next((said for asked, said in _PER_UNITS if asked.search(question)), None)


def slot_reason(slot: Slot) -> str:
    """Why nothing was quoted: no sentence carries the asked kind of value."""
    return f"no sentence states the asked {slot.value}"
