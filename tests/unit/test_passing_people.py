"""A person the gazetteer does not know is a page's subject only when its title or first
sentence names them: a launch page that thanks them among others is not news about them."""

from __future__ import annotations

from pmflow_gateway.contract.relevance import off_topic
from pmflow_gateway.schemas import AnswerContract, ExternalQueryPlan, QueryKind


def _news(subject: str) -> ExternalQueryPlan:
    return ExternalQueryPlan(query_kind=QueryKind.news,
                             answer_contract=AnswerContract.summary_with_sources,
                             topic=f"{subject}最近有什么消息", subject_entities=[subject],
                             search_queries=[f"{subject} 消息"])


def test_a_person_named_only_in_passing_is_not_the_pages_subject() -> None:
    passing = "小鹏P7正式上市\n小鹏P7今日上市，售价20万起。发布会上，何小鹏等多位嘉宾致辞。"
    why = off_topic(_news("王传福"), passing.replace("何小鹏", "王传福"))
    assert why is not None and "title or lead" in why
    assert off_topic(_news("王传福"), "王传福出席论坛\n他谈到了电池技术。") is None
    assert off_topic(_news("王传福"), "新能源论坛开幕\n王传福在论坛上谈到了电池技术。") is None
