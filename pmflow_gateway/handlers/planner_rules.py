"""The rules planner: the default planner, no model needed (zh and en)."""

from __future__ import annotations

import re

from pmflow_gateway.schemas import (
    AnswerContract,
    ExternalQueryPlan,
    PlannerInfo,
    QueryKind,
    RouteDecided,
)

_KIND_WORDS: list[tuple[QueryKind, tuple[str, ...]]] = [
    (QueryKind.weather, ("天气", "气温", "下雨", "降雨", "weather", "forecast", "temperature", "rain")),
    (QueryKind.market, ("股价", "汇率", "金价", "指数", "stock", "price of", "exchange rate", "share price")),
    (QueryKind.model, ("模型", "大模型", "llm", "gpt", "model release", "claude", "gemini", "qwen")),
    (QueryKind.news, ("新闻", "消息", "发生了什么", "news", "headline", "happened")),
    (QueryKind.company, ("公司", "财报", "融资", "company", "earnings", "ceo", "funding")),
]
_FRESH_WORDS = ("今天", "最新", "最近", "现在", "未来", "今晚", "明天", "today", "latest", "now",
                "current", "tonight", "tomorrow", "recent")
_CITIES = ("广州", "北京", "上海", "深圳", "杭州", "成都", "武汉", "南京", "西安", "重庆",
           "London", "Paris", "Tokyo", "New York", "Singapore", "Berlin", "Sydney")
_TIME_RE = re.compile(r"(未来\s*\d+\s*天|今天|今晚|明天|后天|本周|下周|周末|最近|截至今天|"
                      r"today|tonight|tomorrow|this weekend|next \d+ days|now)", re.IGNORECASE)


class RulesPlanner:
    """Keyword and gazetteer rules; deterministic and fast."""

    async def plan(self, route: RouteDecided) -> tuple[ExternalQueryPlan, PlannerInfo]:
        return plan_by_rules(route.question, needs_freshness=route.query_profile.needs_freshness), \
            PlannerInfo(mode="rules")


def plan_by_rules(question: str, *, needs_freshness: bool = False) -> ExternalQueryPlan:
    text = " ".join(question.split())
    lower = text.lower()
    kind = next((k for k, words in _KIND_WORDS if any(w in lower for w in words)),
                QueryKind.generic_web)
    location = next((c for c in _CITIES if c.lower() in lower), None)
    time_match = _TIME_RE.search(text)
    time_hint = re.sub(r"\s+", "", time_match.group(0)) if time_match else None
    if kind is QueryKind.weather and location is None:
        contract = AnswerContract.clarify
    else:
        contract = AnswerContract.summary_with_sources
    core = re.sub(r"(帮我|请|看看|查一下|查查|如何|怎么样|吗|呢|？|\?)", " ", text)
    core = " ".join(core.split())
    queries = [core] if core else []
    return ExternalQueryPlan(
        query_kind=kind,
        answer_contract=contract,
        freshness_required=needs_freshness or any(w in lower for w in _FRESH_WORDS),
        topic=core or text,
        subject_entities=[location] if location else [],
        location_hint=location,
        time_range_hint=time_hint,
        search_queries=queries,
        clarify_on_ambiguity=contract is AnswerContract.clarify,
    )
