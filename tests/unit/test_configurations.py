"""A product asked with its configuration (storage, memory and storage, a size) is named by a
sentence that names the product and gives that configuration, however either spells it; a
list item is chosen by its configuration the same way."""

from __future__ import annotations

import pytest

from pmflow_gateway.contract.qualifiers import item_asked
from pmflow_gateway.contract.relevance import names
from pmflow_gateway.contract.specs import spec_pattern, with_canonical_specs

LAUNCH = ("星岚X9提供两个版本:12GB+256GB售价3999元,16GB+512GB售价4599元;"
          "星岚X9 Pro仅提供16GB+512GB和16GB+1TB两个版本,售价分别为5299元和5999元。")


@pytest.mark.parametrize(("name", "text"), [
    ("nexlo fathom 9 256gb", "The Nexlo Fathom 9 with 256GB of storage is priced at $899."),
    ("x9 12+256", LAUNCH),
    ("X7 Ultra 512G", "澄岚X7 Ultra 512GB版本售价6999元。"),
    ("Corvo Tab 11-inch", "The Corvo Tab comes in an 11 inch model at $329."),
])
def test_named_with_its_configuration(name: str, text: str) -> None:
    assert names(name, text)


@pytest.mark.parametrize(("name", "text"), [
    # Another configuration of the same product.
    ("nexlo fathom 9 256gb", "The standard Nexlo Fathom 9 with 128GB costs $799."),
    # The configuration is another model's, in another sentence.
    ("x9 pro 12+256", LAUNCH),
    # 45mm is not 4.5mm, nor 145mm.
    ("Veyra Pulse 3 45mm", "The Veyra Pulse 3 is offered at 145mm and 4.5mm."),
])
def test_not_named_with_another_configuration(name: str, text: str) -> None:
    assert not names(name, text)


def test_one_spelling_for_every_way_of_writing_it() -> None:
    assert with_canonical_specs("12+256").split() == with_canonical_specs("12GB + 256GB").split()
    assert with_canonical_specs("256 GB").split() == with_canonical_specs("256g").split()
    assert spec_pattern("6.7英寸").search("屏幕为6.7寸")
    with pytest.raises(ValueError):
        spec_pattern("X9")


def test_the_list_item_of_the_asked_configuration() -> None:
    line = "星岚X9提供两个版本:12GB+256GB售价3999元,16GB+512GB售价4599元"
    assert item_asked("星岚x9 12+256多少钱", line) == "星岚X9提供两个版本:12GB+256GB售价3999元。"
    assert item_asked("星岚x9 16+512多少钱", line) == "星岚X9提供两个版本:16GB+512GB售价4599元。"
