"""Answer slots: the kind of value a question asks for, and which sentences carry one."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.slots import Slot, asked_slot, fills, proper_names


@pytest.mark.parametrize(("question", "slot"), [
    ("how much does a ticket to the Orvik ferry cost", Slot.amount),
    ("芒街口岸今天人民币兑越南盾汇率多少", Slot.amount),
    ("where did the OMXS30 close yesterday", Slot.amount),
    ("how many cabins does the new Saltmarsh ferry have", Slot.quantity),
    ("这次地震造成多少人受伤", Slot.quantity),
    ("what percentage of voters backed the levy", Slot.share),
    ("Dalby Rovers v Kinsale Town score", Slot.score),
    ("what time does the parade start", Slot.time),
    ("when does the Vellmar bypass open", Slot.date),
    ("新赛季揭幕战在哪里举行", Slot.place),
    ("who coaches the Tarnow handball team", Slot.person),
    ("谁赢得了本届马拉松冠军", Slot.person),
    ("where can I watch the final", Slot.any),
    ("新剧在哪个平台播出", Slot.any),
    ("latest on the Oakbay port strike", Slot.any),
    ("which law firm advised the Brenholt buyout", Slot.name),
    ("names of the Quarrow council members charged", Slot.name),
    ("新航线由哪家航空公司运营", Slot.name),
    ("哪家医院接收了伤者", Slot.name),
    ("how long did the Vessby recount take", Slot.duration),
    ("新大桥通车后过江要多久", Slot.duration),
    ("Torvik GT horsepower", Slot.amount),
    ("Aldane S4 battery capacity", Slot.amount),
    ("what battery life did the Aldane S4 get in testing", Slot.duration),
    ("what is the maximum penalty under the Quarrow Data Act", Slot.amount),
])
def test_the_question_says_what_kind_of_value_answers_it(question: str, slot: Slot) -> None:
    assert asked_slot(question) is slot


@pytest.mark.parametrize(("slot", "sentence", "filled"), [
    (Slot.amount, "Check back later for the closing price.", False),
    (Slot.amount, "December 4, 2026", False),
    (Slot.amount, "Shares of Orvik Lines closed at 41.20 crowns.", True),
    (Slot.amount, "The ticket costs €38 for adults.", True),
    (Slot.amount, "期货主力合约午盘收涨，市场交投活跃。", False),
    (Slot.amount, "主力合约收报3.215万元/吨。", True),
    (Slot.amount, "中间价报0.2043。", True),
    (Slot.quantity, "The recall was announced on 2026-11-30.", False),
    (Slot.quantity, "About 4,200 bicycles are affected.", True),
    (Slot.quantity, "共有十二人受伤。", True),
    (Slot.quantity, "Sign up now and save $5 a month.", False),
    (Slot.share, "Turnout rose sharply.", False),
    (Slot.share, "The levy passed with 61.4% of the vote.", True),
    (Slot.score, "Kick-off is at 19:45 on 2026-12-05.", False),
    (Slot.score, "Dalby Rovers beat Kinsale Town 3-1.", True),
    (Slot.score, "主队以2比0取胜。", True),
    (Slot.time, "The parade will start at 10:30am.", True),
    (Slot.time, "The parade will be long.", False),
    (Slot.date, "The bypass opens on March 12.", True),
    (Slot.date, "The bypass is finished.", False),
    (Slot.place, "揭幕战将在临港国际赛车场举行。", True),
    (Slot.place, "全年共设8站。", False),
    (Slot.person, "The club confirmed the appointment.", False),
    (Slot.person, "The club named Ilse Brandvold as head coach.", True),
    (Slot.name, "The firm advised on the buyout.", False),
    (Slot.name, "The buyout was advised by Harrow & Lisk of Leeds.", True),
    (Slot.name, "伤者被送往市第一人民医院救治。", True),
    (Slot.duration, "The recount took longer than expected.", False),
    (Slot.duration, "The recount took 11 days.", True),
    (Slot.duration, "过江只需8分钟。", True),
    (Slot.amount, "The Torvik GT is the brand's most powerful car.", False),
    (Slot.amount, "Its twin motors make 512 horsepower.", True),
    (Slot.amount, "The pack holds 94 kWh.", True),
    (Slot.amount, "The founder has run the firm for 12 years.", False),
])
def test_a_sentence_fills_a_slot_only_with_a_value_of_its_kind(
        slot: Slot, sentence: str, filled: bool) -> None:
    assert fills(slot, sentence) is filled


def test_the_asked_names_never_answer_who() -> None:
    sentence = "Tarnow Handball reported a record season."
    assert fills(Slot.person, sentence, ("Tarnow Handball",)) is False
    assert proper_names("Kevin Barlow said the deal closed in October.") == ["Kevin Barlow"]


def test_a_days_forecast_in_two_sentences_is_quoted_whole() -> None:
    from pmflow_gateway.handlers.composers import compose_extractive
    from pmflow_gateway.handlers.planners.rules import plan_by_rules
    from tests.fakes import evidence

    question = "Whanganui weather tomorrow"
    plan = plan_by_rules(question, locale="en-US")
    page = ("Whanganui: Tomorrow, cloudy with showers. High 17°C, low 9°C. "
            "Wellington: Tomorrow, windy. High 15°C.")
    draft = compose_extractive(question, plan, [evidence("https://wx.example/wh", page,
                                                         title="Whanganui forecast")])
    assert "High 17°C, low 9°C." in draft.answer
    assert "Wellington" not in draft.answer and "High 15°C" not in draft.answer
