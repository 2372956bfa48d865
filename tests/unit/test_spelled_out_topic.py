"""A question that spells out what it asks in two words or more is not answered by a line that
says none of them, whatever name the two share: a name no list knows is read as a subject,
not as a place, and a line about the same town's school or festival is about something else.
A game's result is the one thing asked that its line need not name. The names are invented."""

from __future__ import annotations

import pytest

from pmflow_gateway.handlers.composers import compose_extractive
from pmflow_gateway.handlers.planners.rules import plan_by_rules
from tests.fakes import evidence


def answer(question: str, *pages: tuple[str, str]) -> str:
    plan = plan_by_rules(question, locale="en-US")
    items = [evidence(f"https://news{n}.example/{n}", body, title=title)
             for n, (title, body) in enumerate(pages, start=1)]
    return compose_extractive(question, plan, items).answer


@pytest.mark.parametrize(("question", "page"), [
    ("what's the parking permit fee in quellmoor",
     ("Quellmoor library reopens", "Quellmoor's library reopens on Monday after a $2.4 million "
      "refurbishment.")),
    ("brantwick ferry strike dates",
     ("Brantwick bus drivers to walk out", "Drivers at the Brantwick bus depot will walk out on "
      "Friday 11 June after rejecting a pay offer.")),
])
def test_a_line_that_names_none_of_the_asked_words_does_not_answer(
        question: str, page: tuple[str, str]) -> None:
    assert answer(question, page) == ""


def test_a_line_that_names_one_of_them_does() -> None:
    reply = answer("what's the parking permit fee in quellmoor",
                   ("Quellmoor council sets fees", "A resident parking permit in Quellmoor "
                    "costs $45 a year from July 1."))
    assert "$45" in reply


def test_a_result_needs_no_word_of_the_question() -> None:
    reply = answer("Orrinford Rovers result last game",
                   ("Orrinford Rovers 2-1 Tallow Vale", "Orrinford Rovers beat Tallow Vale 2-1 "
                    "at Mill Lane on Saturday."))
    assert "2-1" in reply
