"""The user-facing text of every answer status that is not an answer, in Chinese or English."""

from __future__ import annotations

import re

from pmflow_gateway.contract.text import CJK
from pmflow_gateway.schemas import AnswerContract, AnswerStatus, ExternalQueryPlan, QueryKind


def is_english(locale: str) -> bool:
    return locale.lower().startswith("en")


def reply_locale(question: str, locale: str) -> str:
    """The reply speaks the question's language: the event's locale is a default (a CLI or a
    user setting), the words the user typed are what they read."""
    if CJK.search(question):
        return locale if locale.lower().startswith("zh") else "zh-CN"
    if re.search(r"[A-Za-z]{2,}", question):
        return locale if is_english(locale) else "en"
    return locale


def missing_detail(plan: ExternalQueryPlan, english: bool) -> str:
    """What a clarify reply asks for."""
    if plan.query_kind is QueryKind.weather and not plan.location_hint:
        return "the place (which city)" if english else "地点（哪个城市）"
    if plan.query_kind is QueryKind.market and not plan.subject_entities:
        return "which stock, index or currency" if english else "要查询的标的（股票、指数或币种）"
    if plan.answer_contract is AnswerContract.compare_with_sources:
        return "the things to compare" if english else "要比较的对象"
    if not plan.subject_entities and not plan.location_hint:
        return ("which one you mean (the question does not name the team, company, product or "
                "place it asks about)" if english
                else "具体指哪一个（问题里没有说出所问的球队、公司、产品或地点）")
    return "what exactly to look up" if english else "要查询的具体对象"


AMBIGUOUS = "ambiguous place: "
AMBIGUOUS_SUBJECT = "ambiguous subject: "
NOTHING_ABOUT_IT = "no evidence about what was asked"


def ambiguity_reason(place: str, readings: list[str]) -> str:
    return f"{AMBIGUOUS}{place} = {' | '.join(readings)}"


def subject_ambiguity_reason(word: str, company: str) -> str:
    return f"{AMBIGUOUS_SUBJECT}{word} = {company} | {word}"


def firm_ambiguity_reason(name: str, firms: list[str]) -> str:
    return f"{AMBIGUOUS_SUBJECT}{name} = {' | '.join(firms)}"


def which_one(reason: str | None, english: bool) -> str | None:
    """The clarify question for an ambiguous place or subject, rebuilt from the answer's
    reason."""
    if reason and reason.startswith(AMBIGUOUS_SUBJECT):
        word, _, readings = reason.removeprefix(AMBIGUOUS_SUBJECT).partition(" = ")
        options = [r for r in readings.split(" | ") if r][:4]
        if options[-1:] != [word]:  # firms of one name: 澄峰科技 or 澄峰电气
            return (f"which {word} you mean ({' or '.join(options)})" if english
                    else f"指的是哪个{word}（{' 还是 '.join(options)}）")
        company = options[0]
        return (f"which {word} you mean ({company}, or the everyday word {word})" if english
                else f"指的是哪个{word}（{company}，还是日常所说的{word}）")
    if not reason or not reason.startswith(AMBIGUOUS):
        return None
    place, _, readings = reason.removeprefix(AMBIGUOUS).partition(" = ")
    options = [r for r in readings.split(" | ") if r][:4]
    if english:
        return f"which {place} you mean ({' or '.join(f'{place}, {r}' for r in options)})"
    return f"指的是哪个{place}（{' 还是 '.join(f'{r}的{place}' for r in options)}）"


def status_text(status: AnswerStatus, locale: str, *, missing: str | None = None,
                stale: bool = False, undated: bool = False, off_topic: bool = False) -> str:
    """The user-facing text of every status that is not an answer."""
    en = is_english(locale)
    if status is AnswerStatus.clarify:
        what = missing or ("what exactly to look up" if en else "要查询的具体对象")
        return (f"I need one more detail to look this up: {what}." if en
                else f"需要补充信息才能查询：{what}。")
    if status is AnswerStatus.freshness_guard and off_topic:
        return ("Not enough reliable external evidence about what was asked was found, so no "
                "answer is given rather than one about something else." if en
                else "未找到与所问内容相符的可靠外部资料，为避免答非所问，暂不作答。")
    if status is AnswerStatus.freshness_guard:
        if en:
            tail = (" (what was found is out of date)" if stale
                    else " (what was found is undated)" if undated else "")
            return (f"No reliable real-time external data was found{tail}, so no answer is "
                    "given rather than a guess.")
        tail = ("（找到的资料已超出时效）" if stale
                else "（找到的资料均未注明日期）" if undated else "")
        return f"当前未找到可靠的实时外部数据{tail}，为避免误导，暂不作答。"
    if status is AnswerStatus.rejected:
        return ("The answer did not pass source verification and was withheld." if en
                else "回答未通过来源校验，已拦截，未予发送。")
    if status is AnswerStatus.timed_out:
        return ("No external source could be asked in time for this question (the service "
                "was busy or the time allowed was too short), so there is no answer; please "
                "ask again." if en
                else "本次未能在时限内查询任何外部来源（系统繁忙或时限过短），"
                "暂无回答，请稍后再问。")
    if status is AnswerStatus.refused:
        return _UNKNOWN_POLICY[0] if en else _UNKNOWN_POLICY[1]
    return ("The external query failed; please try again later." if en
            else "外部查询失败，请稍后再试。")


# What the user is told when the routing policy keeps a question from external sources, by
# the table row that decided (`contract/routing.py`); English, then Chinese.
_POLICY_TEXTS: dict[str, tuple[str, str]] = {
    "internal_only_policy": (
        "This question may be answered from internal data only, so the external query "
        "gateway searched nothing outside and sent nothing about it to any external source.",
        "这个问题只允许使用内部资料作答，外部实时查询没有对外检索，也没有把问题内容发送给任何外部来源。"),
    "internal_reply": (
        "This question expects an answer from internal data, so the external query gateway "
        "searched nothing outside and sent nothing about it to any external source.",
        "这个问题需要基于内部资料作答，外部实时查询没有对外检索，也没有把问题内容发送给任何外部来源。"),
    "private_context": (
        "This question needs private context, which the external query gateway never sends "
        "out: nothing was searched and nothing about it reached any external source.",
        "这个问题需要内部上下文，外部实时查询不会把内部信息发往外部：没有对外检索，问题内容也未发送给任何外部来源。"),
    "private_context_unsure": (
        "This question seems to need internal data, which the external query gateway never "
        "searches or sends out. If you want public information instead, say what exactly to "
        "look up.",
        "这个问题似乎需要内部资料，外部实时查询不会检索或外发内部信息。如果想查的是公开信息，请说明具体要查什么。"),
}
_UNKNOWN_POLICY = (
    "The route decision carries a routing value this gateway does not know, so to be safe "
    "nothing was searched and nothing about the question was sent to any external source.",
    "路由决策中有本网关无法识别的取值，为安全起见没有对外检索，问题内容也未发送给任何外部来源。")


def policy_text(rule: str, locale: str) -> str | None:
    """Why the routing policy kept the question from external sources, for the user; None
    for a row whose reply is the status's own text (a plain clarification)."""
    texts = _POLICY_TEXTS.get(rule)
    if texts is None:
        return None
    return texts[0] if is_english(locale) else texts[1]


def single_source_note(locale: str, *, disagree: bool = False) -> str:
    """The note under an answer whose plan wanted several sources that it did not get."""
    if disagree:
        return ("(The sources give different figures; this could not be cross-checked.)"
                if is_english(locale) else "（各来源给出的数字不一致，未能多来源交叉验证。）")
    return ("(Only one source was found; this could not be cross-checked.)"
            if is_english(locale) else "（仅找到一个来源，未能多来源交叉验证。）")
