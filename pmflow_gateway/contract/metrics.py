"""Metrics and reporting periods: is this sentence the figure that was asked?

A company's revenue is not its profit, a share price is not a market value, a quarter's
figure is not the year's, and a line about an event in a city says nothing of how many live
there. A question that names a metric is answered only by a sentence that names the same
metric (in either language), and one that names a period only by a sentence that is not
about another period. The vocabulary of both lives here, once, in Chinese and English.
"""

from __future__ import annotations

import re

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.memo import cached_if_short

_EN = r"(?<![a-z])(?:{})(?![a-z])"

# Each metric: how a question asks it, and how a sentence names it (a superset: a sentence
# says "net income" where the question said "profit").
METRICS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "revenue": (
        re.compile(r"营收|营业收入|收入|营业额|销售额|" + _EN.format(
            r"revenues?|sales|turnover|top line"), re.IGNORECASE),
        # Units sold (销量, "sold 1.2 million copies") are a count, not revenue.
        re.compile(r"营收|营业收入|收入|营业额|销售额|" + _EN.format(
            r"revenues?|sales|turnover|top line"), re.IGNORECASE)),
    "profit": (
        # "Earnings" alone names the whole report (revenue included), not the profit.
        re.compile(r"利润|净利|盈利|赚了?多少|亏损|" + _EN.format(
            r"profits?|net income|net earnings|net loss|eps|bottom line"), re.IGNORECASE),
        re.compile(r"利润|净利|盈利|亏损|纯利|" + _EN.format(
            r"profits?|net income|earnings|net loss|eps|bottom line|earned|lost"),
            re.IGNORECASE)),
    "market_cap": (
        re.compile(r"市值|" + _EN.format(r"market cap(?:italis|italiz)?(?:ation)?|market value"
                                         r"|valuation"), re.IGNORECASE),
        re.compile(r"市值|估值|" + _EN.format(r"market cap(?:italis|italiz)?(?:ation)?"
                                              r"|market value|valuation|valued at|worth"),
                   re.IGNORECASE)),
    "rating": (
        re.compile(r"评分|几分|多少分|打分|" + _EN.format(r"ratings?|rated|review score"),
                   re.IGNORECASE),
        re.compile(r"评分|打分|\d\s*分(?![钟之])|" + _EN.format(
            r"ratings?|rated|stars?|out of (?:5|10|100)|score of"), re.IGNORECASE)),
    "box_office": (
        re.compile(r"票房|" + _EN.format(r"box[- ]office|grossed|grosses"), re.IGNORECASE),
        re.compile(r"票房|" + _EN.format(r"box[- ]office|grossed|grosses|gross"),
                   re.IGNORECASE)),
    "population": (
        # "How many people attended" asks a count of something else, not a population.
        re.compile(r"人口|多少人(?:住|生活|居住)|" + _EN.format(
            r"population|inhabitants|how many (?:people|residents|inhabitants) (?:live|reside)"
            r"|how (?:big|large) is the population"), re.IGNORECASE),
        re.compile(r"人口|居民|常住|万人|" + _EN.format(
            r"population|people|residents|inhabitants|populous"), re.IGNORECASE)),
    # Four figures an economy is asked about by name; one is no answer to another ("the
    # unemployment rate" is not answered by "lowered its policy rate to 3.25%").
    "gdp": (
        re.compile(r"GDP|生产总值|经济增长|经济增速|" + _EN.format(
            r"gdp|gross domestic product|economic growth|economy grow|economy grew"),
            re.IGNORECASE),
        re.compile(r"GDP|生产总值|经济增长|经济增速|经济总量|" + _EN.format(
            r"gdp|gross domestic product|economic growth|economy (?:grew|expanded|contracted"
            r"|shrank|grows|expands)|output (?:grew|rose|fell)"), re.IGNORECASE)),
    # What a person is paid: a CEO's pay is not the company's revenue.
    "pay": (
        # Not "how much do I pay for parking": what someone is paid.
        re.compile(r"薪酬|年薪|薪水|工资|" + _EN.format(
            r"salary|salaries|remuneration|wages?|pay (?:package|rise|deal|award)"
            r"|(?:ceo|chief executive|executive|boss|director)(?:'s|’s)? (?:pay|compensation)"
            r"|being paid|gets? paid"), re.IGNORECASE),
        # A rate by the hour is pay: "the rates in effect are $15.25 per hour".
        re.compile(r"薪酬|年薪|薪水|工资|报酬|薪资|每小时|元/小时|" + _EN.format(
            r"paid|pay|payout|salary|salaries|compensation|remuneration|package|earns?|earned"
            r"|wages?|bonus(?:es)?|per hour|an hour|hourly"), re.IGNORECASE)),
    "unemployment": (
        re.compile(r"失业|" + _EN.format(r"unemploy\w*|jobless\w*"), re.IGNORECASE),
        re.compile(r"失业|" + _EN.format(r"unemploy\w*|jobless\w*|out of work"),
                   re.IGNORECASE)),
    "inflation": (
        re.compile(r"通胀|通货膨胀|消费者物价|消费价格|物价指数|" + _EN.format(
            r"inflation|cpi|consumer prices?|consumer price index"), re.IGNORECASE),
        # 居民消费价格 is the official name of China's consumer price index.
        re.compile(r"通胀|通货膨胀|消费者物价|消费价格|物价|" + _EN.format(
            r"inflation|cpi|consumer prices?|consumer price index|prices rose"), re.IGNORECASE)),
    "policy_rate": (
        re.compile(r"基准利率|政策利率|加息|降息|" + _EN.format(
            r"interest rates?|policy rates?|benchmark rates?|base rates?|key rates?|cash rate"
            r"|(?:federal|fed) funds rate|rate (?:cut|hike|decision)s?"), re.IGNORECASE),
        re.compile(r"利率|加息|降息|" + _EN.format(
            r"(?:interest|policy|benchmark|base|key|cash|repo|lending|deposit|funds|bank)"
            r" rates?|rates? (?:unchanged|steady|on hold)|(?:held|cut|raised|lowered|hiked)"
            r"(?: its)? rates?|rate (?:cut|hike|decision)s?"), re.IGNORECASE)),
}

# Each period: how a question or a sentence names it.
PERIODS: dict[str, re.Pattern[str]] = {
    "quarter": re.compile(
        r"季度|季报|[一二三四1-4]季|" + _EN.format(
            r"quarters?|quarterly|q[1-4]|(?:first|second|third|fourth)[- ]quarter"),
        re.IGNORECASE),
    "half": re.compile(r"半年|中期|" + _EN.format(
        r"half[- ]year|(?:first|second)[- ]half|h[12]|interim|six months"), re.IGNORECASE),
    "year": re.compile(
        r"全年|年度|年报|整年|财年|去年|" + _EN.format(
            r"full[- ]year|an+ual(?:ly)?|fiscal[- ]year|fy\s?\d{2,4}|whole year|last year"
            r"|for the year|yearly|whole of|entire year|as a whole"), re.IGNORECASE),
}


_ASKS_A_CHANGE = CaseBlind(
    r"增长|增速|增幅|涨幅|跌幅|下降|下滑|占比|比例|百分|利润率|毛利率|失业|通胀|通货膨胀|物价|利率|cpi"
    r"|(?<![a-z])(?:growth|grow|grew|rise|rose|fall|fell|change|margin|share|percent"
    r"|percentage|rates?|up|down|increase|decrease|inflation|unemploy\w*|jobless)(?![a-z])|%")


def asks_a_change(question: str) -> bool:
    """The question asks how a figure moved or what share it is (growth, margin, a
    percentage; inflation and unemployment are percentages), not the amount itself."""
    return bool(_ASKS_A_CHANGE.search(question))


# Both are read once per candidate sentence of an answer, for the same question.
@cached_if_short(maxsize=256)
def asked_metrics(question: str) -> frozenset[str]:
    """The metrics a question asks for (empty when it names none)."""
    return frozenset(name for name, (asked, _) in METRICS.items() if asked.search(question))


@cached_if_short(maxsize=256)
def asked_periods(question: str) -> frozenset[str]:
    """The reporting periods a question asks about (empty when it names none)."""
    return frozenset(name for name, pattern in PERIODS.items() if pattern.search(question))


def metric_words(question: str) -> list[str]:
    """The words with which the question asks its metrics, as it writes them ("revenue")."""
    return [m.group(0) for asked, _ in METRICS.values() if (m := asked.search(question))]


def names_metric(sentence: str, metric: str) -> bool:
    return bool(METRICS[metric][1].search(sentence))


def names_an_asked_metric(question: str, text: str) -> bool:
    """Whether the text names one of the metrics the question asks for."""
    return any(names_metric(text, m) for m in asked_metrics(question))


def periods_of(sentence: str) -> set[str]:
    return {name for name, pattern in PERIODS.items() if pattern.search(sentence)}


def other_figure(question: str, sentence: str) -> str | None:
    """Why a sentence is not the figure the question asks for: it names none of the asked
    metrics, or it speaks only of another reporting period. None when it may answer."""
    metrics = asked_metrics(question)
    if metrics and not any(names_metric(sentence, m) for m in metrics):
        return f"names none of the asked metrics ({', '.join(sorted(metrics))})"
    wanted = asked_periods(question)
    if wanted and (spoken := periods_of(sentence)) and not spoken & wanted:
        return f"about another period ({', '.join(sorted(spoken))})"
    return None
