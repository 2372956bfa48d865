"""A RouteDecided exactly as PMFlow publishes it (a weather question with one private
source): accepted as is, used by the tests, the benchmarks and the README."""

from __future__ import annotations

from typing import Any

ROUTE_DECIDED: dict[str, Any] = {
    "event_id": "5b0c2f4e-0d7e-4a36-9d1e-8f3f3a8f2c11", "question_id": "q-20261202-0001",
    "tenant_id": "acme", "occurred_at": "2026-12-02T08:00:00+00:00", "schema_version": 1,
    "question": "帮我看看未来 5 天的广州天气如何", "locale": "zh-CN", "thread_id": "t-42",
    "route_mode": "external", "effective_source_policy": "external_only",
    "decision_origin": "probe", "reply_contract": "external_realtime",
    "query_profile": {"needs_private_context": False, "needs_freshness": True,
                      "referenced_objects": ["weather"]},
    "probe_snapshot": {},
    "sources": [{"source_type": "feishu", "source_label": "Feishu history",
                 "title": "群聊记录", "target_url": None, "snippet": "上周广州下雨"}],
}
