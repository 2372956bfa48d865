"""The user-facing text of every answer status that is not an answer, in Chinese or English."""

from __future__ import annotations

from pmflow_gateway.schemas import AnswerContract, AnswerStatus, ExternalQueryPlan, QueryKind


def is_english(locale: str) -> bool:
    return locale.lower().startswith("en")


def missing_detail(plan: ExternalQueryPlan, english: bool) -> str:
    """What a clarify reply asks for."""
    if plan.query_kind is QueryKind.weather and not plan.location_hint:
        return "the place (which city)" if english else "地点（哪个城市）"
    if plan.query_kind is QueryKind.market and not plan.subject_entities:
        return "which stock, index or currency" if english else "要查询的标的（股票、指数或币种）"
    if plan.answer_contract is AnswerContract.compare_with_sources:
        return "the things to compare" if english else "要比较的对象"
    return "what exactly to look up" if english else "要查询的具体对象"


def status_text(status: AnswerStatus, locale: str, *, missing: str | None = None,
                stale: bool = False, undated: bool = False) -> str:
    """The user-facing text of every status that is not an answer."""
    en = is_english(locale)
    if status is AnswerStatus.clarify:
        what = missing or ("what exactly to look up" if en else "要查询的具体对象")
        return (f"I need one more detail to look this up: {what}." if en
                else f"需要补充信息才能查询：{what}。")
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
    return ("The external query failed; please try again later." if en
            else "外部查询失败，请稍后再试。")


def single_source_note(locale: str) -> str:
    return ("(Only one source was found; this could not be cross-checked.)"
            if is_english(locale) else "（仅找到一个来源，未能多来源交叉验证。）")
