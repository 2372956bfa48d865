"""Profile the worker of the `cpu` scenario (whole pipeline, instant fakes).

    python -m bench.profile [--questions N] [--out bench/results/cpu-profile.txt]

`--out *.pstats` uses cProfile and prints the functions with the most own time; anything else
uses pyinstrument (`pip install pyinstrument` into your venv; not a project dependency) and
writes its call tree there. The worker is profiled from "ready" to the last question.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import pstats
from pathlib import Path

from bench.scenarios.cpu import measure


def top_own_time(path: str, limit: int = 30) -> str:
    out = io.StringIO()
    stats = pstats.Stats(path, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    return out.getvalue()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--out", default="bench/results/cpu-profile.txt")
    parser.add_argument("--otel", action="store_true")
    parser.add_argument("--bootstrap", default=os.environ.get("PMFLOW_KAFKA_BOOTSTRAP",
                                                              "127.0.0.1:9092"))
    args = parser.parse_args()
    out = str(Path(args.out).resolve())
    result = asyncio.run(measure(args.bootstrap, args.questions, otel=args.otel, profile=out))
    print(json.dumps({k: result[k] for k in ("questions", "cpu_ms_per_question")}))
    print(top_own_time(out) if out.endswith(".pstats") else f"call tree: {out}")
