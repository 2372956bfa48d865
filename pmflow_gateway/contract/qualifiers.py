"""Qualifiers: a sentence that says another period, role, occasion or variant of what was
asked is not the answer, however well it matches the rest.

One mechanism for every kind of qualifier. A dimension (the reporting period, the quarter,
the year, actual vs forecast, the phase of an event, which meeting, who won vs who took pole,
current vs former holder, the sport, men's vs women's, a grade number) has values, each with
the words that state it in either language. The question states some values (or implies a
default: asking a score asks the result, asking who holds a role asks the current holder);
a sentence states some. When both state values of a dimension and share none, the sentence
is about something else. A dimension may be `required`: then a sentence that states none of
the asked values does not answer either (a question about guidance is not answered by a
sentence that is not one).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import MONTHS, VISIBLE_DATE
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.metrics import METRICS, PERIODS, asked_metrics
from pmflow_gateway.contract.slots import Slot, asked_slot, asking_words
from pmflow_gateway.contract.specs import with_canonical_specs
from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.text import CJK, CJK_CHARS
from pmflow_gateway.contract.when import EN_WEEKDAYS, find_all

_EN = r"(?<![a-z0-9])(?:{})(?![a-z])"


def _words(zh: str, en: str) -> CaseBlind:
    parts = [p for p in (zh, _EN.format(en) if en else "") if p]
    return CaseBlind("|".join(parts))


@dataclass(frozen=True)
class Dimension:
    name: str
    values: tuple[tuple[str, re.Pattern[str] | CaseBlind], ...]
    default: Callable[[str], frozenset[str]] = field(default=lambda q: frozenset())
    """Values a question implies when it states none of this dimension's values."""
    required: frozenset[str] = frozenset()
    """Asked values a sentence must state to answer."""
    applies: Callable[[str], bool] = field(default=lambda q: True)
    """Whether the dimension matters for this question at all."""

    def stated(self, text: str) -> frozenset[str]:
        return frozenset(value for value, pattern in self.values if pattern.search(text))


_RESULT = _words(
    r"战胜|击败|打败|负于|不敌|输给|逆转|取胜|获胜|赢下|赢了|战平|打平|横扫|力克|险胜|大胜|完胜|告负|夺冠|比分|终场",
    r"beat|beats|beaten|defeat(?:s|ed)?|won|wins|lost|loses|drew|draws|edged|thrashed"
    r"|routed|final score|full[- ]time|victory|victorious|triumph(?:ed)?|scored|rallied")
_SCHEDULE = _words(
    r"将于|将在|将迎战|迎战|即将|开赛|开球|对阵.{0,12}(?:时间|于)|赛程|比赛时间|首发名单|今晚\d|明晚|明天.{0,6}(?:对阵|迎战)",
    r"will (?:face|play|host|meet|take on|visit)|to face|to play|to host|face-?off at|kick-?off"
    r"|kicks off|tip-?off|tips off|first pitch|puck drop|travel to|preview|schedule[d]?"
    r"|fixtures?|upcoming|starts at|begins at|gets under way at"
    r"|(?:plays?|hosts?|faces?|visits?|meets?|travels?) next|next (?:plays?|hosts?|faces?|visits?"
    r"|meets?|travels? to|game|match|fixture)")
_PREVIOUS = _words(
    r"上次交手|上一次交手|此前交手|上次交锋|上回合|首回合|第一回合|第一阶段|上赛季|上个赛季|上一轮交手|前一次",
    r"last met|previous meeting|previous encounter|last meeting|earlier this season|first leg"
    r"|reverse fixture|last season|the last time|when the (?:two )?(?:sides|teams|clubs) met")
_ASKS_RESULT = _words(
    r"比分|几比几|赢了|输了|赢没赢|胜负|结果|战况|谁赢|谁胜|获胜|赢球|输球|战绩",
    r"score|result|results|won|win|beat|lose|lost|how did .{1,30} do|final")
_ASKS_SCHEDULE = _words(
    r"几点|什么时候(?:比赛|开赛|开球|打)|赛程|下一场|下场|开赛时间|对手是谁",
    r"what time|when (?:do|does|is|are) .{1,40} (?:play|kick|start|face|tip)|kick-?off"
    r"|next (?:[a-z'’]+ ){0,2}(?:game|match|fixture|race|tie)|schedule|fixture")

_WINNER = _words(r"夺冠|冠军|获胜|赢得|折桂|第一名|称雄|登顶|击败|战胜|捧起|捧得|加冕|问鼎"
                 r"|胜出|力克|夺得|当选|胜选",
                 r"won|wins|winner|victory|victorious|triumph(?:ed|s)?|beat|beats|defeated"
                 r"|elected|re-elected"
                 r"|took the (?:chequered|checkered) flag|first place|champions?|clinched"
                 r"|claimed the title|lifted the (?:trophy|cup)")
_POLE = _words(r"杆位|排位赛|排位|头名发车|首发位置", r"pole|pole position|pole-sitter|qualifying"
               r"|qualified")
_ASKS_WINNER = _words(r"谁赢|谁获胜|冠军|夺冠|谁拿|赢家|获胜者|谁胜",
                      r"who won|who wins|winner|won the|win the|who took the (?:title|race)")
_ASKS_POLE = _words(r"杆位|排位", r"pole|qualifying|who qualified")

# Offices and roles, by family: "who is the CEO" is answered by a sentence about the chief
# executive, not about the chairman; "who runs X" by any of the people who lead it.
_ROLES = (
    ("ceo", _words(r"首席执行官|CEO|总裁|行政总裁", r"ceo|chief executive(?: officer)?")),
    ("chair", _words(r"董事长|董事会主席", r"chair(?:man|woman|person)?")),
    ("coach", _words(r"主教练|教练|主帅|少帅|执教|帅位", r"coach|head coach|manager|boss")),
    ("mayor", _words(r"市长", r"mayor(?:al)?")),
    ("governor", _words(r"州长|省长", r"governor|gubernatorial")),
    ("president", _words(r"总统|国家主席", r"president")),
    ("prime_minister", _words(r"首相|总理", r"prime minister|premier")),
    ("minister", _words(r"部长|大臣|国务卿", r"minister|secretary")),
    ("founder", _words(r"创始人|创办人", r"founder|co-?founder")),
    ("captain", _words(r"队长", r"captain|skipper")),
    ("leader", _words(r"首席执行官|CEO|总裁|董事长|掌门人|负责人|一把手|领导",
                      r"ceo|chief executive|chair(?:man|woman)?|president|head|leader|boss"
                      r"|runs|leads|heads|in charge|director|managing director")),
)
_ROLE = _words(
    r"首席执行官|总裁|董事长|总经理|主教练|教练|主帅|市长|州长|省长|部长|主席|总统|总理|首相|行长|校长|队长|负责人|掌门人",
    r"ceo|chief executive|president|chair(?:man|woman)?|coach|head coach|manager|mayor"
    r"|governor|minister|premier|chancellor|secretary|director|captain|boss|runs|leads|heads")
_CURRENT = _words(r"现任|新任|接任|出任|任命|上任|接替|接棒|继任|当选",
                  r"new|current|incumbent|appointed|named|replac(?:e|es|ed|ing)|succeed(?:s|ed)?"
                  r"|successor|takes? over|took over|incoming|elected|hired")
_FORMER = _words(r"前任|原任|卸任|离任|辞职|辞去|下课|离职|退休|被解雇|已故",
                 # "the previous survey" is no former office-holder
                 r"former|ex-|previous(?! (?:survey|week|month|year|quarter|report|day|session"
                 r"|close|reading|estimate|forecast|record|high|low|level|figure|data|count"
                 r"|final|election|edition|tournament|meeting|version|year's|week's|day's"
                 r"|period|release|update|round|season|game|match|months?|years?|weeks?))"
                 r"|predecessor|outgoing|stepp(?:ed|ing) down|steps down"
                 r"|resign(?:s|ed)?|retire[sd]?|departed|sacked|fired|then-")
_ASKS_FORMER = _words(r"前任|原来|之前|曾经|上一任", r"former|previous|predecessor|ex-|before")

_SPORTS = (
    ("basketball", _words(r"篮球|男篮|女篮|CBA|WCBA", r"basketball|nba|wnba|euroleague|cba")),
    ("volleyball", _words(r"排球|男排|女排", r"volleyball")),
    ("hockey", _words(r"冰球", r"ice hockey|hockey|nhl|khl|shl|face-?off|puck")),
    ("american_football", _words(r"美式橄榄球|美式足球", r"nfl|touchdowns?|quarterback")),
    ("rugby", _words(r"橄榄球", r"rugby")),
    ("baseball", _words(r"棒球", r"baseball|mlb|innings?")),
    ("tennis", _words(r"网球", r"tennis|atp|wta")),
    ("cricket", _words(r"板球", r"cricket|wickets?")),
    ("football", _words(r"足球|男足|女足|中超|中甲|英超|西甲|德甲|意甲|法甲|欧冠",
                        r"football|soccer|premier league|la liga|bundesliga|serie a|ligue 1"
                        r"|champions league|mls")),
)
_GENDER = (
    ("women", _words(r"女子|女篮|女排|女足|女队|女单|女双|女将|女性", r"women|women's|womens|ladies"
                     r"|female|girls")),
    ("men", _words(r"男子|男篮|男排|男足|男队|男单|男双", r"men's|mens|male|boys")),
    # Mixed doubles is neither the men's nor the women's: 混双冠军 is not 男双's.
    ("mixed", _words(r"混双|混合双打|混合团体|混合接力", r"mixed (?:doubles|team|relay|pairs?)")),
    # A club's youth side is not its first team: "Ostrey Rovers under-18s".
    ("youth", _words(r"青年队|预备队|梯队|U\d{2}", r"under-?\d{2}s?|u\d{2}s?|academy (?:side|team)"
                     r"|youth (?:side|team|cup)|reserves? (?:side|team)")),
)
# Who a ticket is for, where it seats, which fuel, which prize, which stage of a
# competition: a student ticket's price is not the adult one, 看台 is not 内场, unleaded is
# not diesel, best director is not best film, the regular season's MVP not the final's.
_TICKETS = (
    ("adult", _words(r"成人|全价|普通票", r"adults?|full[- ]price")),
    ("child", _words(r"儿童|童票|小孩", r"child|children|kids?|juniors?")),
    ("student", _words(r"学生", r"students?")),
    ("senior", _words(r"老人|老年|长者", r"seniors?|pensioners?|over[- ]6\d")),
)
# Which session a ticket or pass is for: a day pass is not the weekend pass.
_ADMISSIONS = (
    ("day", _words(r"日场|白天场|单日票", r"day pass(?:es)?|day tickets?|single[- ]day")),
    ("evening", _words(r"夜场|晚场", r"evening (?:pass|tickets?|session)|night tickets?")),
    ("weekend", _words(r"两日票|周末票|通票", r"weekend pass(?:es)?|weekend tickets?"
                       r"|full[- ]weekend")),
)
# Whom a tariff is for, and which tier of it: a business rate is not the household one, 第一档
# not 第二档.
_CUSTOMERS = (
    ("household", _words(r"居民|家庭|住宅", r"households?|domestic|residential")),
    ("business", _words(r"非居民|工商业|商业用|企业用", r"business(?:es)?|commercial"
                        r"|non-household")),
)
_TIERS = tuple(
    (f"tier{n}", _words(rf"第{zh}档|{zh}档", rf"tier {n}|{en} tier|band {n}"))
    for n, zh, en in ((1, "一", "first"), (2, "二", "second"), (3, "三", "third")))
_SEATS = (
    ("floor", _words(r"内场|站票", r"standing|floor tickets?")),
    ("stand", _words(r"看台", r"seated tickets?|balcony|circle seats?")),
    ("vip", _words(r"VIP|贵宾", r"vip")),
)
# A class of travel: a second-class fare is not a first-class one, nor business class.
_CLASSES = (
    ("second", _words(r"二等座|二等", r"second[- ]class|standard class|coach class")),
    ("first", _words(r"一等座|一等", r"first[- ]class")),
    ("business", _words(r"商务座|商务舱|公务舱", r"business[- ]class|business seats?")),
    ("economy", _words(r"经济舱", r"economy class|economy seats?|economy fares?")),
    ("sleeper", _words(r"硬卧|软卧|卧铺", r"sleepers?|sleeping car")),
    ("hard_seat", _words(r"硬座", r"hard seats?")),
)
_A_FARE = _words(r"票|座|舱|车|航班|高铁|动车|城际|列车",
                 r"fares?|tickets?|seats?|cabins?|flights?|trains?|rail|carriages?|travel")
_A_TRANSFER = _words(r"转会|身价|违约金", r"transfer|fee|signing|sign(?:ed|s)? for")
_TRANSFER_FEE = _words(r"转会费|以\d|签下|报价",
                       r"fee|will pay|paid|pay|for £|for €|for \$|deal worth")
_RELEASE_CLAUSE = _words(r"违约金|解约金", r"release clause|buy-?out clause")
# How many bedrooms a home has: a two-bedroom rent is not a one-bedroom one.
_ROOMS = (("studio", _words(r"开间|单间", r"studios?")), *(
    (f"{n} bed", _words(rf"{zh}居室?|{zh}室|{n}[室居]|{zh}房(?!价|租|东)",
                        rf"{n}[- ]?(?:bed(?:room)?s?|br|bd)|{en}[- ]bed(?:room)?s?"
                        rf"|{en}-\s+(?:and|or|to)\s+\w+[- ]bed(?:room)?s?"))
    for n, zh, en in ((1, "一", "one"), (2, "[两二]", "two"), (3, "三", "three"),
                      (4, "四", "four"))))
# A loan's, a deposit's or a bond's term: the 30-year rate is not the 15-year one, 5年期以上LPR
# not 1年期, the 60-month CD not the 6-month one (12 months is one year).
_MONTHS_AFTER = (r"[- ]?(?:months?|mos?\.?)"
                 r"(?![- ]?(?:ago|old|later|earlier|before|after|since|high|low|drop|rise|gain"
                 r"|decline|period|run|streak|stretch|average|window|delay))")
# "in 12 months", "the past 6 months", 连续6个月, 近12个月来: a stretch of time, not a term.
_NOT_A_TERM = r"(?<!in )(?<!past )(?<!last )(?<!over )(?<!next )(?<!first )(?<!for )"
_NOT_A_ZH_TERM = r"(?<!连续)(?<!近)(?<!过去)(?<!未来)(?<!前)(?<!后)"


_TERMS = (*(
    (f"{n} year", _words(rf"(?<![\d一二两三四五六七八九十]){n}\s*年期"
                        rf"|(?<![一二两三四五六七八九十]){zh}年期|(?<!\d){n}\s*年(?:固定|定期)"
                        rf"|{_NOT_A_ZH_TERM}(?<![\d.]){12 * n}\s*个月(?![来前后以内])",
                        # Not "in 10 years", "five years ago", "10 years old".
                        rf"(?<!in )(?<!\d)(?:{n}|{en})[- ]?(?:years?|yrs?)"
                        r"(?![- ]?(?:ago|old|later|earlier|before|after|since))"
                        rf"|{_NOT_A_TERM}(?<![\d.]){12 * n}{_MONTHS_AFTER}"))
    for n, zh, en in ((1, "一", "one"), (2, "两", "two"), (3, "三", "three"), (5, "五", "five"),
                      (7, "七", "seven"), (10, "十", "ten"), (15, "十五", "fifteen"),
                      (20, "二十", "twenty"), (30, "三十", "thirty"))), *(
    (f"{n} month", _words(rf"{_NOT_A_ZH_TERM}(?<![\d.]){n}\s*个月(?![来前后以内])"
                          rf"|{_NOT_A_ZH_TERM}(?<![一二两三四五六七八九十]){zh}个月(?![来前后以内])",
                          rf"{_NOT_A_TERM}(?<![\d.])(?:{n}|{en}){_MONTHS_AFTER}"))
    for n, zh, en in ((1, "一", "one"), (3, "三", "three"), (6, "六", "six"), (9, "九", "nine"),
                      (18, "十八", "eighteen"))))
_A_TERM_RATE = _words(r"房贷|贷款|利率|LPR|lpr|国债|存款|定期|公积金|收益率",
                      r"mortgages?|loans?|lpr|apr|bonds?|treasur(?:y|ies)|yields?|deposits?"
                      r"|cds?|notes?|fixed|refinanc\w*")
# Which round of admissions: the early round's admit rate is not the regular round's.
_ROUNDS = (
    ("early", _words(r"提前批|提前招生", r"early (?:decision|action|round|applicants?"
                     r"|admissions?)")),
    ("regular", _words(r"普通批|统招|普通类", r"regular (?:decision|round|applicants?"
                       r"|admissions?)")),
)
_FUELS = (
    ("diesel", _words(r"柴油", r"diesel")),
    ("petrol", _words(r"汽油|9[2258]号", r"petrol|gasoline|unleaded|super 9[58]|premium 9[58]"
                                        r"|e10")),
    # A grade of petrol: premium is not regular.
    ("premium", _words(r"9[58]号", r"premium|super(?! market)")),
    ("regular", _words(r"92号", r"regular|standard unleaded")),
    ("lpg", _words(r"液化气|LPG", r"lpg|autogas")),
)
_AWARDS = (
    ("film", _words(r"最佳影片|最佳故事片|最佳电影", r"best (?:film|picture|feature)")),
    ("director", _words(r"最佳导演", r"best director")),
    ("actor", _words(r"最佳男主角|最佳男演员|影帝", r"best actor")),
    ("actress", _words(r"最佳女主角|最佳女演员|影后", r"best actress")),
    ("screenplay", _words(r"最佳编剧|最佳剧本", r"best (?:screenplay|script)")),
    # The best supporting actor is not the best actor (最佳男配角, 最佳男主角).
    ("supporting actor", _words(r"最佳男配角", r"best supporting actor")),
    ("supporting actress", _words(r"最佳女配角", r"best supporting actress")),
)
_STAGES = (
    ("final", _words(r"总决赛|决赛", r"grand final|finals mvp|the final")),
    ("earlier", _words(r"常规赛|小组赛|半决赛|季后赛|预选赛", r"regular season|group stage"
                       r"|semi-?finals?|play-?offs|qualif(?:ier|ying)")),
)
_DISTANCES = (
    ("half", _words(r"半程马拉松|半马", r"half[- ]marathons?")),
    ("full", _words(r"全程马拉松|全马|(?<!半程)马拉松", r"(?<!half )(?<!half-)marathons?")),
)
# Which kind of device a model name is: a brand's Z9 phone is not its Z9 tablet.
_DEVICES = (
    ("phone", _words(r"手机", r"phones?|smartphones?|handsets?")),
    ("tablet", _words(r"平板", r"tablets?")),
    ("laptop", _words(r"笔记本电脑|笔记本", r"laptops?|notebooks?")),
    ("watch", _words(r"手表", r"smart ?watch(?:es)?")),
    ("earbuds", _words(r"耳机", r"earbuds|headphones")),
)
_A_FUEL = _words(r"汽油|柴油|油价|加油|\d{2}号", r"petrol|gas|gasoline|diesel|fuel|unleaded|pump"
                 r"|lpg|e10")
_PREVIOUS_EDITION = _words(r"上一届|上届|前一届|上一季", r"previous edition|last edition"
                          r"|last year's (?:festival|awards?|ceremony|edition|prize|winner)")
# Which supply an outage cuts: a power cut is not answered by a water one.
_UTILITIES = (
    ("power", _words(r"停电|断电|供电|电力|限电", r"power cuts?|power outages?|blackouts?"
                     r"|electricity|power supply|power will|without power")),
    ("water", _words(r"停水|供水|自来水|断水|水压", r"water supply|water outages?|water mains?"
                     r"|boil[- ]water|without water|water will|water to be")),
    ("gas", _words(r"停气|供气|燃气|天然气|断气", r"gas supply|gas outages?|without gas")),
)
# The reporting period a figure covers; the nine months are read before a quarter, so 前三季度
# is not the third quarter.
_PERIOD = (
    ("nine_months", _words(r"前三季度|前三个季度|1[-至到~]9月|一至九月|年初至今|今年以来累计",
                           r"nine months|9 months|first three quarters|year to date|ytd"
                           r"|year-to-date")),
    ("half", _words(r"上半年|下半年|半年度|中期|半年报", r"half[- ]year|first[- ]half"
                    r"|second[- ]half|h1|h2|six months|interim")),
    ("quarter", _words(r"(?<!前)(?:第?[一二三四1-4]|[一二三四]个?)(?:季度|财季)|季报|单季"
                       r"|上季度|本季度|上个季度|这个季度|该季度|当季",
                       r"quarters?|quarterly|q[1-4]|[1-4]q|(?:first|second|third|fourth)"
                       r"[- ]quarter")),
    ("year", _words(r"全年|年度|年报|整年|财年|全年度", r"full[- ]year|annual(?:ly)?|fiscal[- ]year"
                    r"|for the year|yearly|whole year|entire year|as a whole")),
)
_QUARTER = tuple(
    (f"q{n}", _words(rf"(?<!前)第?{zh}(?:季度|财季)|(?<!前){zh}季报|Q{n}|{n}Q",
                     rf"q{n}|{n}q|{en}[- ]quarter"))
    for n, zh, en in ((1, "[一1]", "first"), (2, "[二2]", "second"), (3, "[三3]", "third"),
                      (4, "[四4]", "fourth")))
_FORECAST = _words(
    r"预计|预期|预测|指引|展望|目标|有望|将达|计划|预告|料将|指导",
    r"expects?|expected|expecting|guidance|guides?|guided|guiding|outlook|forecasts?"
    r"|projects?|projected|anticipates?|sees|targets?|aims?|estimates?|to reach|will reach"
    r"|predicts?|next year|next quarter")
_ACTUAL = _words(
    r"实现|录得|完成|为\d|(?<!有望)(?<!预计)(?<![将可或])达到|同比|环比|报告期|公布|披露",
    r"reported|posted|recorded|totall?ed|came in|was|were|rose|fell|grew|increased"
    r"|decreased|declined|jumped|climbed|generated|delivered|earned|booked")
# What a line says is not yet so: a rumour, a leak, a proposal under consideration. A question
# that does not ask about one asks what is so.
_UNCONFIRMED = _words(
    r"网传|网上流传|流传|爆料|传闻|传言|据传|或将|自媒体称|有自媒体|未经证实|尚未确定|尚未公布"
    r"|(?:检察院|检察机关|检方|公诉机关|公诉人)[^，。；]{0,6}建议[^，。；]{0,6}(?:判处|量刑)"
    r"|请求(?:法院)?判处"
    # a paper's or an analyst's estimate is not the figure: 据本报…测算，…有望达到约2350亿元
    r"|(?:本报|记者|媒体|机构|券商|分析师)[^，。；]{0,30}(?:测算|估算)"
    r"|提议|草案|征求意见|知情人士|消息人士|洽谈中|谈判中"
    # hearsay: who passes it on is no one who could know (据经销商渠道消息, 家长群里都在传)
    r"|据[^，,。；：:]{0,8}(?:渠道|内部|知情|业内|接近|坊间|网友|经销商|4S店)[^，,。；：:]{0,6}"
    r"(?:消息|透露|称)|渠道消息|内部消息|小道消息|都在传(?![颂递承])|(?<!人)群里[^，。]{0,4}(?:在|都在)传"
    r"(?![来颂])|传出(?:消息|风声)|博主[^，。]{0,6}(?:称|爆料|透露|发文)|大V[^，。]{0,6}(?:称|爆料)"
    r"|网友(?:[^，。；]{0,12}发帖)?称(?![赞号颂道])|网友爆料|发帖称"
    r"|(?<!回复)(?<!回应)(?<!针对)(?<!答复)网民[^，。；]{0,12}(?:发布|发帖|爆料|转发|称(?![赞号颂道]))|听证方案|拟定|拟(?:上调|下调|调整为|定为)"
    r"|未获证实|未经官方|官方(?:尚)?未(?:回应|证实|确认|公布)|尚未(?:回应|证实|确认|官宣)",
    r"rumou?r(?:s|ed)?|reportedly|unconfirmed|unverified|speculat\w+|leaked|tipped to"
    r"|according to (?:a|an|one) (?:parent|user|blogger|tipster|leaker|insider|employee"
    r"|listing|commenter|fan|resident|reader)|a parent who|leakers?|tipsters?"
    r"|(?:has|have|had) not (?:yet )?(?:been )?confirmed|not (?:yet )?"
    r"been confirmed|(?:did|does|do) not confirm|declined to confirm|could not be confirmed"
    r"|no official confirmation"
    r"|(?:people|persons?|sources?) (?:familiar|close) (?:with|to)|sources? (?:say|said)"
    r"|according to (?:people|sources|(?:two|three|several) people|a person)"
    r"|in (?:advanced |early |exclusive )?talks (?:to (?:buy|acquire|merge|sell|take over)"
    r"|over a (?:deal|sale|takeover|merger)|about a (?:deal|sale|takeover|merger))"
    r"|proposals?|proposed|proposes|proposing|considering|considers|under consideration"
    r"|would (?:introduce|limit|ban|charge|cap|raise|cut)|consultation"
    r"|(?:house|senate|assembly)(?:'s|’s)? version|(?:original|earlier) (?:bill|version)"
    r"|draft (?:law|bill|rules?|regulations?|bylaw|plan|proposals?|guidelines?|ordinance)"
    # a request of a court or a board is not its decision
    r"|(?:is|are|was|were) (?:asking|urging|petitioning) (?:a|the) (?:judge|court|jury|board"
    r"|council|commission)|asked (?:a|the) (?:judge|court|jury) to|(?:prosecutors?|the state"
    r"|the government|the defen[cs]e|attorneys?|lawyers?)(?:'s?|’s?)? (?:have |has |had )?"
    r"(?:sought|seeks?|seeking|recommended|recommends?|requested|requests?|asked for|asks? for"
    r"|(?:is|are) (?:seeking|asking for))")
# What only a line says is not yet so (a question may use these words of what is): a
# forecaster's call (机构预测, 或降至3.25%), a figure hoped for, a value reported to be, a
# condition on what will be (若LPR下调，…将…).
_NOT_YET_SO = re.compile(
    r"机构预测|机构预计|或(?:将|可|于)?(?:下调|上调|降至|升至|调降|调升|降息|加息)"
    # a figure it is hoped or expected to reach (有望突破5亿元, "is expected to top $50 million")
    r"|有望(?:突破|达到|超过|超越|冲击|站上|升至|降至|跌破|实现|收获)"
    r"|(?i:(?<![a-z])(?:is|are|was|were) (?:expected|projected|forecast|on track|poised|set)"
    r" to (?:top|reach|exceed|hit|surpass|earn|gross|pass|cross)(?![a-z]))"
    r"|(?:^|[，,：:])\s*(?:若|如果|假如|倘若)(?!干)[^。；，,]{0,20}[，,][^。；]{0,30}?(?:将|会|可能)"
    r"|(?i:(?<![a-z])(?:reported to be|is said to be valued|a leak of)(?![a-z]))")


def says_what_is_not_yet_so(sentence: str) -> bool:
    return bool(_NOT_YET_SO.search(sentence))


# A rule in force is so: "when did the ban come into force" is not answered by the draft's
# consultation dates (自媒体称…将于…起实施 is still hearsay).
_CONFIRMED = _words(r"官方宣布|正式|确认|公告|通过|施行|生效|辟谣|官方"
                    r"|(?:法院|法庭|法官)[^，。；]{0,8}判处|宣判|判决|裁定",
                    r"confirmed|announced|officially|formally|adopted|approved|passed|enacted"
                    r"|sentenced|ruled|was ordered|were ordered|awarded|granted|handed down"
                    r"|imposed|(?:judge|court) (?:set|moved|ordered|denied|rejected)"
                    r"|officials? said|said in a statement|(?:come|comes|came|coming) into "
                    r"(?:force|effect)|(?:take|takes|took) effect|in force|in effect")
# The offices an election fills, each its own race.
_OFFICES = (
    ("school_board", _words(r"教育委员会|学区董事会", r"school board|board of education|school"
                                                    r" committee|trustees?")),
    ("council", _words(r"议会|(?<![参众])议员",
                       r"(?:city|town|county|borough) council|council(?:or|man|woman|member)?s?"
                       r"|alder(?:man|woman|person)s?")),
    ("commission", _words(r"", r"(?<!election )(?<!elections )(?:county )?commission(?:er)?s?")),
    ("mayor", _words(r"市长", r"mayor(?:al(?:ty)?)?")),
    ("sheriff", _words(r"警长", r"sheriff")),
    ("governor", _words(r"州长|省长", r"governor|gubernatorial")),
    ("senate", _words(r"参议院|参议员", r"senate|senator")),
    ("house", _words(r"众议院|众议员", r"(?:state )?house|congress(?:man|woman|ional)?"
                                    r"|assembly(?:man|woman|member)?|delegate")),
    ("judge", _words(r"法官", r"judge|judicial|justice")),
    ("prosecutor", _words(r"检察官", r"district attorney|prosecutor|state's attorney")),
)
_A_RACE = _words(r"竞选|选举|当选|胜选", r"runoff|race|elected|election|primary|ballot|won the")
# Holidays, each its own day or days.
_HOLIDAYS = (
    ("christmas_eve", _words(r"平安夜", r"christmas eve")),
    ("christmas", _words(r"圣诞(?!前夜)", r"christmas(?! eve)|xmas")),
    ("new_year", _words(r"元旦|跨年|新年(?:假期|期间|当天|第一天)",
                        r"(?<!lunar )(?<!chinese )new year'?s?(?: eve| day)?")),
    ("thanksgiving", _words(r"感恩节", r"thanksgiving")),
    ("easter", _words(r"复活节", r"easter")),
    ("independence", _words(r"", r"independence day|fourth of july|july 4th")),
    ("memorial", _words(r"", r"memorial day")),
    ("labor", _words(r"劳动节|五一(?:假期|长假|期间|当天)", r"labou?r day")),
    ("halloween", _words(r"万圣节", r"halloween")),
    ("spring_festival", _words(r"春节|除夕|大年初", r"lunar new year|chinese new year")),
    ("national_day", _words(r"国庆", r"")),
    ("mid_autumn", _words(r"中秋", r"mid-autumn")),
    ("dragon_boat", _words(r"端午", r"dragon boat")),
    ("qingming", _words(r"清明", r"")),
)
# A confirmation said not to be there, or of a step before the law: the line says what is not
# yet so.
_DENIED = _words(r"官方(?:尚)?未(?:回应|证实|确认|公布)|未获(?:官方)?(?:证实|确认)"
                 r"|尚未(?:证实|确认|官宣)",
                 r"(?:has|have|had) not (?:yet )?(?:been )?confirmed|not (?:yet )?been confirmed"
                 r"|(?:did|does|do) not confirm|declined to confirm|could not be confirmed"
                 r"|no official confirmation"
                 # a bill's version before the law: "As passed by the House, … would carry"
                 r"|as (?:passed|approved|introduced) by the (?:house|senate|assembly|committee)"
                 r"[^.;]{0,80}(?<![a-z])would(?![a-z])")
# A price on a condition: with a trade-in, a contract or a coupon, for members, on the first
# day of sale.
_A_DEAL = _words(r"以旧换新|券后|到手价|优惠券|补贴后|折后价|会员价|首发优惠|秒杀价|满减",
                 r"trade-?ins?|(?:when|if) you trade in|trade in (?:an?|your|one|it|old)"
                 r"(?![a-z])|with an eligible"
                 r"|with a new \d+-month|on a \d+-month|coupon"
                 r"|promo(?:tional)? (?:price|code)|discounted (?:to|price)|member price"
                 r"|after (?:a |the )?(?:credit|rebate|discount)")
_LIST_PRICE = _words(r"官方售价|售价为|起售价|定价|官方指导价|建议零售价",
                     r"list price|retail price|full price|starts at|starting at|msrp|rrp"
                     r"|recommended retail|unlocked")
_ASKS_A_PRICE = _words(r"多少钱|售价|价格|几块|贵不贵|多贵",
                       r"how much (?:is|are|does|do|will)|price of|(?:what|how much) does .{1,40}"
                       r" cost|(?<!share )(?<!stock )(?<!gas )price(?:d)?$")
# A count that is over, and one still going on, as both the count questions read them.
_FINAL_ZH = r"最终结果|最终计票|正式结果|官方结果"
_FINAL_EN = r"certified|final (?:results?|count|tally|vote)|official (?:results?|count|tally)"
_COUNTING_ZH = r"暂时领先|部分计票"
_COUNTING_EN = (r"leads? (?:\w+ )?with|leading (?:\w+ )?with|partial (?:results|count)"
                r"|(?:votes|ballots) (?:still )?(?:being|to be) counted")
_FINAL_COUNT = _words(rf"{_FINAL_ZH}|认证", rf"{_FINAL_EN}|certification showed")
_A_VOTE = _words(r"选举|计票|得票|票数|投票|当选",
                 r"votes?|ballots?|elections?|elected|mayoral|polls?|turnout|referendum")
# An area wider than a county or a city, and a county or a city itself.
_WIDER_AREAS = (
    ("province", _words(r"全省|全区(?![域间别])|全自治区|全州",
                        r"statewide|state-wide|across the state|state average|province-?wide")),
    ("nation", _words(r"全国(?!人大|政协|性)", r"nationwide|nation-wide|national average"
                      r"|across the country|countrywide")),
    ("local", _words(rf"[{CJK_CHARS}](?:县|镇)|[{CJK_CHARS}](?<!城)乡|(?<!全)市(?![场值价民])",
                     r"county|city|town|township|village|borough|parish|locally|local")),
)
_A_LOCAL_UNIT = _words(rf"[{CJK_CHARS}](?:县|镇)|[{CJK_CHARS}](?<!城)乡(?!村振兴)",
                       r"county|town|township|village|borough")
# A date set before and since changed: "had been scheduled to begin shipping December 5", 原定于
# 12月6日举行. The new date is said with it or in another line.
_SUPERSEDED = _words(r"(?<!按)原定(?!计划)|(?<!按)原计划|原本计划|原先定于|此前定于",
                     r"(?<!as )had been (?:scheduled|expected|planned|set|slated|due)"
                     r"|(?:was|were) "
                     r"(?:originally|initially|previously) (?:scheduled|planned|set|slated|due"
                     r"|expected)|originally (?:scheduled|planned|set|slated|due)")
_NOW_SET = _words(r"延期至|延期到|推迟至|推迟到|改至|改到|调整至|调整为|改为|现定于|(?<!原)定于"
                  r"|顺延|如期|按原计划|按原定",
                  r"now|delayed (?:to|until)|pushed (?:back )?(?:to|until)|moved (?:to|up to)"
                  r"|postponed (?:to|until)|rescheduled (?:for|to)|new (?:date|ship date)"
                  r"|took place|was held|were held|was played|went ahead|as (?:planned|scheduled)")
_ASKS_THE_PLAN_BEFORE = _words(r"原定|原计划|原来", r"originally|initially|first scheduled")
_ASKS_HOW_IT_STANDS = _words(r"目前|领先|暂时|初步|计票进度|开票进度",
                             r"so far|leading|leads?|ahead|early|preliminary|unofficial"
                             r"|partial|counted|reporting|projected")
_PROVISIONAL_COUNT = _words(rf"初步|{_COUNTING_ZH}|非官方",
                            rf"{_COUNTING_EN}|early (?:returns|results|count)|preliminary"
                            r"|unofficial|projected|with \d+% of")
# A count still going on: what "how many votes did she get" is not answered by.
_PARTIAL_COUNT = _words(rf"{_COUNTING_ZH}|计票仍在进行"
                        r"|(?<![\d全部])\d+个(?:投票站|选区)(?:已)?(?:完成|报告)",
                        rf"{_COUNTING_EN}|early (?:returns|count)"
                        r"|(?<!\d)\d+% of (?:precincts|the vote counted|votes counted"
                        r"|ballots counted)|(?<![\d,])\d+ of \d+ (?:precincts|wards|districts"
                        r"|polling places|counties)")
_COMPLETE_COUNT = _words(rf"{_FINAL_ZH}|计票结束|全部计票",
                         rf"{_FINAL_EN}|complete (?:but unofficial )?results|all \d* ?precincts")
_ASKS_A_TALLY = _words(r"多少票|得票|票数|几票",
                       r"how many votes|votes did|vote (?:count|total|tally)|percent of the vote")
# A question about a rumour or a proposal asks about it, not past it: "是真的吗", "is it true".
_ASKS_ABOUT_A_CLAIM = _words(r"是真的吗|真的吗|是否属实|传闻|网传|谣言|爆料|草案|提议",
                             r"is it true|true that|rumou?rs?|proposals?|proposed|draft|plans? to")
# A market's level at its close, against one during the day.
_AT_THE_CLOSE = _words(r"收盘|收报|收于|收涨|收跌", r"closed|close|closing|settled|finished")
_INTRADAY = _words(r"午盘|盘中|早盘|午间|半日|截至发稿|开盘|截至\s*\d{1,2}\s*[:：]\s*\d{2}",
                   r"midday|intraday|at noon|mid-?session|in early trade|in morning trade"
                   r"|opened|at the open|so far today|as of \d{1,2}(?::\d{2})?\s*a\.?m\b")
# A question that asks a closing price names its market by asking it (鸿屹电子今天收盘价).
_ASKS_A_CLOSING_PRICE = _words(r"收盘|收报|收市", r"closing (?:price|level|quote)|close price")
_FIXING = _words(r"中间价|中间汇率|定盘价",
                 r"central parity|(?:daily |yuan |midpoint )?fixing|midpoint rate|reference rate")
_A_MARKET = _words(r"股|指数|大盘|行情|汇率|期货|中间价|[美欧日港]元兑",
                   r"stocks?|shares?|index|indices|futures|exchange rate|ftse|dow|nasdaq|nikkei"
                   r"|hang seng|bourse|fixing|central parity|midpoint rate"
                   r"|[A-Z][a-z]+ (?:20|30|40|50|100|200|250|300|500)")
_GRADE = re.compile(r"(?<![\d.])(\d{1,3})\s*号(?!线|楼|院|馆|门|房|床|口|台|窗)")


# Questions about a reported figure, where actual vs forecast matters.
_FIGURE = _words(r"营收|收入|利润|净利|营业额|销售额|销量|毛利|每股收益|业绩|财报|gdp|生产总值"
                 r"|产量|产值|进出口|出口额|进口额|社会消费品零售总额",
                 r"revenue|sales|profit|income|earnings|eps|margin|results|gdp|gross domestic"
                 r"|output|exports|imports")


def _event_default(question: str) -> frozenset[str]:
    if _ASKS_SCHEDULE.search(question):
        return frozenset({"schedule"})
    if _ASKS_RESULT.search(question) or asked_slot(question) is Slot.score:
        return frozenset({"result"})
    return frozenset()


def _asks_event(question: str) -> bool:
    return bool(_event_default(question))


def _tenure_default(question: str) -> frozenset[str]:
    if _ASKS_FORMER.search(question):
        return frozenset({"former"})
    if _ROLE.search(question) and asked_slot(question) is Slot.person:
        return frozenset({"current"})
    return frozenset()


def _asks_a_holder(question: str) -> bool:
    return asked_slot(question) is Slot.person


def _stated_roles(text: str) -> frozenset[str]:
    found = frozenset(role for role, pattern in _ROLES if pattern.search(text))
    return found - {"leader"} if len(found) > 1 and "leader" in found else found


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("event", (("result", _RESULT), ("schedule", _SCHEDULE)),
              default=_event_default, applies=_asks_event),
    # The latest meeting, unless the question says which month it means.
    Dimension("meeting", (("previous", _PREVIOUS),),
              default=lambda q: frozenset() if months_of(q) else frozenset({"latest"}),
              applies=_asks_event),
    # "Who won" is answered only by a sentence that says someone won.
    Dimension("race", (("winner", _WINNER), ("pole", _POLE)),
              default=lambda q: (frozenset({"pole"}) if _ASKS_POLE.search(q)
                                 else frozenset({"winner"}) if _ASKS_WINNER.search(q)
                                 else frozenset()),
              required=frozenset({"winner", "pole"})),
    Dimension("tenure", (("current", _CURRENT), ("former", _FORMER)),
              default=_tenure_default),
    # "Who won the school board runoff" is not answered by the county commission's.
    Dimension("office", _OFFICES, applies=lambda q: bool(_A_VOTE.search(q) or _A_RACE.search(q))),
    Dimension("role", _ROLES, required=frozenset(r for r, _ in _ROLES),
              applies=_asks_a_holder),
    Dimension("sport", _SPORTS),
    Dimension("team", _GENDER),
    Dimension("utility", _UTILITIES),
    Dimension("ticket", _TICKETS),
    Dimension("seat", _SEATS),
    Dimension("rooms", _ROOMS),
    Dimension("class", _CLASSES, applies=lambda q: bool(_A_FARE.search(q))),
    # A player's release clause is not the fee a club pays for him.
    Dimension("transfer", (("fee", _TRANSFER_FEE), ("clause", _RELEASE_CLAUSE)),
              default=lambda q: frozenset({"fee"}),
              applies=lambda q: bool(_A_TRANSFER.search(q))),
    # A rate of a term not stated is no answer for the term asked: "7/1 ARM: rate 5.62%" for
    # the 20-year fixed rate.
    Dimension("term", _TERMS, required=frozenset(name for name, _ in _TERMS),
              applies=lambda q: bool(_A_TERM_RATE.search(q))),
    Dimension("round", _ROUNDS),
    Dimension("fuel", _FUELS, required=frozenset({"diesel", "premium", "lpg"}),
              applies=lambda q: bool(_A_FUEL.search(q))),
    Dimension("award", _AWARDS),
    Dimension("stage", _STAGES),
    Dimension("distance", _DISTANCES),
    Dimension("device", _DEVICES),
    Dimension("admission", _ADMISSIONS),
    Dimension("customer", _CUSTOMERS),
    Dimension("tier", _TIERS),
    # "Christmas Day hours" are not Thanksgiving's, nor the usual Sunday's.
    Dimension("holiday", _HOLIDAYS, required=frozenset(name for name, _ in _HOLIDAYS)),
    # The edition asked, unless the question names the one before: 上一届's best film is
    # not this year's.
    Dimension("edition", (("previous", _PREVIOUS_EDITION),),
              default=lambda q: frozenset({"latest"})),
    Dimension("period", _PERIOD),
    Dimension("quarter", _QUARTER),
    # "How much is the congestion charge" is not answered by a proposal for one, nor "when
    # does line 6 open" by a rumour.
    Dimension("claim", (("unconfirmed", _UNCONFIRMED), ("confirmed", _CONFIRMED)),
              default=lambda q: frozenset({"confirmed"}),
              applies=lambda q: not _ASKS_ABOUT_A_CLAIM.search(q)),
    # "How much is the phone" asks its price, not what it costs with a trade-in, a plan or a
    # coupon (以旧换新, 券后到手价) unless the question asks about the deal.
    Dimension("offer", (("deal", _A_DEAL), ("list", _LIST_PRICE)),
              default=lambda q: frozenset({"list"}),
              applies=lambda q: bool(_ASKS_A_PRICE.search(q)) and not _A_DEAL.search(q)),
    # The final, certified count is not the one of election night ("Draper leads with 51.8%").
    Dimension("count", (("final", _FINAL_COUNT), ("provisional", _PROVISIONAL_COUNT)),
              applies=lambda q: bool(_FINAL_COUNT.search(q) and _A_VOTE.search(q))),
    # "How many votes did she get" is not answered by a count still going on.
    Dimension("tally", (("complete", _COMPLETE_COUNT), ("partial", _PARTIAL_COUNT)),
              default=lambda q: frozenset({"complete"}),
              applies=lambda q: bool(_ASKS_A_TALLY.search(q)) and not _FINAL_COUNT.search(q)
              and not _ASKS_HOW_IT_STANDS.search(q)),
    # 中间价, the central bank's fixing, is not the market's close.
    Dimension("session", (("close", _AT_THE_CLOSE), ("intraday", _INTRADAY),
                          ("fixing", _FIXING)),
              applies=lambda q: bool(_A_MARKET.search(q) or _ASKS_A_CLOSING_PRICE.search(q))),
    # A county's figure is not its province's or its country's: 全省粮食总产量 does not say what
    # 梧塘县 grew. A line that also names a county or a city may set one beside the other.
    Dimension("area", _WIDER_AREAS, default=lambda q: frozenset({"local"}),
              applies=lambda q: bool(_A_LOCAL_UNIT.search(q)) and not any(
                  p.search(q) for name, p in _WIDER_AREAS if name != "local")),
    # When it happens is not when it was to happen before it was moved.
    Dimension("plan", (("superseded", _SUPERSEDED), ("current", _NOW_SET)),
              default=lambda q: frozenset({"current"}),
              applies=lambda q: asked_slot(q) in (Slot.date, Slot.time)
              and not _ASKS_THE_PLAN_BEFORE.search(q)),
    Dimension("modality", (("forecast", _FORECAST), ("actual", _ACTUAL)),
              default=lambda q: frozenset({"actual"}), required=frozenset({"forecast"}),
              applies=lambda q: bool(_FIGURE.search(q))),
)
@cached_if_short(maxsize=256)
def asked_values(question: str) -> tuple[tuple[Dimension, frozenset[str]], ...]:
    """The values the question states or implies, per dimension that applies to it."""
    found = []
    for dimension in DIMENSIONS:
        if not dimension.applies(question):
            continue
        asked = (_stated_roles(question) if dimension.name == "role"
                 else dimension.stated(question))
        if dimension.name == "modality" and "forecast" in asked:
            asked = frozenset({"forecast"})  # "expected revenue" asks only the forecast
        asked = asked or dimension.default(question)
        if asked:
            found.append((dimension, asked))
    return tuple(found)


def replaced_by(question: str, word: str) -> bool:
    """Whether a follow-up names another value where a word of the question before named one:
    "what about diesel?" after "95 unleaded" asks diesel's price, not unleaded's."""
    return any((said := d.stated(word)) and (asked := d.stated(question)) and not said & asked
               for d in DIMENSIONS if d.name in _NAMED_VALUES)


def states_what_was_asked(question: str, sentence: str) -> bool:
    """Whether the sentence states one of the values the question names itself (best film,
    the adult ticket, diesel), not only what it implies."""
    return any(dimension.stated(question) & dimension.stated(sentence)
               for dimension, _ in asked_values(question)
               if dimension.name in _NAMED_VALUES)


_NAMED_VALUES = frozenset({"ticket", "seat", "fuel", "award", "stage", "utility", "role",
                           "quarter", "distance", "admission", "customer", "tier", "term",
                           "class"})


def asked_clause(question: str, sentence: str) -> str | None:
    """The clauses of a line that lists several values of a kind the question names one of,
    that give the asked one: "a weekend pass costs £80" of "A day pass costs £45 and a
    weekend pass costs £80"; 夜场票120元 of 日场票80元，夜场票120元，儿童票60元. None when the
    line gives one value of each kind (it is quoted whole)."""
    clauses = [c.strip(" ,，;；") for c in _CLAUSE.split(sentence)]
    if sum(bool(_AMOUNT.search(c)) for c in clauses) < 2:
        return None  # one figure: the line is quoted whole
    named = [(d, asked) for d, asked in asked_values(question) if d.name in _NAMED_VALUES]
    for dimension, asked in named:
        if not dimension.stated(sentence) & asked:
            continue
        # A clause must give every asked value it names: the business rate's second tier.
        kept = [c for c in clauses if dimension.stated(c) & asked and all(
            not d.stated(c) or d.stated(c) & a for d, a in named)]
        others = [c for c in clauses if c not in kept and any(
            d.stated(c) for d in DIMENSIONS if d.name in _NAMED_VALUES)]
        if any(_AMOUNT.search(c) for c in kept) and others:
            joint = "，" if CJK.search(sentence) else "; "
            said = joint.join(kept).rstrip("。.") + ("。" if joint == "，" else ".")
            return said[:1].upper() + said[1:]
    return None


def item_asked(question: str, sentence: str) -> str | None:
    """Of a line that lists several figures, each in an item of its own, the one item the
    question's words point to, whatever the items are (no list of kinds): "Local Grade A
    large eggs, dozen — $4.29" of "… large eggs, dozen — $4.29 | Organic eggs, dozen — $6.49"
    asked of large eggs; 95号汽油每升7.82元 of "92号汽油每升7.35元；95号汽油每升7.82元". An item
    is kept only when the question's words it carries include every one another figure's
    item carries, and more: "第三季度营收12.6亿元，净利润1.2亿元" asked of the third quarter's
    profit points to neither clause alone (the period is in one, the metric in the other),
    and is quoted whole. An item is its figure with the words before it ("and iPhone 17 Pro,
    starting at $1,099"); a change ("up 8%", 收涨2.9%) goes with the figure it is said of,
    and the line's heading ("30-year fixed:") with the item. None when no one item is
    pointed to."""
    if len(_LISTED_FIGURE.findall(sentence)) < 2:
        return None  # one figure or none: nothing to choose from
    head, body = _heading(sentence)
    items = _items(_ITEM, body)
    if len(items) < 2:
        items = _items(_CLAUSE, body)
    if len(items) < 2:
        return None
    wanted = asked_words(question)
    said = [words_of(_LISTED_FIGURE.sub(" ", i)) & wanted for i in items]
    best = max(range(len(items)), key=lambda k: len(said[k]))
    if not all(k == best or said[k] < said[best] for k in range(len(items))):
        return None
    item = _LEADING_JOINT.sub("", items[best]).rstrip(" ,，;；|•·。.")
    line = f"{head}{item}"
    if not line[1:2].isupper():  # "iPhone" stays as written
        line = line[:1].upper() + line[1:]
    return line + ("。" if CJK.search(line) else ".")


def _items(parts: re.Pattern[str], body: str) -> list[str]:
    """The items of `body`, each a figure with the words before it; a change goes with the
    figure before it (the one after it when it comes first), the words after the last
    figure with the last item."""
    items: list[str] = []
    waiting = ""
    for piece in re.split(f"({parts.pattern})", body):
        figures = _LISTED_FIGURE.findall(piece)
        if figures and not _only_changes(piece):
            items.append(waiting + piece)
            waiting = ""
        elif figures and items:
            items[-1] += waiting + piece
            waiting = ""
        else:
            waiting += piece
    if items:
        items[-1] += waiting
    return items


def _only_changes(piece: str) -> bool:
    """Whether every figure of the piece says by how much something changed (收涨2.9%,
    "up 8% from a year earlier")."""
    return all(m.group().rstrip().endswith(("%", "％")) and _CHANGE_BEFORE.search(
        piece, max(0, m.start() - 12), m.start()) for m in _LISTED_FIGURE.finditer(piece))


def asked_words(question: str) -> set[str]:
    """The words of a question that can point to one item or line: not what it says it does
    not want ("not organic")."""
    return words_of(_NOT_WANTED.sub(" ", question))


def words_of(text: str) -> set[str]:
    """The words of a text that can tell one item from another: no function word, an English
    word by its first four letters ("closing" is "close"), a product's configuration however
    it is spelt ("12+256" is "12GB+256GB")."""
    return {w[:4] if w.isalpha() and w.isascii() else w for w in terms(with_canonical_specs(text))
            if w not in _FUNCTION_WORDS}


# Where a line's items part: a bar, a semicolon, a bullet, each item with its own figure.
_ITEM = re.compile(r"\s+[|•·]\s+|[;；]")
# A heading that names what every item of the line is of: "30-year fixed:", "DAIRY & EGGS:".
_HEAD = re.compile(r"^([^:：。.;；|]{1,40}[:：]\s*)(?=\S)")
# A price or a rate an item of a list gives (a wider `_AMOUNT`: 亿元, "$1.2 billion"); cut from
# an item before its words are read, it is no term of the question.
_LISTED_FIGURE = re.compile(r"[£$€¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|bn|m|k)\b)?"
                     r"|(?<![\d.,])\d[\d,]*(?:\.\d+)?\s*(?:[万亿千百]*(?:元|美元|港元|角|分钱)|%|％"
                     r"|p\b|pence|cents?)")
# A word of change right before a percent: 收涨2.9%, "up 8%", 同比增长8.2%.
_CHANGE_BEFORE = re.compile(r"(?i:(?<![a-z])(?:up|down|rose|fell|gained|lost|jumped|slipped|climbed"
                            r"|dropped|declined|increased|decreased|rising|falling|of)\s+(?:by\s+)?$)"
                            r"|(?:涨|跌|升|降|增长|下降|回落|回升|增加|减少|走高|走低)(?:了|约|幅?达|幅为)?$")
# What joins an item to the one before it: no part of the item quoted alone.
_LEADING_JOINT = re.compile(r"^[\s,，;；|•·]*(?:(?:and|while|whereas|but)\s+|(?:以及|而|和)\s*)?")
# What the question says it does not want ("not organic", 不要会员价): no term of the asked.
_NOT_WANTED = re.compile(r"(?i:(?<![a-z])(?:not|no|non|excluding|except|without)[\s-]+[a-z0-9]+)"
                         r"|(?:不是|不要|不含|除了|非)[\u4e00-\u9fff]{1,4}")


def _heading(sentence: str) -> tuple[str, str]:
    head = _HEAD.match(sentence)
    if head is None or _AMOUNT.search(head.group(1)) or re.search(r"\d[:：]$", head.group(1)):
        return "", sentence
    return head.group(1), sentence[head.end():]


# "and" between two names joins them ("between Kelsby and Orran Island"), not two clauses.
_CLAUSE = re.compile(r"[，;；、]|,(?!\d|\s(?:19|20)\d\d\b)|(?<=[%％\u4e00-\u9fff]),"
                     r"|\s+(?:and|while|whereas|but)\s+(?![A-Z])")
# A price or a rate, not a year or a day: what a clause of a tariff or a price list gives.
_AMOUNT = re.compile(r"[£$€¥]\s?\d|(?<![\d.,])\d[\d,]*(?:\.\d+)?\s*(?:元|角|分钱|%|％|p\b|pence"
                     r"|cents?)")


def clash(question: str, sentence: str) -> str | None:
    """Why the sentence states another qualifier than the question's, or None."""
    for dimension, asked in asked_values(question):
        said = dimension.stated(sentence)
        if dimension.name == "event" and said == {"result", "schedule"}:
            said = frozenset({"result"})  # "won … and will face X next" reports a result
        if dimension.name == "claim" and "confirmed" in said and _DENIED.search(sentence):
            said = frozenset({"unconfirmed"})  # "官方未回应", "has not confirmed"
        if said and not said & asked:
            return (f"{dimension.name}: says {', '.join(sorted(said))}, "
                    f"asked {', '.join(sorted(asked))}")
        if (missing := (asked & dimension.required) - said) and (
                not said or dimension.name == "fuel"):
            # "Premium gasoline" is not answered by the average price of gasoline.
            return f"{dimension.name}: does not state {', '.join(sorted(missing))}"
    return (_other_grade(question, sentence) or _other_year(question, sentence)
            or _other_month(question, sentence) or _other_version(question, sentence)
            or _other_numbered(question, sentence) or _other_named_line(question, sentence)
            or _other_route(question, sentence) or _elected_not_in_office(question, sentence))


@functools.lru_cache(maxsize=256)
def _asks_the_holder_not_a_race(question: str) -> bool:
    return asks_who_holds(question) and not (_A_RACE.search(question) or _A_VOTE.search(question))


# Who won a race takes the office later: "who is the mayor right now" is not answered by
# "Dunn won the mayoral runoff", unless the line says the winner holds it.
# (当选 at a people's congress takes office there and then.)
_WON_A_RACE = _words(r"",
                     r"won (?:the |a )?(?:[\w'’-]+ ){0,4}(?:runoff|race|election|primary|seat)"
                     r"|president-elect|mayor-elect|governor-elect")
_IN_OFFICE = _words(r"就职|宣誓|上任|现任|在任",
                    r"sworn in|took office|takes office|assumed office|inaugurated|incumbent"
                    r"|re-?elected|serves? as|has served|in office|has been|is now|since"
                    r"|current|second term|third term")


def _elected_not_in_office(question: str, sentence: str) -> str | None:
    if (_asks_the_holder_not_a_race(question) and _WON_A_RACE.search(sentence)
            and not _IN_OFFICE.search(sentence)):
        return "tenure: names a race's winner, asked who holds the office now"
    return None


# A route, from where to where: "the first sailing from Dorsey Skerry to Quillhaven will", and
# in a question also written bare ("quillhaven to marr island ferry").
_ENDS = r"(?=\s+(?:will|is|are|at|on|from|leaves?|departs?|runs?|ferry|ferries|train|trains|bus"
_ENDS += r"|buses|flights?|sailings?|service|services|tomorrow|today|tonight|this|next)\b|[,.;?]|$)"
_ROUTE = CaseBlind(rf"(?<![A-Za-z])from\s+([^,.;]{{2,40}}?)\s+to\s+([^,.;]{{2,40}}?){_ENDS}")
_BARE_ROUTE = CaseBlind(rf"^(?:the\s+)?([^,.;]{{2,30}}?)\s+to\s+([^,.;]{{2,30}}?){_ENDS}")


def _route(text: str, *, bare: bool = False) -> tuple[str, str] | None:
    found = _ROUTE.search(text) or (_BARE_ROUTE.search(text) if bare else None)
    if found is None:
        return None
    ends = (found.group(1).casefold(), found.group(2).casefold())
    # "from Monday to Friday", "from 9 to 5", "how do I get to the airport": no route.
    words = {w for end in ends for w in end.split()}
    if any(c.isdigit() for end in ends for c in end) or words & _NOT_A_PLACE_WORD:
        return None
    return ends


_NOT_A_PLACE_WORD = frozenset({
    *MONTHS, *EN_WEEKDAYS, "how", "what", "when", "where", "which", "who", "do", "does", "did",
    "i", "we", "you", "get", "go", "is", "are", "can", "morning", "evening", "noon", "midnight",
    "today", "tomorrow", "yesterday", "week", "month", "year", "up", "down", "first", "last",
    "next", "ferry", "ferries", "train", "trains", "bus", "buses", "flight", "flights",
    "sailing", "sailings", "times", "timetable", "summer", "winter", "spring", "autumn", "fall"})


def _other_route(question: str, sentence: str) -> str | None:
    """Quillhaven to Dorsey Skerry is neither the way back nor the Marr Island route: a line
    that gives a route must give the asked one, in the asked direction."""
    asked = _route(question, bare=True)
    said = _route(sentence) if asked else None
    if said is None or asked is None:
        return None
    if all(a in s or s in a for a, s in zip(asked, said, strict=True)):
        return None
    return f"route: says {said[0]} to {said[1]}, asked {asked[0]} to {asked[1]}"


# What a number names the one of its kind: a metro or bus line (3号线, 15路, "Line 5", "route
# 14") and a model or a zone by its letters and number (Z9, P2, M25).
_NUMBERED = re.compile(
    r"(\d{1,3})\s*号线|(\d{1,4})\s*路(?:公交|车|线)"
    r"|(?<![A-Za-z])(?i:lines?|routes?|bus|tram)\s*"
    r"(\d{1,4}(?:\s*(?:,|and|&|or)\s*\d{1,4})*)(?![\d:.])"
    r"|(?<![A-Za-z])(?i:(platform|gate|terminal))s?\s*(\d{1,3})(?![\d:.])"
    r"|(?<![A-Za-z0-9])([A-Za-z]{1,2})-?(\d{1,3})(?![\d.%:])")


@cached_if_short(maxsize=256)
def _numbered(text: str) -> frozenset[tuple[str, str]]:
    """(kind, number) of every numbered line or model the text names; a model's kind is its
    letters."""
    found = set()
    for line, bus, other, where, at, letters, number in _NUMBERED.findall(text):
        if where:
            found.add((where.casefold(), at))
        elif line or bus or other:
            found |= {("line", n) for n in re.findall(r"\d+", line or bus or other)}
        elif not _YEAR_LIKE.fullmatch(letters + number):
            found.add((letters.casefold(), number))
    return frozenset(found)


def _named_lines(text: str, *, any_case: bool) -> frozenset[str]:
    """The lines a text names by a word ("the Kestrel Line"); a question may write them in
    lower case, a page writes them capitalised."""
    pattern = _NAMED_LINE_ANY_CASE if any_case else _NAMED_LINE
    return frozenset(m.group(1).casefold() for m in pattern.finditer(text)
                     if m.group(1).casefold() not in _FUNCTION_WORDS | _NOT_A_LINE_NAME)


# A line named by a word, not a number: the Kestrel Line is not the Heron Line.
_NAMED_LINE = re.compile(r"(?<![A-Za-z])([A-Z][a-z]+)\s+Line(?![A-Za-z])(?!\s*\d)")
_NAMED_LINE_ANY_CASE = re.compile(r"(?<![A-Za-z])([A-Za-z][a-z]+)\s+[Ll]ine(?![A-Za-z])(?!\s*\d)")
_NOT_A_LINE_NAME = frozenset({
    "main", "bottom", "front", "finish", "start", "starting", "time", "dead", "head", "product",
    "phone", "hot", "help", "party", "picket", "shore", "coast", "fault", "tree", "power",
    "supply", "credit", "sky", "waiting", "goal", "touch", "side", "base", "trend", "online",
    "hard", "fine", "same", "other", "new", "old", "each", "whole", "entire", "rail", "railway",
    "light", "subway", "metro", "tram", "bus", "train", "long", "poverty", "service", "branch",
    "district", "circle", "first", "last", "next"})
# Letters and a number that are no model's name: a quarter, a half, a fiscal year.
_YEAR_LIKE = re.compile(r"(?i:q[1-4]|h[12]|fy\d+)")


def _other_numbered(question: str, sentence: str) -> str | None:
    """5号线 is not 3号线, the Z9 not the Z8: a line or model the question numbers must be the
    one the sentence names, where it names one of that kind."""
    asked = _numbered(question)
    if not asked:
        return None
    said = _numbered(sentence)
    for kind in {k for k, _ in asked}:
        numbers = {n for k, n in said if k == kind}
        if numbers and not numbers & {n for k, n in asked if k == kind}:
            return f"{kind} {', '.join(sorted(numbers))}, asked another"
    return None


def _other_named_line(question: str, sentence: str) -> str | None:
    """The Kestrel Line is not the Heron Line: a line the question names by a word must be
    the one the sentence names, where it names one."""
    asked = _named_lines(question, any_case=True)
    if not asked:
        return None
    said = _named_lines(sentence, any_case=False)
    if said and not said & asked:
        return f"line {', '.join(sorted(said))}, asked another"
    return None


# A numbered release, where the text says it is one: "13.0正式版", "version 4.2", "v2.1".
_VERSION = CaseBlind(r"(?<![A-Za-z0-9.])(?:v|version\s*|版本\s*)(\d+(?:\.\d+)+)(?![\d.])"
                      r"|(?<![A-Za-z0-9.])(\d+(?:\.\d+)+)\s*(?:正式版|测试版|版本|版|beta|release)")


@cached_if_short(maxsize=256)
def _versions(text: str) -> frozenset[str]:
    return frozenset(a or b for a, b in _VERSION.findall(text))


def _other_version(question: str, sentence: str) -> str | None:
    """13.0 is not 12.6: a release the question numbers must be the sentence's."""
    asked = _versions(question)  # the same question for every line: kept
    if not asked:
        return None
    said = _versions(sentence)
    if said and not asked & said:
        return f"version: says {', '.join(sorted(said))}, asked {', '.join(sorted(asked))}"
    return None


# What a page's title says of these holds for its lines that say nothing of them: "受影响区域
# 包括中心街" under "栖梧镇停水通知" is about the water cut, a line under "… Women held by
# Harlby Vale" about the women's team, "净利润1.18亿元" under "…公布第三财季业绩" the third
# quarter's.
# A club's side, in a result or a fixture (not women in general: "the gender pay gap for women").
_A_SIDE = _words(r"队|女篮|女足|女排|比分|比赛|赛果",
                 r"team|side|club|fc|united|rovers|athletic|town|city|wanderers|rangers|result"
                 r"|score|match|game|fixture|play|played|win|won|beat|lost")
_SAID_BY_THE_TITLE = frozenset({"utility", "sport", "team", "quarter"})
# A page whose headline labels it a leak or a rumour ("Leak: ...", "传闻：...", "曝…") or says
# it is unconfirmed ("…? 官方未回应") says what is
# not yet so in every line. A headline's "reportedly" or "proposed" labels nothing.
_RUMOUR_PAGE = re.compile(r"^\s*(?:(?i:leak(?:ed|s)?|rumou?rs?|unconfirmed|gossip|transfer talk)"
                          r"\s*[:：|—–-]|(?:传闻|网传|爆料|小道消息)\s*[:：|丨]|曝(?!光))"
                          # "…开通时间曝光？网传12月18日通车": asked and passed on
                          r"|[？?]\s*(?:网传|传闻)")


@functools.lru_cache(maxsize=1024)
def _headed_as_hearsay(title: str) -> bool:
    return bool(_RUMOUR_PAGE.search(title) or _DENIED.search(title))


def clash_under(question: str, sentence: str, title: str) -> str | None:
    """Why the sentence, read under its page's title, states another utility, sport or
    team than the question's, or None."""
    for dimension, asked in asked_values(question):
        if (dimension.name == "claim" and "confirmed" in asked and _headed_as_hearsay(title)
                and not dimension.stated(sentence)):
            return "claim: its page is headed as a leak or a rumour, asked what is so"
        if dimension.name not in _SAID_BY_THE_TITLE or dimension.stated(sentence):
            continue
        said = dimension.stated(title)
        if said and not said & asked:
            return (f"{dimension.name}: its page says {', '.join(sorted(said))}, "
                    f"asked {', '.join(sorted(asked))}")
        if (not said and dimension.name == "team" and asked == {"women"}
                and _A_SIDE.search(question)):
            # A side no line or title calls the women's is the men's: "Harrowmere Rovers
            # beat Saltby Town 3-1" does not say how the women did.
            return "team: its page names no women's side, asked women"
    # A line that names no month or year is of its page's: 核心CPI同比上涨1.1% under "10月份CPI
    # 同比上涨0.6%" is October's, not last month's when that is November.
    return _title_period(question, sentence, title)


def _title_period(question: str, sentence: str, title: str) -> str | None:
    """The month or year a page's title gives its lines that give none: a month or a year
    the question asks must be the title's, when the title gives one. A day in the title
    ("Jobs report, November 7, 2026") dates the page, not what it reports."""
    asked_months = _months_asked(question)
    if asked_months and not months_of(sentence):
        said = {int(n) if n else MONTHS[name.casefold()] for m in _MONTH.finditer(title)
                for n, name in [m.groups()] if not _DAY_AFTER.match(title, m.end())}
        if said and not asked_months & said:
            return (f"month: its page's title says {', '.join(map(str, sorted(said)))}, asked "
                    f"{', '.join(map(str, sorted(asked_months)))}")
    asked_years = _years_asked(question)
    if asked_years and not years_of(sentence):
        said_years = years_of(VISIBLE_DATE.sub(" ", title))
        if said_years and not asked_years & said_years:
            return (f"year: its page's title says {', '.join(sorted(said_years))}, asked "
                    f"{', '.join(sorted(asked_years))}")
    return None


def _other_grade(question: str, sentence: str) -> str | None:
    """92号 is not 95号: a grade number the question gives must be the sentence's."""
    asked = set(_GRADE.findall(question))
    if not asked:  # the usual case: the sentence need not be read
        return None
    said = set(_GRADE.findall(sentence))
    if said and not asked & said:
        return f"grade: says {', '.join(sorted(said))}, asked {', '.join(sorted(asked))}"
    return None


_YEAR = CaseBlind(r"(?<![\d.])((?:19|20)\d{2})(?!\d|\.\d)|(?<![a-z])fy\s?'?(\d{2})(?!\d)"
                   r"|(?<!\d)(\d{2})财年")


def years_of(text: str) -> set[str]:
    """The years a text names, fiscal years included ("FY27" is 2027)."""
    found = set()
    for full, short, zh_short in _YEAR.findall(text):
        found.add(full or f"20{short or zh_short}")
    return found


_FIRST_HALF = _words(r"上半年|半年报|中期", r"first[- ]half|h1|half[- ]year|interim")


_YEARS_BACK = ((_words(r"去年|上一?个?财年", r"(?:last|previous|prior) (?:fiscal )?year"), 1),
               (_words(r"前年", r"the year before last"), 2))


def year_asked(question: str, today: date) -> int | None:
    """The year a question names by its distance from today ("去年", "last year"), or None."""
    return next((today.year - back for pattern, back in _YEARS_BACK
                 if pattern.search(question)), None)



def period_ended(question: str, today: date) -> bool:
    """Whether the question asks for the figures of a reporting period that is over ("2025
    revenue", "first-half 2026 revenue" in December): they do not change, so an older page
    that reports them still answers. A year not yet over counts only with a quarter, a first
    half or nine months of it; a forecast ("2027 target") is never over."""
    years = years_of(question)
    if len(years) != 1:
        return False
    year = int(next(iter(years)))
    if year != today.year:
        return year < today.year
    quarters = [int(name[1]) for name, pattern in _QUARTER if pattern.search(question)]
    if quarters:
        last_month = 3 * max(quarters)
    elif dict(_PERIOD)["nine_months"].search(question):
        last_month = 9
    elif _FIRST_HALF.search(question):
        last_month = 6
    else:
        return False
    return today.month > last_month


_THIS_YEAR = _words(r"今年|本年度?", r"")
_FULL_YEAR = _words(r"全年|年度|年报|整年|财年", r"")
# What was reported so far is reported, whether or not the year is over.
_SO_FAR = _words(r"截至|至今|以来|累计|迄今|目前为止"
                 r"|前(?:\d{1,2}|[一二三四五六七八九十]{1,2})个?月", r"")
_ZH_QUARTER = tuple((n, _words(rf"(?<!前)第?{zh}(?:季度|财季)|(?<!前){zh}季报", ""))
                    for n, zh in ((1, "[一1]"), (2, "[二2]"), (3, "[三3]"), (4, "[四4]")))


def period_not_over(question: str, today: date) -> bool:
    """Whether a Chinese question asks for the results of a year or a quarter that has not
    ended ("2026年全年净利润", "今年净利润", "2026年第四季度营收" in December 2026). Results
    are reported after their period ends: what a page gives for it is a forecast. Chinese
    companies report by the calendar year; a company elsewhere may keep a fiscal year whose
    labels do not follow it, so an English question is never read so. Not a month, a total so
    far, or a bare year ("2026年双十一销售额" is a day's total); a forecast asked is the
    caller's to allow."""
    if not CJK.search(question):
        return False
    years = years_of(question) or ({str(today.year)} if _THIS_YEAR.search(question) else set())
    if len(years) != 1 or _SO_FAR.search(question) or months_of(question) or _FORECAST.search(
            question):
        return False
    year = int(next(iter(years)))
    quarters = [n for n, pattern in _ZH_QUARTER if pattern.search(question)]
    if year < today.year or not (quarters or _FULL_YEAR.search(question)
                                 or _THIS_YEAR.search(question)):
        return False
    if year > today.year:
        return True
    if dict(_PERIOD)["nine_months"].search(question):
        return today.month <= 9
    if _FIRST_HALF.search(question):
        return today.month <= 6
    return today.month <= 3 * max(quarters) if quarters else True


_MONTH_NAMES = "|".join(sorted((m.capitalize() for m in MONTHS), key=len, reverse=True))
_MONTH = re.compile(rf"(?<!\d)(1[0-2]|0?[1-9])\s*月|(?<![A-Za-z])({_MONTH_NAMES})\b\.?")


def months_of(text: str) -> set[int]:
    """The months a text names: 7月, 12月3日, July, Dec. (capitalised: "may" is a verb)."""
    return {int(number) if number else MONTHS[name.casefold()]
            for number, name in _MONTH.findall(text)}


# A month typed in lower case in a question ("wexmoor average rent november"); never "may" nor
# "march", which are also words.
_TYPED_MONTH = re.compile(r"(?<![a-z])(january|february|april|june|july|august|september"
                          r"|october|november|december)(?![a-z])")
# A month with its day is a date, not the month a figure is of: "11月18日发布数据，10月份CPI…"
# gives October's figure.
_DAY_AFTER = re.compile(r"\s*(?:\d{1,2}\s*[日号]|\d{1,2}(?!\d))")


def _other_month(question: str, sentence: str) -> str | None:
    """A month the question names must be one the sentence names, when the sentence names
    any: "今年7月对阵临峰的比分" is not answered by the December meeting's line; a question
    that names a month alone asks of the month, not of a day in it."""
    asked = _months_asked(question)
    if not asked:
        return None
    said = months_of(sentence)
    if said and not _dated(question):
        said = {int(n) if n else MONTHS[name.casefold()] for m in _MONTH.finditer(sentence)
                for n, name in [m.groups()] if not _DAY_AFTER.match(sentence, m.end())} or said
    if said and not asked & said:
        return (f"month: says {', '.join(map(str, sorted(said)))}, asked "
                f"{', '.join(map(str, sorted(asked)))}")
    return None


def _dated(text: str) -> bool:
    return any(_DAY_AFTER.match(text, m.end()) for m in _MONTH.finditer(text))


@functools.lru_cache(maxsize=256)
def _months_asked(question: str) -> frozenset[int]:
    """Asked of every line of every page: worked out once per question."""
    return frozenset(months_of(question) | {MONTHS[m] for m in _TYPED_MONTH.findall(question)})


@functools.lru_cache(maxsize=256)
def _years_asked(question: str) -> frozenset[str]:
    return frozenset(years_of(question))


def _other_year(question: str, sentence: str) -> str | None:
    asked = _years_asked(question)
    if not asked:
        return None
    said = years_of(sentence)
    if said and not asked & said:
        return f"year: says {', '.join(sorted(said))}, asked {', '.join(sorted(asked))}"
    return None


def subject_clash(question: str, title: str) -> str | None:
    """A page whose title is about another sport or another team of the asked club."""
    for dimension in DIMENSIONS:
        if dimension.name not in ("sport", "team"):
            continue
        asked = dimension.stated(question)
        said = dimension.stated(title)
        if asked and said and not asked & said:
            return (f"off-topic: about {', '.join(sorted(said))}, "
                    f"asked {', '.join(sorted(asked))}")
    return None


# The same period a year before: what "去年同期", "the year-ago quarter" ask, and how pages
# write its figure ("上年同期为26.23亿元", "compared with $1.2 billion a year earlier").
SAME_PERIOD = CaseBlind(
    r"同期|(?<![a-z])(?:same (?:period|quarter|month)|year[- ]ago|a year (?:earlier|before|ago)"
    r"|prior[- ]year|previous year)(?![a-z])")
_SAME_PERIOD_CLAUSE = re.compile(r"(?<=[，,；;（(])")


def same_period_clause(sentence: str, last_year: int | None = None) -> str | None:
    """The clause of a sentence that gives the same period a year before ("上年同期为26.23亿元",
    "up 6% from GBP 698 million in the third quarter of 2025": `last_year`), or None."""
    year = re.compile(rf"(?<!\d){last_year}(?!\d)") if last_year else None
    for clause in _SAME_PERIOD_CLAUSE.split(sentence):
        if SAME_PERIOD.search(clause) or (year is not None and year.search(clause)):
            return clause.strip(" ,，;；（()）")
    return None


def of_an_earlier_meeting(text: str) -> bool:
    """Whether a line speaks of an earlier meeting or season ("两队上赛季…", "when the sides
    last met"): never the day a question names."""
    return bool(_PREVIOUS.search(text))


def asks_a_schedule(question: str) -> bool:
    """Whether the question asks when something comes ("when do the Comets play next",
    "下一场什么时候", "strike dates", 停电安排, "when does it come into force"): a day
    already past does not answer it."""
    return bool(_ASKS_SCHEDULE.search(question) or _ASKS_UPCOMING.search(question)
                or (_RECURRING.search(question) and _ASKS_WHEN.search(question)
                    and not years_of(question)))


# What comes back every year: asked when without a year, it is the next one (last winter's
# break does not answer when the winter break starts).
_RECURRING = _words(r"寒假|暑假|开学|放假|春节|假期|庙会|年会",
                    r"holidays?|half[- ]term|term (?:starts|begins)|festival|christmas market"
                    r"|fair|parade|marathon|open day")
_ASKS_WHEN = _words(r"什么时候|何时|哪天|几号|几月几", r"when")
# "When is it?" may ask the day of something past (when a law took effect); these ask what
# is still to come.
_ASKS_UPCOMING = _words(r"安排|时间表", r"dates|upcoming|coming up")


def asks_who_holds(question: str) -> bool:
    """Whether the question asks who holds a role or an office now ("who is the CEO of X",
    "南通支云主教练现在是谁"): its answer changes hands."""
    return (asked_slot(question) is Slot.person and bool(_stated_roles(question))
            and "former" not in _tenure_default(question))


_ZH_FILLER = re.compile(r"现在|目前|如今|当前|现任|新任|最新|的|是谁|谁是|谁|叫什么名字|叫什么"
                        r"|是|呢|吗|啊"
                        r"|[？?。!！，,\s]")


def names_only_a_role(question: str) -> bool:
    """Whether the question asks who holds a role and says nothing else ("现在的主教练是谁",
    "who is the mayor now"): whose coach or mayor, nobody can know."""
    if not asks_who_holds(question):
        return False
    if CJK.search(question):
        return len(_ZH_FILLER.sub("", _ROLE.sub("", question))) < 2
    return not topic_words(question)


# Words of an English question that ask, point or fill, but say nothing of its topic.
_FUNCTION_WORDS = frozenset({
    "what", "whats", "who", "whom", "whose", "when", "where", "which", "why", "how", "is",
    "are", "was", "were", "be", "been", "being", "the", "a", "an", "any", "about", "of", "for",
    "in", "on", "at", "to", "from", "and", "or", "me", "my", "i", "you", "your", "it", "its",
    "this", "that", "these", "those", "there", "please", "tell", "show", "give", "find", "do",
    "does", "did", "can", "could", "will", "would", "should", "shall", "may", "might", "must",
    "now", "today", "tonight", "tomorrow", "yesterday", "latest", "new", "current",
    "currently", "get", "getting", "got", "has", "have", "had", "with", "by", "than", "then",
    "just", "also", "still", "yet", "exactly", "actually", "really", "right", "they", "them",
    "their", "he", "him", "his", "she", "her", "we", "us", "our", "so", "much", "many", "time",
    "date", "day", "year", "going", "go", "goes", "make", "made", "take", "took", "after",
    "before", "during", "last", "next", "guy", "people", "thing", "things", "kind",
    "over", "under", "into", "onto", "up", "down", "out", "off", "all", "some", "against",
    "versus", "play", "plays", "playing", "start", "starts", "begin", "begins", "happen",
    "happens", "happened", "place", "held", "night", "nite", "morning", "evening", "afternoon",
    "week", "weekend", "month", "season", "ago", "recently", "lately", "news", "headline",
    "headlines", "update", "updates", "info", "information", "story", "stories", "detail",
    "details", "happening", "report", "reports", "say", "says", "said", "per"})
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")


def topic_words(question: str, names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The stems of an English question's lower-case words that say what it is about, beyond
    its names, its roles and the kind of value it asks ("who scored for wales" -> "score";
    "how much farm buying did he ask for" -> "farm", "buyin", "ask"). Empty for a question
    in another script."""
    if CJK.search(question):
        return ()
    rest = question
    # Roles, winning, the sport and the team are checked as qualifiers, in all their
    # synonyms (a basketball result says "EuroLeague", not "basketball").
    patterns: tuple[re.Pattern[str] | CaseBlind, ...] = (
        *asking_words(), *(p for _, p in _ROLES), _WINNER, _POLE, *(p for _, p in _SPORTS),
        *(p for _, p in _GENDER))
    for pattern in patterns:
        rest = pattern.sub(" ", rest)
    named = {w.casefold() for name in names for w in _ENGLISH_WORD.findall(name)}
    stems = []
    for word in _ENGLISH_WORD.findall(rest):
        if word[0].isupper():
            continue  # a name: the question contract checks it
        word = word.casefold().removesuffix("'s").strip("'-")
        if (len(word) >= 3 and word not in _FUNCTION_WORDS and word not in named
                and word not in _WHERE_IT_IS_SAID):
            stems.append(_stem(word)[:5])
    return tuple(dict.fromkeys(stems))


# Where a value is said, not what it is of: "route 14 last bus new timetable" asks the last
# bus, whether or not the line says "timetable".
_WHERE_IT_IS_SAID = frozenset({"timetable", "timetables", "schedule", "schedules", "update",
                               "updates", "details", "info", "information", "news", "latest",
                               "notice", "announcement"})
_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")
_DOUBLED = re.compile(r"([bdfgklmnprtz])\1$")


def _stem(word: str) -> str:
    """A word without its ending ("cutting" -> "cut", "closed" -> "clos", "jobs" -> "job"),
    never shorter than three letters; a noun made of a verb is the verb's ("closure" and
    "close" -> "clos", "election" -> "elect"), never shorter than four."""
    bare = _DOUBLED.sub(r"\1", _SUFFIX.sub("", word))
    made = _MADE_OF_A_VERB.sub("", bare)
    if len(made) >= 4:
        return made
    return bare if len(bare) >= 3 else word


_MADE_OF_A_VERB = re.compile(r"(?:ure|ion|ment|e)$")


def priced_things(question: str, names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What a question asks the price or the amount of, beyond its names, its time and the
    kind of value it asks: "petrol" of "petrol price in Pellbrook today", 猪肉 of
    "雁汀今天猪肉多少钱一斤". English words as `topic_words` stems, Chinese as runs of two
    characters or more. Empty when the question says only what kind of value it asks
    ("AAPL share price", "金澜阁今天金价")."""
    if not CJK.search(question):
        # What follows "after", "since" or "despite" is the story, not the thing priced:
        # "what's X valued at now after the IPO flop".
        head = _A_CLAUSE_AFTER.split(question, maxsplit=1)[0]
        return tuple(s for s in topic_words(head, names) if s not in _VALUE_KIND_STEMS)
    rest = question
    for name in sorted(names, key=len, reverse=True):
        rest = rest.replace(name, " ")
    for when in reversed(find_all(rest)):
        rest = f"{rest[:when.start]} {rest[when.end:]}"
    for pattern in (_ZH_NOT_A_THING, *(asked for asked, _ in METRICS.values()),
                    *PERIODS.values()):
        rest = pattern.sub(" ", rest)
    return tuple(_ZH_RUN.findall(rest))


def mentions_thing(text: str, things: tuple[str, ...]) -> bool:
    """Whether a page names one of the `priced_things`: an English stem as `mentions_topic`
    reads it, a Chinese run by two of its characters side by side (牛肉 is not 猪肉). A page
    in the other script cannot tell, and passes."""
    if not things:
        return True
    if CJK.search(things[0]):
        return not CJK.search(text) or any(
            run[i:i + 2] in text for run in things for i in range(len(run) - 1))
    return mentions_topic(text, things) or not _ENGLISH_WORD.search(text)


_A_CLAUSE_AFTER = CaseBlind(r"(?<![A-Za-z])(?:after|since|following|because|despite|amid"
                             r"|now that|given that)(?![A-Za-z])")
# Words that say what kind of value is asked, not what it is of ("share price", "exchange
# rate", "maximum fine", "first-half revenue", "how much did X pay").
_VALUE_KIND_STEMS = frozenset(_stem(w)[:5] for w in (
    "price", "cost", "fee", "fare", "rate", "fine", "penalty", "share", "exchange", "quarter",
    "quarterly", "first", "second", "third", "fourth", "half", "maximum", "minimum",
    "average", "base", "size", "total", "pay", "interest", "dollar", "euro", "pound", "yuan",
    "guiding", "guidance", "revenue", "profit", "sales", "income", "level", "value", "amount",
    "worth", "charge", "cheap", "expensive", "annual", "monthly", "yearly", "weekly", "daily",
    "figure", "stock", "close", "trade", "open", "settle", "budget", "salary", "wage", "money",
    "spend", "cash", "funding", "raise", "bill"))
# The Chinese of asking an amount, a period or a measure, and the words around them.
_ZH_NOT_A_THING = re.compile(
    r"多少钱|多少元|多少|几块钱?|几元|价格|价钱|售价|价位|报价|收费|费用|多贵|贵不贵|怎么样|如何|大概"
    r"|大约|左右|最新|现在|目前|当前|请问|需要|收盘|开盘|收报|上涨|下跌|涨了|跌了|[一每](?:斤|公斤|千克|升|吨|克"
    r"|张|人|位|次|晚|个月|月|年)|上个?月|本月|去年|今年|前年|明年|上半年|下半年|全年|前三季度"
    r"|第?[一二三四1-4]季度|上个?季度|季度|上个?(?:星期|周)|预期|预计|预测|目标|那个|这个"
    r"|合计|总共|共计|累计|一共|总计|总额|平均|均价|大约|大概|[是的了吗呢啊呀要卖买价钱元"
    r"那这它他她]")
_ZH_RUN = re.compile(f"[{CJK_CHARS}]{{2,}}")


# What a question asks of a name ("Vessaria's trade balance"): the words after the
# possessive, up to the first function word.
_POSSESSED = re.compile(r"(?<![A-Za-z])[A-Z][\w.&-]*['’]s\s+([a-z][a-z\s-]{2,60})")
# Words that ask for whatever a page says of the name, not one thing it says.
_ANYTHING = frozenset({
    "latest", "news", "update", "updates", "status", "situation", "plan", "plans", "story",
    "info", "information", "recent", "current", "new", "top", "big", "biggest", "main",
    "first", "last", "next", "own", "official", "full", "whole", "total", "overall",
    "annual", "quarterly", "yearly", "monthly", "weekly", "daily", "today", "tomorrow",
    "yesterday", "tonight", "now", "right", "real", "exact", "approximate", "average",
    "number", "figure", "figures", "amount", "value", "rate", "level", "price", "result",
    "results", "performance", "outlook", "forecast", "report", "data", "stats",
    "statistics", "stock", "stocks", "share", "shares"})


def possessed_words(question: str) -> tuple[str, ...]:
    """The stems of what an English question asks of a name by its possessive ("what was
    Vessaria's trade balance in October" -> "trade", "balan"); empty when it asks for
    whatever the page says ("Apple's latest news") or names a metric the metric check
    reads."""
    if _POSSESSED.search(question) is None or asked_metrics(question):
        return ()
    rest = question
    for pattern in (*(p for _, p in _ROLES), _WINNER, _POLE, *(p for _, p in _SPORTS),
                    *(p for _, p in _GENDER)):
        rest = pattern.sub(" ", rest)  # checked as qualifiers, in all their synonyms
    found = _POSSESSED.search(rest)
    if found is None:
        return ()
    stems = []
    for word in found.group(1).split():
        word = word.strip("-")
        if word in _FUNCTION_WORDS or word in _VERBS_AFTER:
            break  # "Calderwick's drone ban come into force": the ban, not "come"
        if len(word) >= 3 and word not in _ANYTHING:
            stems.append(word[:5])
    return tuple(dict.fromkeys(stems))


# Verbs a question puts after what it asks of a name.
_VERBS_AFTER = frozenset({"come", "go", "start", "begin", "end", "take", "happen", "open",
                          "close", "reopen", "become", "get", "mean", "affect", "cost", "work",
                          "finish", "stop", "change", "rise", "fall"})


def mentions_topic(sentence: str, stems: tuple[str, ...], need: int = 1) -> bool:
    """Whether words of the sentence start with `need` of the stems (at most all of them); a
    word of four letters or more that the stem starts with counts too ("test" for "testi")."""
    words = {w.casefold() for w in _ENGLISH_WORD.findall(sentence)}
    words |= {_stem(w) for w in words}
    found = sum(1 for stem in stems if any(
        w.startswith(stem) or (len(w) >= 4 and stem.startswith(w)) for w in words))
    return found >= min(need, len(stems))
