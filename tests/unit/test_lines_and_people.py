"""Which lines of a page can answer: a news dateline never does, a forecast's lines under a day
heading are that day's, and "who is the prosecutor" is answered by a person's name, not a
country's or a firm's. The names here are invented."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.slots import Slot, fills
from pmflow_gateway.handlers.composers import _only_a_dateline, compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from tests.fakes import evidence

# ---------------------------------------------------------------- datelines


@pytest.mark.parametrize("line", [
    "ORMSBY, Pa. — Saturday, Nov. 28, 2026.",
    "LANTERN BAY, Maine — Forecast updated 3:45 p.m.",
    "KESSEL (AP) — Tuesday.",
    "Central, Friday, November 27.",
    "Updated 9:30 a.m. ET.",
])
def test_a_line_that_only_dates_its_page_is_a_dateline(line: str) -> None:
    assert _only_a_dateline(line)


@pytest.mark.parametrize("line", [
    "ORMSBY, Pa. — Bus drivers will strike on Monday, Dec. 7.",
    "Friday, November 27.",  # no dateline's place, zone or "updated": a day, maybe the answer
    "The forecast was updated Friday.",
    "Dec. 3 marks the date.",
])
def test_a_line_that_says_something_is_no_dateline(line: str) -> None:
    assert not _only_a_dateline(line)


# ---------------------------------------------------------------- a forecast's day headings


def test_the_lines_under_a_day_heading_are_that_days() -> None:
    question = "lantern bay maine high tomorrow"  # asked on Wednesday: tomorrow is Thursday
    plan = plan_by_rules(question, locale="en-US")
    forecast = evidence(
        "https://wx.example/lantern-bay",
        "Tonight: clouds thicken, low 27°F. Thursday: rain developing after 10 a.m. High 44°F. "
        "Chance of rain 70%. Thursday night: rain ending, low 33°F. Friday: colder, high 31°F.",
        title="Lantern Bay, Maine forecast")
    schools = evidence(
        "https://news.example/lantern-bay-schools",
        "Lantern Bay schools will dismiss students early on Thursday because of the rain.",
        title="Lantern Bay schools to dismiss early Thursday")
    answer = compose_extractive(question, plan, [forecast, schools]).answer
    assert "High 44°F" in answer
    assert "31°F" not in answer and "27°F" not in answer


# ---------------------------------------------------------------- who, asked by a person's role


PROSECUTOR = "who is the danish prosecutor who dropped the halvorsen fraud case"


@pytest.mark.parametrize("line", [
    "Deputy chief prosecutor Mette-Lise Aaberg said the evidence had weakened.",
    "The decision was taken by Dr Aaberg on Tuesday.",
])
def test_a_person_named_answers_who_holds_a_role(line: str) -> None:
    assert fills(Slot.person, line, (), PROSECUTOR)


@pytest.mark.parametrize("line", [
    # A country, a firm and the asked person are no answer.
    "Denmark has dropped its case against Brightwell co-founder Anders Halvorsen.",
    # Nor is an institution named in two words.
    "Danish prosecutors reopened it after he left the Ecuadorean Embassy in London.",
])
def test_no_person_named_answers_no_who(line: str) -> None:
    assert not fills(Slot.person, line, (), PROSECUTOR)


def test_the_role_asked_is_not_part_of_the_name() -> None:
    question = "Who is the governor of the Bank of Tessaly?"
    assert fills(Slot.person, "Governor Elsa Varnholt said inflation was too high.", (), question)


def test_who_won_is_answered_by_a_team_or_a_country() -> None:
    assert fills(Slot.person, "Spain won the cup, beating Brazil 2-1.", (), "who won the cup")
