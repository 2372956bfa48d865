"""The JSON Schema of every event, generated from the models and kept in `schemas/json/`.

`python -m pmflow_gateway.schemas.export` rewrites them; a test fails when they drift.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pmflow_gateway.schemas.events import STAGE_OUTPUTS

SCHEMA_DIR = Path(__file__).parent / "json"


def event_schemas() -> dict[str, dict[str, Any]]:
    return {name: model.model_json_schema(mode="serialization")
            for name, model in STAGE_OUTPUTS.items()}


def rendered() -> dict[str, bytes]:
    """File name -> the bytes it should hold."""
    return {f"{name}.json": orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
            + b"\n" for name, schema in event_schemas().items()}


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in rendered().items():
        path = directory / name
        path.write_bytes(content)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for path in write():
        print(path)
