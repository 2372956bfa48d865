"""Verdicts kept once worked out (`contract/judged.py`), and the checks that keep them."""

from __future__ import annotations

from pmflow_gateway.contract.judged import Judged, of_the_last
from pmflow_gateway.contract.relevance import off_topic
from pmflow_gateway.contract.verify import verify_draft
from pmflow_gateway.ports import Draft
from pmflow_gateway.schemas import ExternalQueryPlan
from tests.support.builders import weather_plan


def test_a_verdict_is_worked_out_once_per_content() -> None:
    judged: Judged[str] = Judged(maxsize=8)
    calls: list[str] = []

    def work(verdict: str) -> str:
        calls.append(verdict)
        return verdict

    assert judged.get(("plan", "text"), lambda: work("first")) == "first"
    assert judged.get(("plan", "text"), lambda: work("second")) == "first"
    # The same characters split another way are other content, not the same key.
    assert judged.get(("plan", "te", "xt"), lambda: work("third")) == "third"
    assert judged.get(("plantext",), lambda: work("fourth")) == "fourth"
    assert calls == ["first", "third", "fourth"]


def test_the_oldest_verdict_goes_past_the_bound() -> None:
    judged: Judged[int] = Judged(maxsize=3)
    for n in range(5):
        judged.get((str(n),), lambda n=n: n)  # type: ignore[misc]
    assert judged.get(("0",), lambda: -1) == -1  # forgotten, worked out again
    assert judged.get(("4",), lambda: -1) == 4


def test_off_topic_judges_by_content_not_by_object() -> None:
    page = "Guangzhou: cloudy, 18 to 25 degrees for the next five days."
    assert off_topic(weather_plan(), page) is None
    assert off_topic(weather_plan(location_hint="Shenzhen"), page) is not None
    assert off_topic(weather_plan(), page) is None


def test_a_kept_draft_verdict_is_not_shared_with_its_caller() -> None:
    urls = ["https://s1.example.org/p"]
    draft = Draft(answer="广州多云 [7]")
    first = verify_draft(draft, urls)
    first.append("a caller's own addition")
    assert verify_draft(draft, urls) == ["citation [7] does not resolve to evidence of this "
                                          "execution"]


def test_a_function_of_the_plan_is_worked_out_once_per_plan_object() -> None:
    calls: list[str | None] = []

    @of_the_last
    def place(plan: ExternalQueryPlan) -> str | None:
        calls.append(plan.location_hint)
        return plan.location_hint

    guangzhou, shenzhen = weather_plan(), weather_plan(location_hint="Shenzhen")
    assert [place(guangzhou), place(guangzhou), place(shenzhen), place(guangzhou)] == [
        guangzhou.location_hint, guangzhou.location_hint, "Shenzhen", guangzhou.location_hint]
    # Every sentence of one plan asks once; another plan, even an equal one, asks again.
    assert calls == [guangzhou.location_hint, "Shenzhen", guangzhou.location_hint]
    place(weather_plan())
    assert len(calls) == 4
