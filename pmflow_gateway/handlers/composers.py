"""The extractive composer (the default, no model): writes the answer only from verified
evidence, picking the sentences that answer what was asked (the asked day's line, every day of
a period, the number for a price), each with its `[n]` marker. The model composer, which falls
back to this one, is `handlers/model_composer.py`. Evidence reaches either only through the
untrusted-text sanitiser of `contract.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta, timezone

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.dates import MONTHS, names_a_day
from pmflow_gateway.contract.gazetteer import ENGLISH_STOP_WORDS
from pmflow_gateway.contract.judged import of_the_last
from pmflow_gateway.contract.metrics import asked_metrics, asks_a_change, other_figure
from pmflow_gateway.contract.places import find_places
from pmflow_gateway.contract.qualifiers import (
    SAME_PERIOD,
    asked_clause,
    asked_words,
    asks_a_schedule,
    asks_who_holds,
    clash,
    clash_under,
    item_asked,
    mentions_thing,
    mentions_topic,
    months_of,
    of_an_earlier_meeting,
    period_not_over,
    possessed_words,
    priced_things,
    same_period_clause,
    says_what_is_not_yet_so,
    states_what_was_asked,
    topic_words,
    words_of,
    year_asked,
    years_of,
)
from pmflow_gateway.contract.relevance import (
    about_another,
    asked_day,
    asked_names,
    asks_a_level,
    fits_the_question,
    name_forms,
    names,
    names_something_else,
    only_a_variant,
    place_of,
    quotes_a_level,
)
from pmflow_gateway.contract.salience import is_weather_line, reads_temperature
from pmflow_gateway.contract.scoring import ASKS_NOW, published_at
from pmflow_gateway.contract.slots import (
    Slot,
    asked_slot,
    counted_noun,
    fills,
    names_a_person,
    names_a_person_by_role,
    per_unit_asked,
    proper_names,
    slot_reason,
    states_a_price,
    unit_asked,
    without_shares,
)
from pmflow_gateway.contract.text import (
    CJK,
    asked_text,
    clean_sentences,
    is_cjk,
)
from pmflow_gateway.contract.variants import editions, family_mentions, only_variants
from pmflow_gateway.contract.when import (
    day_offsets,
    days_printed,
    days_spoken_of,
    holds_until_a_day,
    names_another_day,
    offsets_spoken_of,
    speaks_of,
    speaks_of_night,
)
from pmflow_gateway.ports import Draft
from pmflow_gateway.schemas import AnswerContract, ExternalEvidence, ExternalQueryPlan, QueryKind

MAX_SENTENCES_PER_ITEM = 2
MIN_CONTENT_CHARS = 6


# ---------------------------------------------------------------- extractive


# A period named only as the page's own: "for the quarter", 该季度, 报告期内.
_THE_PERIOD = CaseBlind(r"(?<![A-Za-z])(?:the|this|that) (?:quarter|period|half)(?![A-Za-z])"
                         r"|该季度|本季度|当季|报告期")


_LAST_QUARTER = CaseBlind(r"上个?季度|上一季度|(?<![a-z])(?:last|previous|most recent) quarter")
_QUARTER_NAMES = ("", "q1", "q2", "q3", "q4")


def _which_quarter(wanted: str, today: date | None) -> str:
    """Which quarter "last quarter" is (" q3" on a day of the fourth quarter), so that the
    third quarter's line comes before the second's; "" when not asked."""
    if today is None or not _LAST_QUARTER.search(wanted):
        return ""
    last = (today.month - 1) // 3 or 4
    return f" {_QUARTER_NAMES[last]}"


def grounded_terms(plan: ExternalQueryPlan) -> list[tuple[str, float]]:
    """The plan's grounded fields as (term, weight): named fields weigh more than query words."""
    terms: list[tuple[str, float]] = []
    for entity in [*plan.subject_entities, plan.location_hint or ""]:
        terms.append((entity, 3.0))
    terms.append((plan.time_range_hint or "", 2.0))
    for query in [*plan.search_queries, plan.topic]:
        for word in query.split():
            terms.append((word, 1.0))
            terms += [(form, 1.0) for form in name_forms(word)]  # CEO also reads 首席执行官
            if is_cjk(word) and len(word) > 3:  # Chinese has no spaces: use its bigrams
                terms += [(word[i:i + 2], 0.3) for i in range(len(word) - 1)]
    seen: dict[str, float] = {}
    for term, weight in terms:
        key = term.strip().lower()
        if len(key) >= 2 or is_cjk(key):
            seen[key] = max(weight, seen.get(key, 0.0))
    return list(seen.items())


def term_hits(sentence: str, terms: list[tuple[str, float]]) -> float:
    lower = sentence.lower()
    return sum(weight for term, weight in terms if term in lower)


def sentence_score(sentence: str, terms: list[tuple[str, float]], chinese: bool,
                   hits: float | None = None) -> float:
    same_language = is_cjk(sentence) == chinese
    return (term_hits(sentence, terms) if hits is None else hits) + (0.5 if same_language else 0.0)


@dataclass(frozen=True, order=True)
class Candidate:
    """One quotable sentence: ranked by score, then by item, then by place in the page."""

    score: float
    n: int
    position: int
    text: str = field(compare=False)
    hits: float = field(compare=False)


def candidates(items: list[ExternalEvidence], terms: list[tuple[str, float]], chinese: bool,
               asked: str, plan: ExternalQueryPlan | None = None,
               slot: Slot = Slot.any) -> list[Candidate]:
    """Quotable sentences; with a plan, none that is only about another place or company
    (unless a place or a name is what was asked), and none that only repeats the page's
    title (a heading states no fact)."""
    others_answer = slot in (Slot.place, Slot.person)
    return [Candidate(score=sentence_score(s, terms, chinese, hits := term_hits(s, terms)),
                      n=n, position=i, text=s, hits=hits)
            for n, item in enumerate(items, start=1)
            for i, s in enumerate(clean_sentences(item.snippet, asked=asked))
            if plan is None or ((others_answer or not (names_something_else(plan, s)
                                                        or about_another(plan, s)))
                                and _says_more(plan, s) and fits_the_question(plan, s)
                                and not _is_title(s, item.title)
                                and not _restates_title(s, item.title)
                                and not _INTRODUCES_A_LIST.search(s)
                                and not _only_a_dateline(s))]


# A line that announces what follows states nothing itself: "…开放时间安排如下。", "The new
# fares are as follows:".
# What a line that only dates its page is made of: "Central, Friday, November 27." (cut from
# "as of 9:30 a.m. Central, Friday, November 27") states nothing.
_DATELINE = re.compile(
    r"(?i:(?<![a-z])(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february"
    r"|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|[ap]\.?m\.?"
    r"|central|eastern|pacific|mountain|local time|gmt|utc|[ecpm][sd]?t|as of|updated)(?![a-z]))"
    r"|\d+|[\s,.:;()（）。，：]|[年月日号时分]|星期.|周[一二三四五六日天]|上午|下午|截至|更新")
_DATELINE_MARK = CaseBlind(r"(?<![a-z])(?:central|eastern|pacific|mountain|local time|gmt|utc"
                           r"|[ecpm][sd]?t|as of|updated)(?![a-z])|截至|更新")


def _only_a_dateline(sentence: str) -> bool:
    """Whether a line only dates its page ("Central, Friday, November 27.", "Updated 9:30
    a.m. ET.", "SUTTERVALE, Pa. — Saturday, Nov. 28, 2026."): a time zone, "as of",
    "updated" or a news dateline's place, and nothing but the date and time."""
    place = _PLACE_DATELINE.match(sentence)
    rest = sentence[place.end():] if place else sentence
    return (bool(place or _DATELINE_MARK.search(rest))
            and not _DATELINE.sub("", _FORECAST_ISSUED.sub("", rest)).strip())


# A news dateline's place: the town in capitals, its state or country, a dash ("QUILLHAVEN,
# Maine —", "BRIMSLEY, Ga. -").
_PLACE_DATELINE = re.compile(r"[A-Z][A-Z.'’ -]{2,40}(?:,\s*[A-Z][A-Za-z.]*(?:\s[A-Z][A-Za-z.]*)?"
                             r"\s*(?:\([A-Za-z]+\)\s*)?|\s*\([A-Za-z]+\)\s*)[—–-]+\s*")
# What says a page was written, not what it says: "Forecast updated 3:45 p.m.", "Posted".
_FORECAST_ISSUED = re.compile(r"(?i:(?<![a-z])(?:forecast|report|story|article)?\s*(?:updated"
                              r"|issued|posted|published|last updated)(?![a-z]))")


_INTRODUCES_A_LIST = re.compile(r"如下[。：:]?\s*$|以下[：:]\s*$"
                                r"|(?i:as follows|the following)[.:]?\s*$")


def _under_a_variant(c: Candidate, items: list[ExternalEvidence], other_editions: set[int],
                     names: tuple[str, ...]) -> bool:
    """A sentence that names nothing of the asked name's family speaks of its page's
    subject: under a title about the X5 Max alone, "售价4599元" is the Max's price, not the
    Pro's nor the standard one's (`other_editions`: the items whose title names an edition
    the question does not)."""
    title = items[c.n - 1].title
    return c.n in other_editions and any(
        only_variants(n, title) and not family_mentions(n, c.text) for n in names)


def _is_title(sentence: str, title: str) -> bool:
    return "".join(sentence.split()).casefold() == "".join(title.split()).casefold()


# The words a heading line adds to its page's title and says nothing with: when, and that it
# was posted.
_DATE_WORDS = frozenset([*MONTHS, "monday", "tuesday", "wednesday", "thursday", "friday",
                         "saturday", "sunday", "posted", "updated", "published", "am", "pm",
                         "a", "p", "m", "et", "est", "edt", "ct", "cst", "pt", "pst", "on", "at"])
_A_WORD = re.compile(r"[a-z]+|[$€£¥]?\d+(?:[.,:]\d+)*%?")
_HEADING_MARK = re.compile(r"[—–]|\s-\s|(?i:\b(?:posted|updated|published)\b)")


def _restates_title(sentence: str, title: str) -> bool:
    """A line that is its page's title with a place and a date ("City of Oakhaven, Minn. —
    Minimum Wage Ordinance Update (posted Nov. 24, 2026).") is a heading, stating nothing:
    it has most of the title's words and a dateline's dash or a "posted". A figure the title
    does not give, or a second new word, makes it a line ("The bridge is closed.")."""
    if CJK.search(sentence) or not _HEADING_MARK.search(sentence):
        return False
    titled = set(_A_WORD.findall(title.casefold()))
    said = _A_WORD.findall(sentence.casefold())
    words = {w for w in titled if not w[0].isdigit() and w not in _DATE_WORDS}
    if len(words) < 2 or len(words & set(said)) < 0.6 * len(words):
        return False
    # A day's number after its month, or a year, dates the line; any other number is a figure.
    rest = [w for i, w in enumerate(said) if w not in _DATE_WORDS and not (
        w.isdigit() and ((len(w) == 4 and w[:2] in ("19", "20"))
                         or (len(w) <= 2 and i > 0 and said[i - 1] in MONTHS)))]
    return (not any(w[0].isdigit() or w[0] in "$€£¥" for w in rest)
            and sum(w not in titled for w in rest) <= 1)


def _says_more(plan: ExternalQueryPlan, sentence: str) -> bool:
    """A sentence that is only the asked name ("Apple Inc.", 广州天气) says nothing. A Chinese
    character carries about a word, so it counts double: 周三有小雨 says something."""
    rest = sentence
    for form in _longest_first(plan):
        rest = rest.replace(form, "")
    cjk: list[str] = CJK.findall(rest)
    return sum(map(str.isalnum, rest)) + sum(map(str.isalnum, cjk)) >= MIN_CONTENT_CHARS


@of_the_last
def _longest_first(plan: ExternalQueryPlan) -> tuple[str, ...]:
    """Every form of every asked name, the longest first."""
    return tuple(sorted({f for n in asked_names(plan) for f in name_forms(n, plan.query_kind)},
                        key=len, reverse=True))


def _best(found: list[Candidate]) -> Candidate:
    return max(found, key=lambda c: (c.score, -c.n, -c.position))


def with_marker(sentence: str, n: int) -> str:
    return f"{sentence}[{n}]" if is_cjk(sentence) else f"{sentence} [{n}]"


def compose_extractive(question: str, plan: ExternalQueryPlan,
                       items: list[ExternalEvidence]) -> Draft:
    """Evidence sentences that carry the plan's fields, each ending with its `[n]`. A
    sentence that speaks of "the quarter" is read with its page's title, which says which:
    "Net profit for the quarter was $61 million" under "... reports third-quarter 2026
    results" is the third quarter's.

    A day asked (明天, tomorrow) keeps only the lines about that day; a period (未来5天) keeps
    every dated line of a page together. `direct_fact`: the one best sentence, one with a
    number when a number is asked. `compare_with_sources`: one line per subject. Otherwise
    the sentences that carry a field, one or two per item, in page order.
    """
    terms = grounded_terms(plan)
    chinese = is_cjk(question)
    asked = asked_text(question, plan)
    if plan.answer_contract is AnswerContract.compare_with_sources and plan.subject_entities:
        return _compare_lines(plan, items, chinese, asked)
    today = _today(items, chinese)
    wanted = f"{question} {plan.topic}"
    compares = _COMPARES.search(wanted)
    if (today is not None and not years_of(wanted) and not compares
            and (year := _year_from_now(wanted, today))):
        # "明年中考什么时候报名" asks of 2027: "2026年中考网上报名于12月4日开始" is last year's.
        wanted = f"{wanted} {year}"
    if (today is not None and _LAST_MONTH.search(wanted) and not _AGAINST_LAST_MONTH.search(wanted)
            and not months_of(wanted)):
        # "2 bed rent last month" asks of October in November: "an early read of November
        # listings … $1,371" is not it.
        month = (today.replace(day=1) - timedelta(days=1)).month
        wanted = f"{wanted} {month}月" if chinese else f"{wanted} {_MONTH_NAMES[month]}"
    if (today is not None and period_not_over(wanted, today)
            and asked_metrics(wanted) & _REPORTED_AFTER_THE_PERIOD
            and not _ASKED_A_FORECAST.search(wanted)):
        # "瀚岳科技2026年全年净利润" in December 2026: a broker's 4.35亿元 is a forecast.
        return Draft(answer="", cited=[],
                     note="the asked period has not ended: its results are not reported yet")
    slot = asked_slot(question)
    wanted_names = tuple(asked_names(plan))
    # A figure of another metric, period, role or occasion (revenue for profit, a quarter
    # for nine months, the pole-sitter for the winner, tonight's fixture for last night's
    # score) is not the answer, however well it matches the rest of the question.
    asked_editions = editions(wanted)
    other_editions = {n for n, item in enumerate(items, start=1)
                      if not editions(item.title) <= asked_editions}
    found = [c for c in candidates(items, terms, chinese, asked, plan, slot)
             if other_figure(wanted, c.text) is None and clash(wanted, c.text) is None
             and not (_THE_PERIOD.search(c.text)
                      and clash(wanted, f"{c.text} {items[c.n - 1].title}"))
             and clash_under(wanted, c.text, items[c.n - 1].title) is None
             and not _under_a_variant(c, items, other_editions, wanted_names)]
    if today is not None and (asked_days := days_printed(question, today)):
        # "12月9日对南湾海狮的比分": a line that prints another day is about another day.
        # Nor does a line about when the sides met before, dated or not.
        found = [c for c in found if (printed := days_printed(c.text, today)) & asked_days
                 or not (printed or of_an_earlier_meeting(c.text))]
    if (plan.query_kind is not QueryKind.weather and not _CALLED_OFF.search(question)
            and (off := _called_off(found, items, slot, topic_words(question, wanted_names),
                                    asked_day(plan)))):
        # "Is the strike still on for Monday", "what time does the parade start": the newest
        # page's "The strike is called off" answers, whatever an older page scheduled.
        return Draft(answer="\n".join(with_marker(c.text, c.n) for c in off), cited=[off[0].n])
    if plan.query_kind is not QueryKind.weather and (owned := possessed_words(question)):
        # What the question asks of the name is said in the sentence: "Vessaria's trade
        # balance" is not answered by Vessaria's unemployment rate.
        found = [c for c in found if mentions_topic(c.text, owned)]
    if plan.query_kind in (QueryKind.company, QueryKind.news) and not asks_a_level(wanted):
        # A share price is not what a company or news question asked.
        found = [c for c in found if not quotes_a_level(c.text)]
    elif plan.query_kind is QueryKind.market and asks_a_level(wanted):
        # Nor is revenue guidance what "where did the stock close" asked.
        found = [c for c in found if quotes_a_level(c.text) or states_a_price(c.text)]
    day = asked_day(plan)
    if plan.query_kind is QueryKind.market and day == "today" and _ASKS_THE_CLOSE.search(wanted):
        # "今天收盘价" asked after today's session closed: an earlier session's close is not it.
        found = [c for c in found if not _before_todays_close(items[c.n - 1], chinese)]
    if day == "tonight" and slot is Slot.time and plan.query_kind is not QueryKind.weather:
        day = "today"  # 今晚末班车几点: tonight's last train is today's, no line says "night"
    behind = _written_before_today(items, chinese)
    if asks_a_schedule(wanted):
        # "When do they play next": a page from days ago may announce a game already played.
        found = [c for c in found if c.n not in behind
                 or not _only_past(c.text, today, behind[c.n][1])]
    if plan.query_kind is not QueryKind.weather:
        behind = {}
    if day == "period" and plan.query_kind is QueryKind.weather:
        return _period_lines([c for c in found if c.n not in behind or any(
            offset >= 0 for offset in offsets_spoken_of(c.text, *behind[c.n]))])
    if day == "period":
        pass  # "news this week": the freshness window keeps the week, every line may answer
    elif day is not None or plan.query_kind is QueryKind.weather:
        if plan.query_kind is QueryKind.weather:
            found = _under_day_labels(found, items)
        every_line = found
        found = _on_the_day(found, day, behind, today, wanted_names)
    if not _ASKED_A_FORECAST.search(wanted):
        # "房贷5年期lpr现在多少": a forecaster's "5年期LPR或降至3.25%" is not what it is.
        found = [c for c in found if not says_what_is_not_yet_so(c.text)]
        if _PAST_QUESTION.search(question):
            # "How much snow did Osterby get Saturday": what will fall is no answer.
            found = [c for c in found if not _only_future(c.text)]
    if plan.query_kind is not QueryKind.weather and slot is not Slot.any:
        # Only a sentence that carries the asked kind of value answers: a headline or a
        # dateline never does.
        found = [c for c in found if fills(slot, c.text, wanted_names, question)]
        if slot is Slot.amount and not asks_a_change(wanted):
            # How much a price moves is not the price: "will raise the adult fare by 50
            # cents", 每升上调0.2元.
            found = [c for c in found if fills(slot, _without_changes(c.text), wanted_names)]
        if slot is Slot.amount and asked_metrics(wanted) and not asks_a_change(wanted):
            # Revenue or profit is an amount: "海外收入占比提升至37%" is no revenue.
            found = [c for c in found if fills(slot, without_shares(c.text), wanted_names)]
        if slot is Slot.amount and asks_a_level(wanted):
            # A price is money or a quoted level: "3.1 million shares" traded is no price.
            found = [c for c in found if quotes_a_level(c.text) or states_a_price(c.text)]
        # The value must be the asked one: the sentence speaks of what the question asks
        # about it ("who scored" is not answered by "Wales beat Hungary 2-0").
        stems = topic_words(question, wanted_names)
        if stems and slot is not Slot.amount:
            # A page's title says what its lines speak of: under "Lib Dems take Quarrendale
            # in Wexmoor by-election", "Ottilie Brannoch was elected" is the by-election's.
            found = [c for c in found if mentions_topic(
                f"{c.text} {items[c.n - 1].title}"
                if names_a_person(c.text) or _REFERS_BACK.search(c.text) else c.text,
                stems, need=2)]
        if slot in _FIGURES:
            # "Tessaly Motors reported revenue of $1.84 billion, while Grevholt has yet to
            # report": the figure is in another name's clause, not the asked one's.
            found = [c for c in found if not _figure_of_another(c.text, slot, plan)]
        if slot is Slot.amount and (things := priced_things(question, _longest_first(plan))):
            # "雁汀今天猪肉多少钱一斤": a page that never names pork prices something else, the
            # lantern fair's tickets however well it names the town.
            found = [c for c in found if mentions_thing(
                f"{items[c.n - 1].title} {items[c.n - 1].snippet}", things)]
        if (per := per_unit_asked(question)) is not None:
            # "how much per kwh": a line must give a value per kWh, not a bill that names kWh.
            found = [c for c in found if per.search(c.text)]
        if (unit := unit_asked(question)) is not None:
            # "nimbra x4 battery mah": a line with no mAh states no capacity.
            found = [c for c in found if unit.search(c.text)]
        if chinese and (counted := counted_noun(question)) and not asked_metrics(wanted):
            # "招了多少新生" counts new pupils: a line that never says 新生 counts something else.
            found = [c for c in found if counted in c.text]
        if not found:
            return Draft(answer="", cited=[], note=slot_reason(slot))
        if asks_who_holds(wanted):
            # The holder is the one the newest page names: an older page may name the
            # predecessor.
            newest = max(items[c.n - 1].freshness_score for c in found)
            found = [c for c in found if items[c.n - 1].freshness_score >= newest]
    elif plan.query_kind is not QueryKind.weather:
        # A question about something in a place is not answered by whatever the place's
        # pages say: "Tromsø airport passenger numbers" by a line about Tromsø's football club.
        # Nor is a question that spells out what it asks in two words or more ("short-term
        # rental limit", "tram strike dates") by a line that says none of them, whatever
        # name it shares: names no list knows are read as subjects, not places. A result is
        # the one thing asked that its line need not name ("beat Hallam 3-1").
        stems = tuple(s for s in topic_words(question, wanted_names) if s not in _A_RESULT)
        if len(stems) >= (1 if _only_a_place(plan) else 2):
            found = [c for c in found if mentions_topic(c.text, stems)]
    if plan.query_kind is not QueryKind.weather and SAME_PERIOD.search(question):
        # "去年同期": only a figure said of the same period a year before answers, alone.
        figure = asked_slot(wanted)
        last_year = today.year - 1 if today is not None else None
        found = [replace(c, text=clause) for c in found
                 if (clause := same_period_clause(c.text, last_year)) and fills(figure, clause)]
    if (plan.query_kind is not QueryKind.weather and today is not None
            and slot not in _DATED_SLOTS and not _NAMES_A_TIME.search(wanted)):
        # A question in the past tense ("how much did X pay") asks what happened then.
        asks_now = not _PAST_TENSE.search(question)
        # How things stand now: a figure dated months back ("94% of capacity in mid-June") is
        # not it while a line gives a later one.
        # A role dated years back still stands: "Mayer was named chairman in March 2018".
        # A line that says its figure still holds is not dated by when it began ("The rates
        # currently in effect, since July 1, 2026, are $15.25").
        found = [c for c in found if not _states_a_figure(c.text) or _STILL_HOLDS.search(c.text)
                 or (not _dated_months_ago(c.text, today)
                     and not (asks_now and _of_past_years(c.text, today)))] or found
    if not _ASKS_A_YEAR_BEFORE.search(wanted):
        # "去年同期，3号线末班车为22:45": a line about this time last year is not now, nor is
        # "去年同期，公司第三季度营收为41.20亿元" this year's third quarter.
        found = [c for c in found if not _A_YEAR_BEFORE.match(c.text)
                 or _STILL_TO_COME.search(c.text)]
    if today is not None and not _NAMES_A_TIME.search(wanted):
        # Now is not the season a line is limited to: "夏季（5月至10月）每日6:30至19:00开放"
        # asked in December.
        found = [c for c in found if not _out_of_season(c.text, today)
                 and not _out_of_season(items[c.n - 1].title, today)] or found
    if (today is not None and plan.query_kind is not QueryKind.weather
            and slot not in _DATED_SLOTS and ASKS_NOW.search(wanted)):
        # How things stand now is not told by what takes effect on a later day ("Effective
        # July 1, 2027, the minimum wage will be $16.50").
        found = [c for c in found if not _only_later_days(c.text, today)]
    if not found:
        return Draft(answer="", cited=[])
    # Of a line that lists the asked category beside others, the asked one's clauses: "a
    # weekend pass costs £80" of "A day pass costs £45 and a weekend pass costs £80".
    # Of a line that lists several prices or rates, the item the question's words point to
    # (when a figure is what was asked: a date is not one of the prices beside it).
    found = [replace(c, text=clause) if (clause := asked_clause(wanted, c.text) or (
        item_asked(wanted, c.text) if slot in _FIGURES or slot is Slot.any else None)) else c
             for c in found]
    # A line that names the person a "who" question asks for answers it, whatever words of
    # the question it repeats: "Ismay Carrow was elected with 1,204 votes."
    # So does a forecast's line with a temperature, under its day's heading ("Friday: ...
    # High 44°F."), though it repeats no word of the question.
    carrying = [c for c in found if c.hits > 0
                or (slot is Slot.person and is_cjk(c.text) == chinese and names_a_person(c.text))
                or (plan.query_kind is QueryKind.weather and reads_temperature(c.text))]
    if (plan.answer_contract is AnswerContract.direct_fact or not carrying
            or day not in (None, "period") or slot is not Slot.any):
        freshness = ({c.n: items[c.n - 1].freshness_score for c in carrying}
                     if plan.freshness_required and slot is not Slot.any else {})
        best = _answering(carrying, plan, freshness, slot, wanted, today,
                          _hours_older(items, freshness)) if carrying else min(
            found, key=lambda c: (c.n, c.position))
        if plan.query_kind is QueryKind.weather and day not in (None, "period"):
            # "Lancaster: tomorrow cloudy. High 36°F, low 25°F." is one day in two sentences.
            lines = [best, *_same_day_after(best, every_line, plan)]
            return Draft(answer="\n".join(with_marker(c.text, c.n) for c in lines),
                         cited=[best.n])
        text = _without_comparisons(_asked_clauses(best.text, wanted, slot, wanted_names),
                                    slot, wanted_names, wanted)
        return Draft(answer=with_marker(text, best.n), cited=[best.n])
    return _summary_lines(carrying, topic_words(question, wanted_names), _rest_terms(plan),
                          wanted)


# A line that names its subject by what it is ("the clinic will be open Sundays", 该店): the
# page's title says which one.
_REFERS_BACK = re.compile(
    r"(?<![A-Za-z])[Tt]he (?:clinic|company|firm|hospital|store|shop|restaurant|school|museum"
    r"|library|park|pool|office|agency|facility|venue|bank|airline|airport|station|club"
    r"|centre|center|branch|site|attraction|service|line|route)(?![A-Za-z])"
    r"|该(?:店|院|馆|校|园|中心|公司|门店|景区|站|线路?|机构)")


# Where a sentence may be cut into clauses: after a Chinese comma or a semicolon, and before
# an English clause that sets another figure beside the first ("…, while the Lite costs …").
_CLAUSES = re.compile(r"(?<=[，；;])|(?=,\s+(?:while|whereas|but|compared with|against"
                      r"|versus|and (?:the|its|a|an)\b))")


_FIGURES = (Slot.amount, Slot.quantity, Slot.share)


def _figure_of_another(text: str, slot: Slot, plan: ExternalQueryPlan) -> bool:
    """Whether a sentence of several clauses gives the asked kind of figure only in clauses
    that name someone else, while the clauses that name the asked name give none."""
    parts = [p for p in _CLAUSES.split(text) if p.strip()]
    if len(parts) < 2:
        return False
    asked = tuple(asked_names(plan))
    naming = [any(names(a, p, plan.query_kind) for a in asked) for p in parts]
    if not any(naming):
        return False  # "it", "the company": whose clause it is cannot be told
    filled = [fills(slot, p, asked) for p in parts]
    if any(f and n for f, n in zip(filled, naming, strict=True)):
        return False
    return any(f and not n and proper_names(p, asked)
               for p, f, n in zip(parts, filled, naming, strict=True))


def _asked_clauses(text: str, wanted: str, slot: Slot, names: tuple[str, ...]) -> str:
    """One fact per line: a sentence that states the asked value beside another period's,
    another year's, another metric's or another edition's ("预计2026年营收152亿元，2027年目标
    170亿元", "the base model costs $899, while the Lite starts at $549") is quoted
    without the clauses that carry the other value, when what is left still carries the
    asked one. Clauses without a value of their own stay, and so does a change in percent
    ("同比增长8.2%", "up 6%"): it is said of the figure before it."""
    if slot is Slot.any:
        return text
    parts = [p for p in _CLAUSES.split(text) if p]
    if len(parts) < 2:
        return text
    asked = editions(wanted)
    other = [fills(slot, without_shares(p), names) and bool(
        clash(wanted, p) or other_figure(wanted, p) or editions(p) - asked) for p in parts]
    if not any(other) or all(other):
        return text
    kept = "".join(p for p, drop in zip(parts, other, strict=True) if not drop)
    kept = kept.strip().rstrip("，,；; 。.")
    if not fills(slot, kept, names):
        return text
    return kept + ("。" if is_cjk(kept) else ".")


# A figure set beside the one before it, after a change: "up 9% from $378.5 million in the
# third quarter of 2025", "fell to 6.18% this week, from 6.27% last week", "up 0.9% from
# Wednesday's $2,887.55"; "，上年同期为3.98亿元", "，前一交易日中间价为7.0915", "由6:00推迟至7:30"
# (of which "由6:00"). Never "from $45 to $80" (a range), nor "open from 6 a.m." (no change).
_NUMBER_SAID = (r"[$€£¥]?\s?-?\d+(?:[.,]\d+)*(?![\d]|[.,]\d)(?!\s?(?:[ap]\.?m\b|o'clock|[:：]\d))"
                r"(?:\s?(?:%|million|billion|trillion|bn|m|k|°[CF]?)(?![a-z]))?")
_COMPARED = re.compile(
    rf"(?i:,?\s*(?:(?:up|down)\s+)?(?:from|compared (?:with|to)|versus)"
    rf"\s+(?:a\s+|an\s+|the\s+)?(?:revised\s+|[A-Z][a-z]+(?:'s|’s)\s+)?{_NUMBER_SAID}"
    r"(?!\s+(?:to|through|until|and)\b)"
    # what the figure was of, up to the clause's end: never past a "to" (the new figure) nor
    # an abbreviation's point before a number ("Nov. 21")
    r"(?:\s+(?:in|on|for|during|a|the|last|this|previous|prior|same)\b(?:(?!\bto\b)[^,.;])*?)?"
    r"(?=[,;]|\.(?!\d)(?!\s+\d)|$))"
    rf"|[，,]\s*(?:上年同期|去年同期|上年|前一交易日(?:中间价)?|上一交易日|上月|上期|此前|上周)为?\s*{_NUMBER_SAID}"
    r"[^\d，,。；;\s]{0,4}(?=[，,。；;]|$)"
    r"|(?<![理经自因缘])由(?![于此来])\s*\d[^，,。；由]{0,10}?"
    r"(?=(?:推迟|提前|调整|上调|下调|降|升|涨|跌|增|减|改|延长|缩短)至)")
# What makes "from X" a change: a verb of change or "up"/"down" before it in the line.
_CHANGED = re.compile(r"(?i:(?<![a-z-])(?:rose|rise[sn]?|rising|fell|fall(?:s|en|ing)?|up|down"
                      r"|increased|decreased|climbed|dropped|declined|grew|jumped|slipped|gained"
                      r"|lost|edged|eased|surged|plunged|slid|advanced|improved|widened"
                      r"|narrowed|settled|closed|was|were)(?![a-z]))")
_ASKS_A_COMPARISON = re.compile(
    r"(?i:(?<![a-z])(?:compared?|change[sd]?|from|versus|vs|than|difference|rise|rose|fall|fell"
    r"|up or down|increase|decrease|grow|growth|before|previous"
    r"|prior|original(?:ly)?|old|used to|earlier|ago|year-ago|against"
    r"|(?:and|or|vs\.?) last (?:week|month|year)|same (?:quarter|period|month|week|time))(?![a-z]))"
    r"|同比|环比|比上|较|增长|下降|涨了|跌了"
    r"|变化|之前|此前|原来|原定|原价|原本|调整前|去年|上年|前年|上周|上个?月|一年前|相比|对比"
    r"|和.{1,8}比")


def _without_comparisons(text: str, slot: Slot, names: tuple[str, ...],
                         question: str = "") -> str:
    """A quoted figure without the figure it is set beside, when the question did not ask
    for the comparison: "rose to 5.2% in October from 4.9% in September" is quoted "rose
    to 5.2% in October". The line is kept whole when what is left no longer gives the
    asked kind of value, or when the cut would name what the question names ("versus
    Smith's 52%")."""
    if (slot in _DATED_SLOTS and slot is not Slot.time) or _ASKS_A_COMPARISON.search(question):
        return text
    said = {w for w in re.findall(r"[a-z]{3,}", question.casefold())}

    def cut(m: re.Match[str]) -> str:
        part = m.group()
        if part.lstrip(" ,，").startswith(("由", "，", ",")) or CJK.search(part):
            return "" if slot is not Slot.time or part.lstrip().startswith("由") else part
        if not _CHANGED.search(text, 0, m.end()) or slot is Slot.time:
            return part
        if said & {w.casefold() for w in re.findall(r"[A-Z][a-z]{2,}", part)}:
            return part  # "versus Smith's 52%" asked of Smith
        return ""
    kept = _COMPARED.sub(cut, text)
    if kept == text:
        return text
    kept = re.sub(r"\s+([,.;，。；])", r"\1", kept)
    kept = re.sub(r"([,，])\s*([,，])", r"\1", kept).strip()
    if text.rstrip()[-1:] in ".。" and kept[-1:] not in ".。":
        kept += "。" if is_cjk(kept) else "."
    if slot is Slot.any:  # what is left must still state a figure
        return kept if _A_DIGIT.search(kept) else text
    return kept if fills(slot, kept, names) else text


_A_DIGIT = re.compile(r"\d")


# A line that starts with another day of the month ("8日晴，最低气温-6℃" after 明天(7日)) is
# that day's; one that starts "其中" and a place ("其中澄北站AQI最高，达183") gives a part of
# the place, not the place (其中上午, 其中夜间 are parts of the day).
_DAY_OF_MONTH = re.compile(r"(?<!\d)(\d{1,2})\s*日")
_A_PART = re.compile(r"\s*(?:其中(?!上午|下午|中午|夜间|夜里|白天|早晨|早上|傍晚|晚上|凌晨|午后)"
                     r"|(?i:among them|of which)\b)")


def _another_day_or_part(line: str, best: str) -> bool:
    day = _DAY_OF_MONTH.match(line.lstrip())
    return bool(_A_PART.match(line)) or (
        day is not None and day.group(1) not in _DAY_OF_MONTH.findall(best))


def _same_day_after(best: Candidate, lines: list[Candidate],
                    plan: ExternalQueryPlan) -> list[Candidate]:
    """The weather readings that follow a day's line on its page without naming a day or a
    place of their own: they continue it. At most two, and none past a line about anything
    else."""
    following: list[Candidate] = []
    for c in sorted((c for c in lines if c.n == best.n and c.position > best.position),
                    key=lambda c: c.position):
        if (c.position != best.position + len(following) + 1 or names_a_day(c.text)
                or _another_day_or_part(c.text, best.text)
                or not is_weather_line(c.text) or len(following) == 2
                or _names_a_place(c.text, plan)):
            break
        following.append(c)
    return following


def _names_a_place(sentence: str, plan: ExternalQueryPlan) -> bool:
    """Whether a sentence names a place, the asked one or another ("Toronto: high 2C")."""
    return names_something_else(plan, sentence) or any(
        names(n, sentence, plan.query_kind) for n in asked_names(plan)) or bool(
        find_places(sentence[:MAX_PLACE_CHARS], place_question=True))


MAX_PLACE_CHARS = 300


# What a question about a game asks for, as `topic_words` stems: its line gives the score.
_A_RESULT = frozenset({"resul", "game", "match", "win", "score", "final", "fixtu"})


def _only_a_place(plan: ExternalQueryPlan) -> bool:
    """Whether the only name the question gives is a place."""
    names = asked_names(plan)
    return bool(names) and all(place_of(n) is not None or n == plan.location_hint
                               for n in names)


_CALLED_OFF = re.compile(
    r"(?i:(?<![a-z])(?:called off|postponed|cancell?ed|scrapped|suspended|averted|rescheduled"
    r"|put off|pushed back)(?![a-z]))|取消|推迟|延期|暂停举办|叫停|改期")


def _called_off(found: list[Candidate], items: list[ExternalEvidence], slot: Slot,
                stems: tuple[str, ...], day: str | None) -> list[Candidate]:
    """The newest page's line that calls off, postpones or cancels what the question asks of
    (`stems`, its words) and an older page scheduled, under a headline that says so, and the
    next line of that page when it gives the asked kind of value ("It will now be held on
    Dec. 13"); none when no older page speaks of it. A launch page's "the launch was
    postponed from Nov. 24" is history: its headline reports the launch."""
    if not found or not stems:
        return []
    fresh = {c.n: items[c.n - 1].freshness_score for c in found}
    newest = max(fresh.values())
    off = [c for c in found if fresh[c.n] >= newest and _CALLED_OFF.search(c.text)
           and _CALLED_OFF.search(items[c.n - 1].title) and mentions_topic(c.text, stems)
           and not (day is not None and names_another_day(c.text, day))]
    if not off or all(score >= newest for score in fresh.values()):
        return []
    first = min(off, key=lambda c: c.position)
    after = [c for c in found if c.n == first.n and c.position == first.position + 1
             and slot is not Slot.any and fills(slot, c.text)]
    if slot is not Slot.any and not after and not fills(slot, first.text):
        return []  # "how much": a line that only calls it off gives no figure
    return [first, *after]


# A forecast's day heading: "Friday:", "Friday night:", "Tonight:", "周五：", "明天：".
_DAY_LABEL = re.compile(
    r"(?i:(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tonight|tomorrow)(?: night)?"
    r"|this (?:morning|afternoon|evening))\s*[:：]"
    r"|(?:周[一二三四五六日天]|星期[一二三四五六日天]|今天|明天|后天|今晚|明晚|今夜)(?:白天|夜间)?\s*[:：]")
_ANY_DAY = re.compile(r"(?i:(?<![a-z])(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tonight"
                      r"|tomorrow|weekend|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\.?\s*:"
                      r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d"
                      r")(?![a-z]))|周[一二三四五六日天末]|星期|今天|明天|后天|今晚|明晚|今夜|(?<!\d)\d+\s*[月日号]")


def _under_day_labels(found: list[Candidate], items: list[ExternalEvidence]) -> list[Candidate]:
    """A forecast's lines under a day heading are that day's: "Friday: rain developing after
    10 a.m. High 44°F. Chance of rain 70%." reads as one line, up to the next line that names
    a day. Only lines next to each other in the page join, as the page wrote them."""
    out: list[Candidate] = []
    end = -1  # the position in its page of the last line joined to out[-1]
    for c in found:
        last = out[-1] if out else None
        if (last is not None and last.n == c.n and c.position == end + 1
                and _DAY_LABEL.match(last.text) and not _ANY_DAY.search(c.text)
                and (joined := f"{last.text} {c.text}") in items[c.n - 1].snippet):
            out[-1] = replace(last, text=joined, hits=last.hits + c.hits)
        else:
            out.append(c)
        end = c.position
    return out


def _on_the_day(found: list[Candidate], day: str | None, behind: dict[int, tuple[date, int]],
                today: date | None = None, asked: tuple[str, ...] = ()) -> list[Candidate]:
    """The lines about the asked day. A line that names no day reads as today's, so it may
    answer today (or an undated weather question); a line about another day never does. A
    page written on an earlier day (`behind`) speaks of days by its own calendar: only the
    days it prints, or its words for days counted from when it was written, tell."""
    by_date = [c for c in found if c.n in behind and _on_date(c.text, day, *behind[c.n])]
    current = [c for c in found if c.n not in behind]
    on_day = [c for c in current if day is not None and speaks_of(c.text, day)]
    if not on_day and day is not None and today is not None:
        # No current line says "tomorrow": one may print tomorrow's weekday or date ("Monday,
        # December 7", 6日夜间至7日早晨). Only then is a current page read by the calendar.
        on_day = [c for c in current if _on_date(c.text, day, today, 0)]
    if on_day and day in (None, "today"):
        # A page dated today in one line ("Market wrap — Thursday, Dec. 3, 2026, 5:05 p.m.")
        # speaks of today in its lines that name no day and name what was asked ("Veltrino
        # Labs closed at $48.17"), not in a line about the market at large.
        dated = {c.n for c in on_day}
        on_day += [c for c in current if c.n in dated and c not in on_day
                   and not days_spoken_of(c.text) and not (today and days_printed(c.text, today))
                   and any(names(name, c.text) for name in asked)]
    if day in (None, "today") and today is not None and (since := _in_force_today(current, today)):
        # "12月5日24时起，92号汽油零售价调整为每升7.46元" holds today, whatever other line
        # prints today's date.
        on_day = [*on_day, *(c for c in since if c not in on_day)]
    if on_day or by_date or day not in (None, "today", "tonight"):
        chosen = {*on_day, *by_date}
        return [c for c in found if c in chosen]
    # A line that prints today's weekday or date is today's ("as of 3 a.m. Sunday, Dec. 6");
    # one that prints only other dates is theirs ("12月3日A股收盘…" asked on the 4th).
    return [c for c in current if (not names_another_day(c.text, day) or (
        today is not None and _on_date(c.text, day or "today", today, 0)))
            and not (today is not None and _only_other_dates(c.text, today))
            and (day != "tonight" or speaks_of_night(c.text))]


def _only_other_dates(text: str, today: date) -> bool:
    """Whether a line prints calendar days, none of them today and no span that holds it."""
    printed = days_printed(text, today)
    return bool(printed) and today not in printed and not (
        len(printed) >= 2 and min(printed) <= today <= max(printed))


# English words that start a state on a day ("effective Dec. 1", "from 1 December").
_FROM_A_DAY = r"(?<![A-Za-z])(?:{})\s+(?:\w+\s+)?\d"
_SINCE = CaseBlind(r"自\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号]起|"
                   + _FROM_A_DAY.format("since|starting|effective|as of|from"))
# A value set from a day on: "12月5日24时起…调整为", "自12月1日起执行", "effective Dec. 1".
_SET_FROM = CaseBlind(r"(?<!\d)\d{1,2}\s*月\s*\d{1,2}\s*[日号]"
                      r"(?:\s*\d{1,2}\s*[时点](?:\s*\d{1,2}\s*分)?)?\s*(?:起|开始)(?!飞|跑|步|诉|草)|"
                      + _FROM_A_DAY.format("effective|starting|as of"))


def _in_force_today(found: list[Candidate], today: date) -> list[Candidate]:
    """The lines that set a value from a day no later than today, those of the latest such
    day only: the last change is the one in force ("12月5日24时起…每升7.46元", not the price
    set from November 1)."""
    started = {c: max(printed) for c in found if _SET_FROM.search(c.text)
               and (printed := days_printed(c.text, today)) and max(printed) <= today}
    latest = max(started.values(), default=None)
    return [c for c, day in started.items() if day == latest]


def _only_past(text: str, today: date | None, days_behind: int = 0) -> bool:
    """Whether every day a line prints is past; the days are read by the calendar of the day
    its page was written (an April notice's "4月18日" is last April's, not next)."""
    if today is None or _SINCE.search(text):
        return False  # "自12月1日起", "from 1 December": a state that began, not a past event
    printed = days_printed(text, today - timedelta(days=days_behind))
    return bool(printed) and max(printed) < today


def _on_date(text: str, day: str | None, today: date, days_behind: int) -> bool:
    offsets = day_offsets(day, today)
    if not offsets:
        return False
    past = min(offsets) < 0 and not _FUTURE.search(text)
    return (bool(offsets & offsets_spoken_of(text, today, days_behind, past=past))
            and (day != "tonight" or speaks_of_night(text)))


# A line about what is still to come: its bare weekday is the next one, never the last.
_FUTURE = CaseBlind(r"(?<![A-Za-z])(?:will|shall|is due|are due|next|upcoming|scheduled"
                     r"|expected to|set to|plans? to)(?![A-Za-z])|将|即将|预计|计划")


# Where "today" is for the asker, to read the days a page prints: China's for a question in
# Chinese, the eastern United States' otherwise.
_CHINA = timezone(timedelta(hours=8))
_US_EAST = timezone(timedelta(hours=-5))
_DAY_S = 86_400


def _today(items: list[ExternalEvidence], chinese: bool) -> date | None:
    """Today where the question is asked, as of when its evidence was retrieved."""
    if not items:
        return None
    return max(i.retrieved_at for i in items).astimezone(_CHINA if chinese else _US_EAST).date()


# A month a sentence dates its figure to: "in mid-June", "on June 14, 2026", "6月14日", "2025年6月".
# A lower-case "may" is a verb, so English months are read capitalised only.
_FULL_MONTHS = "|".join(sorted((m.capitalize() for m in MONTHS if len(m) > 3 or m == "may"),
                               key=len, reverse=True))
_MONTH_DATED = re.compile(
    rf"(?<![A-Za-z])(?P<en>{_FULL_MONTHS})(?![A-Za-z])(?:\s+\d{{1,2}}(?!\d)(?:st|nd|rd|th)?)?"
    r"(?:,?\s+(?P<en_year>(?:19|20)\d\d))?"
    r"|(?:(?P<zh_year>(?:19|20)\d\d)\s*年\s*)?(?<!\d)(?P<zh>1[0-2]|0?[1-9])\s*月(?!份?以来)")
# A figure dated this many months back or more is not how things stand now (a monthly
# statistic is published a month or two after its month).
_MONTHS_OLD = 3


_DATED_SLOTS = (Slot.date, Slot.time, Slot.duration)
# A question that names a time of its own (a year, a quarter, last month, 去年) asks about
# that time, not about now.
_NAMES_A_TIME = CaseBlind(
    r"(?:19|20)\d\d|(?<![a-z])(?:quarter|q[1-4]|last|previous|ago|yesterday|years?|months?"
    r"|weeks?|season|since|until|before|after|in (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct"
    r"|nov|dec)[a-z]*)(?![a-z])|季度|去年|前年|上个?|年|月|周|昨|以来|之前|之后")


# A span of months a line holds for: 5月至10月, "from May to October" (never two days:
# "4月18日至19日", "December 4 until December 7").
_MONTH_SPAN = re.compile(
    r"(?<!\d)(?P<a>1[0-2]|0?[1-9])\s*月份?\s*(?:至|到|-|–|~|～)\s*(?P<b>1[0-2]|0?[1-9])\s*月份?"
    r"(?!\s*\d)"
    rf"|(?<![A-Za-z])(?P<ea>{_FULL_MONTHS})\s*(?:to|until|through|till|-|–)\s*"
    rf"(?P<eb>{_FULL_MONTHS})(?![A-Za-z])(?!\s*\d)")


def _out_of_season(text: str, today: date) -> bool:
    """Whether a line holds only for spans of months that leave today's month out."""
    spans = []
    for m in _MONTH_SPAN.finditer(text):
        first = int(m.group("a")) if m.group("a") else MONTHS[m.group("ea").lower()]
        last = int(m.group("b")) if m.group("b") else MONTHS[m.group("eb").lower()]
        spans.append({(first - 1 + i) % 12 + 1 for i in range((last - first) % 12 + 1)})
    if not spans and not _DIGIT.search(text):
        # "Callowby – Harrowmere summer timetable", 夏季作息时间: a season's schedule (one
        # that prints its dates is read by them).
        spans = [_SEASON_MONTHS[(m.group(1) or m.group(2)).lower()]
                 for m in _SEASONAL.finditer(text)]
    return bool(spans) and all(today.month not in months for months in spans)


# A season's schedule, by the northern seasons' months (the pages this serves are).
_SEASON_MONTHS = {"spring": {3, 4, 5}, "summer": {6, 7, 8}, "autumn": {9, 10, 11},
                  "fall": {9, 10, 11}, "winter": {12, 1, 2}, "春季": {3, 4, 5},
                  "夏季": {6, 7, 8}, "秋季": {9, 10, 11}, "冬季": {12, 1, 2}}
_SEASONAL = CaseBlind(r"(?<![A-Za-z])(spring|summer|autumn|fall|winter) (?:timetable|schedule"
                       r"|opening hours|hours|service)s?(?![A-Za-z])|(春季|夏季|秋季|冬季)"
                       r"(?:时刻表|作息|开放时间|运行图|班次)")


_PAST_TENSE = CaseBlind(r"(?<![A-Za-z])(?:did|was|were|had|paid|bought|sold|won|lost)(?![A-Za-z])"
                         r"|了|过|曾")


# A question in the past tense: in English by its verb, in Chinese by its day (昨晚, 前天), not
# by 了, which also ends a question about now (最近咋样了, 降息了吗).
_PAST_QUESTION = re.compile(r"(?i:(?<![a-z])(?:did|was|were|had)(?![a-z]))"
                            r"|昨晚|昨天|昨日|昨夜|前天")
_PAST_VERB = re.compile(r"(?i:(?<![a-z])(?:[a-z]{3,}ed|was|were|had|did|won|lost|went|came|rose"
                        r"|fell|got|saw|hit|beat|made|paid|sold|bought|left|took|said|told"
                        r"|spoke|gave|wrote|met|ran|held|led|began|became|brought|chose|drew"
                        r"|grew|knew|stood|struck|set|cut|put|kept)(?![a-z]))"
                        r"|了|已经|已于|曾|录得|实测|观测到")


def _only_future(sentence: str) -> bool:
    """Whether a line speaks only of what will be: "Saturday's high will be 27°F", not "it
    launched at 10:42 and will deploy next week"."""
    return bool(_FUTURE.search(sentence)) and not _PAST_VERB.search(sentence)


# A question in the past tense about what was expected asks the expectation.
# A company's or an economy's results for a period, published once it ends.
_REPORTED_AFTER_THE_PERIOD = frozenset({"revenue", "profit", "gdp"})
_ASKED_A_FORECAST = re.compile(r"(?i:(?<![a-z])(?:forecasts?|expected|predicted|projected|guidance"
                               r"|outlook|supposed|scheduled|planned|going to)(?![a-z]))"
                               r"|预计|预测|预报|计划|原定")


def _of_past_years(text: str, today: date) -> bool:
    """Whether a line dates what it says to years before today's, and to no other
    ("乐队2025年杭州演出的内场票价", "the fee was $40 in 2024"); a year that names a model
    ("the 2021 RAV4 Prime") dates nothing."""
    years = {m.group(1) or m.group(2) for m in _IN_A_YEAR.finditer(text)}
    return bool(years) and all(int(y) < today.year for y in years)


# "Last year, the council approved the ban, which comes into force on 1 March": still to come.
_STILL_TO_COME = CaseBlind(r"将|起施行|起实施|(?<![A-Za-z])(?:will|comes? into force|takes? effect"
                            r"|from (?:next|\d))(?![A-Za-z])")
# A question that compares with last year or last month asks of now (比去年多多少, 环比).
_COMPARES = CaseBlind(
    r"比(?:去年|上年|上个?月)|同比|环比|今年|本月"
    r"|(?<![a-z])(?:than|compared (?:with|to)|from|since|versus|vs\.?) (?:last|the previous)"
    r" (?:year|month)(?![a-z])|(?<![a-z])this (?:year|month)(?![a-z])"
    r"|year[- ]on[- ]year|month[- ]on[- ]month")
_LAST_MONTH = CaseBlind(r"上个?月|(?<![a-z])(?:last|previous) month(?![a-z])")
# Last month as what a figure is set against, not the month asked: 比上个月, "than last month"
# (上个月CPI同比 asks of last month).
_AGAINST_LAST_MONTH = CaseBlind(r"比上个?月|较上个?月|(?<![a-z])(?:than|compared (?:with|to)|from"
                                r"|since|versus|vs\.?|over) (?:last|the previous) month(?![a-z])")
# Each month's full name ("may" is its only one), by its number.
_MONTH_NAMES = {number: name for name, number in sorted(MONTHS.items(), key=lambda m: len(m[0]))}
_NEXT_YEAR = CaseBlind(r"明年|(?<![a-z])next year(?![a-z])")


def _year_from_now(question: str, today: date) -> int | None:
    """The year a question names by its distance from now: next year, or one before
    (`year_asked`: 去年, "last year", 前年)."""
    if _NEXT_YEAR.search(question):
        return today.year + 1
    return year_asked(question, today)


_ASKS_A_YEAR_BEFORE = CaseBlind(
    r"去年|上年|前年|(?:19|20)\d\d|(?<![a-z])(?:last year|a year (?:ago|earlier|before)|years? ago"
    r"|previous year|prior year)(?![a-z])")
_A_YEAR_BEFORE = re.compile(r"(?:去年|上年|前年)(?:同期|此时|这个时候)?[，,]"
                            r"|(?i:(?:last year|a year (?:ago|earlier)|this time last year),)")


_IN_A_YEAR = re.compile(r"((?:19|20)\d\d)\s*年(?!\d)"
                        r"|(?<![A-Za-z])(?:in|during|since|from|for|of) ((?:19|20)\d\d)(?![\d\w])")


def _states_a_figure(text: str) -> bool:
    return fills(Slot.amount, text) or fills(Slot.quantity, text)


def _dated_months_ago(text: str, today: date) -> bool:
    """Whether every month the sentence dates itself to is `_MONTHS_OLD` months or more before
    today's ("in mid-June", asked in December). A month without a year is the one nearest
    today, the past one when both are as near: "from January" is next month's."""
    gaps = []
    for m in _MONTH_DATED.finditer(text):
        month = MONTHS[m.group("en").lower()] if m.group("en") else int(m.group("zh"))
        year = m.group("en_year") or m.group("zh_year")
        if year is None:
            back = (today.month - month) % 12
            gaps.append(back if back <= 6 else back - 12)
        else:
            gaps.append((today.year - int(year)) * 12 + today.month - month)
    return bool(gaps) and min(gaps) >= _MONTHS_OLD


_STILL_HOLDS = CaseBlind(r"现行|现为|目前为|目前执行|仍执行|沿用至今"
                         r"|(?<![a-z])(?:currently in (?:effect|force)"
                         r"|(?:remains?|remained|is still|are still) in (?:effect|force)"
                         r"|in effect since|in force since|currently)(?![a-z])")
_ASKS_THE_CLOSE = re.compile(r"收盘|收市|(?i:(?<![a-z])(?:close[ds]?|closing)(?![a-z]))")
# When the asker's market closes, in the asker's time: Shanghai's and New York's.
_CLOSES_AT = {True: time(15, 0), False: time(16, 0)}


def _before_todays_close(item: ExternalEvidence, chinese: bool) -> bool:
    """Whether the page was published on an earlier day than today, asked on a weekday after
    today's session closed (China's market for a question in Chinese, New York's otherwise,
    an hour late in summer): its close is an earlier session's. A page from early this
    morning may carry last night's close of a market an ocean away."""
    now = item.retrieved_at.astimezone(_CHINA if chinese else _US_EAST)
    published = published_at(item)
    if published is None or now.weekday() >= 5 or now.time() < _CLOSES_AT[chinese]:
        return False
    return published < datetime.combine(now.date(), time(0, 0), now.tzinfo)


def _written_before_today(items: list[ExternalEvidence],
                          chinese: bool) -> dict[int, tuple[date, int]]:
    """Per item (numbered from 1) published a day or more before it was retrieved (twelve
    hours or more, to the nearest day: where the page was written is unknown, so its
    calendar day is too): today, and how many days old the page is. A forecast page from
    yesterday says "Tomorrow" of today."""
    zone = _CHINA if chinese else _US_EAST
    behind: dict[int, tuple[date, int]] = {}
    for n, item in enumerate(items, start=1):
        published = published_at(item)
        if published is None:
            continue
        days = int((item.retrieved_at - published).total_seconds() / _DAY_S + 0.5)
        if days > 0:
            behind[n] = (item.retrieved_at.astimezone(zone).date(), days)
    return behind


def _hours_older(items: list[ExternalEvidence], freshness: dict[int, float]) -> dict[int, int]:
    """For each page `freshness` scores, how long before the newest of them it was published,
    in quarters of a day: a figure that changes is the latest report's, though both are fresh
    enough ("3,420 remained without power as of 7 a.m." over the day before's 11,900)."""
    published = {n: at for n in freshness if (at := published_at(items[n - 1])) is not None}
    if not published:
        return {}
    newest = max(published.values())
    return {n: int((newest - at).total_seconds() // _QUARTER_DAY_S)
            for n, at in published.items()}


_QUARTER_DAY_S = 6 * 3600


def _answering(carrying: list[Candidate], plan: ExternalQueryPlan,
               freshness: dict[int, float] | None = None,
               slot: Slot = Slot.any, wanted: str = "",
               today: date | None = None,
               older: dict[int, int] | None = None) -> Candidate:
    """The evidence is already about the asked names, so the sentence that carries the rest of
    the question (CEO, 销量, 总部) answers it; the names only break ties. With `freshness`
    (item -> score), of equally good sentences in the question's language the newest page's
    answers: a value that changes (the next venue, the current price) is the latest page's.
    Of a page's lines, one that gives what was asked in full comes first: "who" is answered
    by a line that names a person, a day's weather by a line with its temperature."""
    rest = _rest_terms(plan)
    fresh = freshness or {}
    chinese = is_cjk(plan.topic)
    weather = plan.query_kind is QueryKind.weather
    # "Last quarter" read as the quarter before today's: a preference, not a clash (a
    # company's fiscal quarters need not be the calendar's).
    wanted += _which_quarter(wanted, today)

    def in_full(c: Candidate) -> bool:
        return ((slot is Slot.person and is_cjk(c.text) == chinese and names_a_person(c.text))
                or (weather and reads_temperature(c.text))
                or states_what_was_asked(wanted, c.text))
    # Pages about as fresh count as fresh as each other (tenths of the score): hours apart
    # do not decide, months apart do.
    def of_someone_else(c: Candidate) -> bool:
        # "同案被告人、原财务总监祁慧敏被判处有期徒刑五年" is the co-defendant's, though it repeats
        # "被判" of "韩立峥被判了几年": a line about a person the question did not name comes last
        # (unless a person is what was asked, or the weather).
        return (slot is not Slot.person and not weather and names_a_person_by_role(c.text)
                and not any(names(n, c.text, plan.query_kind) for n in asked_names(plan)))
    # What did happen is not told by what will: "the rocket will launch at 9:10" is a
    # preview's, for "what time did it launch".
    past = not weather and bool(_PAST_QUESTION.search(wanted))
    later = older or {}
    # Nor is what is so now told by what takes effect on a later day ("to raise the minimum
    # wage to $18.25 on Jan. 1, 2027"), however new its page.
    now = today is not None and bool(ASKS_NOW.search(wanted))

    def from_a_later_day(c: Candidate) -> bool:
        return now and today is not None and _only_later_days(c.text, today)
    return max(carrying, key=lambda c: (round(fresh.get(c.n, 0.0), 1), in_full(c),
                                        not (past and _only_future(c.text)),
                                        not of_someone_else(c),
                                        term_hits(c.text, rest), is_cjk(c.text) == chinese,
                                        not from_a_later_day(c), -later.get(c.n, 0),
                                        c.score, -c.n, -c.position))


# An amount a figure moves by: "raise the adult bus fare by 50 cents", "up 12 cents",
# 每升上调0.2元 (not 上调至, which gives the new figure).
_A_CHANGE_BY = re.compile(
    r"(?i:(?<![a-z])(?:rais|increas|hik|cut|lower|reduc|rise|rose|fell|fall|drop|climb|jump"
    r"|slipp|gain|los|add|up|down)[a-z]*\b(?:(?!\bto\b)[^.;:]){0,40}?\bby\s+"
    r"(?:about\s+|roughly\s+|nearly\s+)?"
    r"(?!(?:19|20)\d\d\b|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))"
    r"[$€£¥]?\d[\d,.]*\s*(?:cents?|pence|p\b|%|percent|per ?cent)?"
    r"|(?<![a-z])(?:up|down)\s+[$€£¥]?\d[\d,.]*\s*(?:cents?|pence|%|percent)?)"
    r"|(?:上涨|下跌|上调|下调|涨了|跌了|提高|降低|增加|减少|涨|跌)(?!至|到|为)\s*[\d.]+\s*(?:元|角|分|%|％)")


def _without_changes(text: str) -> str:
    return _A_CHANGE_BY.sub(" ", text)


def _only_later_days(text: str, today: date) -> bool:
    """Whether every day the line prints is after today, and it says neither what holds until
    then nor what is so now ("is currently $15.25 and will rise to $16.50 on Jan. 1")."""
    return (bool(days := days_printed(text, today)) and min(days) > today
            and not (len(days) == 1 and holds_until_a_day(text))
            and not _STILL_HOLDS.search(text))


def _rest_terms(plan: ExternalQueryPlan) -> list[tuple[str, float]]:
    """The plan's terms but its names: what the question asks of them. Nor the day, which is
    chosen before (its words, "on tuesday", must not favour a line that says them over the
    day's forecast), nor the question's function words ("who" favours "Graham Tully, who
    will return" over "X has named Dana Okafor")."""
    asked = {f.casefold() for name in asked_names(plan) for f in name_forms(name)}
    return [(t, w) for t, w in grounded_terms(plan)
            if t not in asked and t != (plan.time_range_hint or "").strip().lower()
            and t not in _STOP_WORDS]


_STOP_WORDS = frozenset(ENGLISH_STOP_WORDS)
_DIGIT = re.compile(r"\d")


def _period_lines(found: list[Candidate]) -> Draft:
    """Per page, every line with a number or a day, in page order: a five-day forecast is
    five days, not the first one. One fact per line, each with its citation; a fact two
    pages repeat word for word is said once."""
    dated = sorted((c for c in found if _DIGIT.search(c.text) or c.hits > 0),
                   key=lambda c: (c.n, c.position))
    lines: dict[str, int] = {}
    for c in dated:
        lines.setdefault(c.text, c.n)
    return Draft(answer="\n".join(with_marker(text, n) for text, n in lines.items()),
                 cited=list(dict.fromkeys(lines.values())))


def _summary_lines(carrying: list[Candidate], stems: tuple[str, ...] = (),
                   rest: list[tuple[str, float]] | None = None, question: str = "") -> Draft:
    """The best item's best sentence, and a second one when it names a whole field too. One
    page only: a second page's sentence may be about another product or another occasion
    that merely shares the words. The item is one whose sentence says something of what the
    question asks of its names (`rest`: 单个文件 of 云栈对象存储单个文件最大能传多大), not only
    the names. Of the page's sentences, those that speak of what the question asks
    of its names (`stems`: "turnout") come first, however often the others repeat the
    names. A line states its figures without the ones it sets them beside, as a direct
    answer does ("436 cases, up from 298 the week before" is quoted "436 cases")."""
    best = max(carrying, key=lambda c: (term_hits(c.text, rest or []) > 0, c.score, -c.n,
                                        -c.position)).n
    chosen: list[Candidate] = []
    for n in (best,):
        ranked = sorted((c for c in carrying if c.n == n),
                        key=lambda c: (-sum(mentions_topic(c.text, (s,)) for s in stems),
                                       -c.score, c.position))
        chosen += ranked[:1] + [c for c in ranked[1:MAX_SENTENCES_PER_ITEM] if c.hits >= 1.0
                                and not _points_less(question, c.text, ranked[0].text)]
    lines: list[str] = []
    cited: list[int] = []
    seen: set[str] = set()
    for c in sorted(chosen, key=lambda c: (c.n, c.position)):
        if c.text not in seen:
            seen.add(c.text)
            lines.append(with_marker(_without_comparisons(c.text, Slot.any, (), question), c.n))
            cited.append(c.n)
    return Draft(answer="\n".join(lines), cited=list(dict.fromkeys(cited)))


_A_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def _gives_a_figure(line: str) -> bool:
    """A digit besides a year's: "The … Act 2026 has received royal assent" gives none."""
    return bool(_A_DIGIT.search(_A_YEAR.sub("", line)))


def _points_less(question: str, line: str, first: str) -> bool:
    """Whether a second line gives another figure than the first with fewer of the question's
    words, and none the first lacks: "Visiting on the maternity unit remains 11am to 7pm"
    after "University Hospital has extended ward visiting hours to 2pm to 8pm", asked of
    the hospital's visiting hours, is another unit's."""
    if not (_gives_a_figure(line) and _gives_a_figure(first)):
        return False
    wanted = asked_words(question)
    return words_of(line) & wanted < words_of(first) & wanted


def _compare_lines(plan: ExternalQueryPlan, items: list[ExternalEvidence], chinese: bool,
                   asked: str) -> Draft:
    """One line per subject: the best sentence that names it, or an honest gap."""
    lines: list[str] = []
    cited: list[int] = []
    for subject in plan.subject_entities:
        terms = [(subject.lower(), 3.0), *grounded_terms(plan)]
        naming = [c for c in candidates(items, terms, chinese, asked)
                  if names(subject, c.text, plan.query_kind)
                  and not only_a_variant(subject, c.text, plan.query_kind)]
        if naming:
            best = _best(naming)
            lines.append(with_marker(f"{subject}：{best.text}" if chinese
                                     else f"{subject}: {best.text}", best.n))
            cited.append(best.n)
        else:
            lines.append(f"{subject}：来源中未找到相关信息" if chinese
                         else f"{subject}: not found in the sources")
    if not cited:
        return Draft(answer="", cited=[])  # no subject found: nothing to compare
    return Draft(answer="\n".join(lines), cited=sorted(set(cited)))


class ExtractiveComposer:
    """No model: the answer is quoted evidence."""

    name = "extractive"

    async def compose(self, question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence], *, timeout_s: float) -> Draft:
        return compose_extractive(question, plan, items)


EXTRACTIVE = ExtractiveComposer()
