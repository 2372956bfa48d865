"""Per-field accuracy of the rules planner on questions written the way users ask them.

The first 108 questions of tests/data/planner_labelled.jsonl were written before the rules.
Three more sets (32, 32, 24) were then written blind, scored once before the rules were
adjusted to them, and folded in afterwards. Their first-pass accuracy, the honest estimate
for new questions, was (round 1 / 2 / 3):

    query_kind        81% / 75% / 88%     answer_contract        88% / 88% / 75%
    freshness         97% / 100% / 100%   location_hint         100% / 100% / 96%
    time_range_hint  100% / 100% / 100%   subject_entities       91% / 97% / 96%
    multi-source     100% / 97% / 100%

Names compare case-insensitively and in any order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pmflow_gateway.handlers.planners.rules import plan_by_rules

LABELLED = Path(__file__).parent.parent / "data" / "planner_labelled.jsonl"
FIELDS = ("query_kind", "answer_contract", "freshness_required", "location_hint",
          "time_range_hint", "subject_entities", "requires_multi_source")
MIN_ACCURACY = 0.95


def _same(field: str, want: Any, got: Any) -> bool:
    if field == "subject_entities":
        return sorted(e.casefold() for e in want) == sorted(e.casefold() for e in got)
    return bool(want == got)


def _score() -> tuple[dict[str, float], list[str], int]:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    right = dict.fromkeys(FIELDS, 0)
    misses: list[str] = []
    for row in rows:
        got = plan_by_rules(row["question"], locale=row["locale"],
                            needs_freshness=row["needs_freshness"]).model_dump(mode="json")
        for field in FIELDS:
            if _same(field, row["expect"][field], got[field]):
                right[field] += 1
            else:
                misses.append(f"{field}: {row['question']!r} want {row['expect'][field]!r}"
                              f" got {got[field]!r}")
    return {f: right[f] / len(rows) for f in FIELDS}, misses, len(rows)


def test_the_labelled_set_is_big_and_varied() -> None:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 90
    kinds = {r["expect"]["query_kind"] for r in rows}
    contracts = {r["expect"]["answer_contract"] for r in rows}
    assert kinds == {"weather", "news", "company", "model", "market", "generic_web", "unknown"}
    assert contracts == {"direct_fact", "summary_with_sources", "compare_with_sources", "clarify"}
    assert {r["locale"] for r in rows} == {"zh-CN", "en-US"}


def test_every_field_is_right_at_least_95_percent_of_the_time() -> None:
    accuracy, misses, total = _score()
    print(f"\nrules planner, {total} labelled questions")
    print(f"{'field':<24}{'accuracy':>9}")
    for field, value in accuracy.items():
        print(f"{field:<24}{value:>9.1%}")
    for miss in misses:
        print("  miss", miss)
    failing = {f: v for f, v in accuracy.items() if v < MIN_ACCURACY}
    if failing:
        pytest.fail(f"fields under {MIN_ACCURACY:.0%}: {failing}\n" + "\n".join(misses))
