"""A configuration in a product's name: storage (256GB, 512G, 1TB), memory and storage (12+256,
12GB+256GB), a size (45mm, 13-inch, 6.7英寸), each spelt in more than one way."""

from __future__ import annotations

import functools
import re

SPEC = re.compile(
    r"(?<![\w.+])(\d{1,2})\s*(?:gb|g)?\s*\+\s*(\d{2,4})\s*(gb|g|tb|t)?(?![a-z])"
    r"|(?<![\w.])(\d+(?:\.\d+)?)\s*-?\s*(gb|g|tb|t|mm|inch|in|英寸|寸)(?![a-z])", re.IGNORECASE)
# Each unit, and every spelling of it a page may use.
_UNITS = {"g": r"(?:gb|g)", "t": r"(?:tb|t)", "mm": r"(?:mm|毫米)",
          "in": r"(?:-?\s*inch(?:es)?|\s*in\b|英寸|寸|\")"}
_UNIT_OF = {"gb": "g", "g": "g", "tb": "t", "t": "t", "mm": "mm", "inch": "in", "in": "in",
            "英寸": "in", "寸": "in"}


def _canonical(found: re.Match[str]) -> str:
    if found.group(1):
        return f"cfg{found.group(1)}g{found.group(2)}{_UNIT_OF[(found.group(3) or 'g').lower()]}"
    return f"cfg{found.group(4)}{_UNIT_OF[found.group(5).lower()]}"


def with_canonical_specs(text: str) -> str:
    """The text with each configuration written one way, as one word: "12GB+256GB" and "12+256"
    are both "cfg12g256g", "256 GB" and "256g" "cfg256g"."""
    return SPEC.sub(lambda m: f" {_canonical(m)} ", text) if SPEC.search(text) else text


@functools.lru_cache(maxsize=256)
def spec_pattern(spec: str) -> re.Pattern[str]:
    """Where a text gives the configuration `spec` (one `SPEC` match), in any spelling."""
    found = SPEC.fullmatch(spec.strip())
    if found is None:
        raise ValueError(f"not a configuration: {spec!r}")
    if found.group(1):
        storage_unit = _UNITS[_UNIT_OF[(found.group(3) or "g").lower()]]
        return re.compile(rf"(?<![\d.]){found.group(1)}\s*(?:gb|g)?\s*\+\s*{found.group(2)}\s*"
                          rf"{storage_unit}?(?![a-z\d])", re.IGNORECASE)
    unit = _UNITS[_UNIT_OF[found.group(5).lower()]]
    return re.compile(rf"(?<![\d.]){re.escape(found.group(4))}\s*-?\s*{unit}(?![a-z])",
                      re.IGNORECASE)
