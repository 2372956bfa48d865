"""The README's results table, from the last saved full run of each scenario.

`python -m bench.table` prints it (markdown); `python -m bench && python -m bench.table`
measures and tabulates in one go.
"""

from __future__ import annotations

import json
from typing import Any

from bench.report import RESULTS


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def rows() -> list[tuple[str, str, str, str, str, str]]:
    out: list[tuple[str, str, str, str, str, str]] = []
    if hop := _load("hop"):
        r = hop["results"]
        out.append(("hop p50 (one stage hop vs raw aiokafka round trip)",
                    f"{r['ours_ms']['p50']:.2f} ms", f"{r['raw_ms']['p50']:.2f} ms",
                    f"{r['ratio']['p50']:.2f}×", "≤ 2×", "yes" if hop["target"]["met"] else "no"))
    if slow := _load("slow_stage"):
        r = slow["results"]
        out.append(("evidence stage, 500 ms fake adapter, 3 partitions",
                    f"{r['ours']['questions_per_s']:.0f} q/s",
                    f"FastStream default {r['faststream_default']['questions_per_s']:.1f} q/s",
                    f"{r['ratio_vs_default']:.0f}×", "≥ 100 q/s, at-least-once",
                    "yes" if slow["target"]["met"] and r["ours"]["committed_equals_end"] else "no"))
        if real := r.get("ours_real_mcp_server"):
            out.append(("evidence stage, our MCP server --delay-ms 500",
                        f"{real['questions_per_s']:.0f} q/s", "", "", "≥ 100 q/s",
                        "yes" if real["questions_per_s"] >= 100 else "no"))
    if cpu := _load("cpu"):
        r = cpu["results"]
        out.append(("CPU per question, all stages, I/O excluded",
                    f"{r['otel_off']['cpu_ms_per_question']:.2f} ms",
                    f"tracing on {r['otel_on']['cpu_ms_per_question']:.2f} ms",
                    f"{r['otel_cost_ratio']:.2f}× (on/off)", "≤ 1.5 ms",
                    "yes" if cpu["target"]["met"] else "no"))
    if memory := _load("memory"):
        r = memory["results"]
        out.append(("RSS growth over 20,000 questions after warm-up",
                    f"+{r['growth_pct']:.1f} %", f"{r['rss_after_warmup_kb'] // 1024} MB",
                    "", "≤ +10 %", "yes" if memory["target"]["met"] else "no"))
    if latency := _load("latency"):
        e = latency["results"]["end_to_end_ms"]
        out.append(("end-to-end latency at 50 q/s (p50 / p95 / p99)",
                    f"{e['p50']:.1f} / {e['p95']:.1f} / {e['p99']:.1f} ms", "", "", "", ""))
    return out


def markdown() -> str:
    lines = ["| scenario | ours | baseline | ratio | target | met |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
