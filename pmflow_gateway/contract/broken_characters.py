"""JSON that carries half a surrogate pair (`\\ud800`): allowed by JSON's grammar, held by no
text. A question cut inside an emoji has one; it is read with U+FFFD in the broken one's
place, on the Kafka topics and from the agent tools' clients alike."""

from __future__ import annotations

import json
from typing import Any

import orjson


def lone_surrogates_replaced(value: bytes) -> bytes | None:
    """`value` with every escape that is half a surrogate pair replaced by U+FFFD; None when
    there was none, or `value` is not JSON, or two object keys differ only in such escapes
    (which one is meant cannot be known)."""
    try:
        doc = json.loads(value.decode(json.detect_encoding(value), "surrogatepass"))
        repaired = _well_formed(doc)
    except (ValueError, RecursionError):
        return None
    return orjson.dumps(repaired) if repaired != doc else None


def _well_formed(doc: Any) -> Any:
    if isinstance(doc, str):
        return doc.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(doc, list):
        return [_well_formed(v) for v in doc]
    if isinstance(doc, dict):
        repaired = {_well_formed(k): _well_formed(v) for k, v in doc.items()}
        if len(repaired) != len(doc):
            raise ValueError("two keys differ only in broken characters: ambiguous")
        return repaired
    return doc
