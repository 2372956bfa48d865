"""The results table, from the last saved full run of each scenario (clean checkouts only: the
harness never saves a result measured with local changes under bench/results/).

`python -m bench.table` prints it (markdown); `python -m bench.table --readme` also writes it
into README.md between its markers, and refuses when a result, or the checkout, is modified.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.report import RESULTS, ROOT, local_changes

Row = tuple[str, str, str, str, str, str]
BEGIN, END = "<!-- bench.table begin -->", "<!-- bench.table end -->"


SCENARIOS = ("cpu", "latency", "saturation", "contention", "scale_out", "slow_stage", "memory")


def _read(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _load(name: str) -> dict[str, Any] | None:
    """The last result of `name`, unless that run failed (listed by `failures`) or predates
    the scenario's baseline (no `results` of today's shape: `rows` skips it)."""
    result = _read(name)
    return None if result is None or "error" in result else result


def _safe(build: Any) -> list[tuple[Row, dict[str, Any]]]:
    try:
        return list(build())
    except (KeyError, TypeError):  # a result saved by an older harness: not comparable
        return []


def failures() -> list[tuple[Row, dict[str, Any]]]:
    return [((name, "failed", result["error"][:80], "", "", "no"), result)
            for name in SCENARIOS if (result := _read(name)) and "error" in result]


def _met(result: dict[str, Any]) -> str:
    return "yes" if result.get("target", {}).get("met") else "no"


def _e2e(r: dict[str, Any]) -> str:
    e = r["end_to_end_ms"]
    return f"{e['p50']:.1f} / {e['p95']:.1f} / {e['p99']:.1f} ms"


def _x(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}×"


def rows() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    for build in (_cpu, _latency, _saturation, _contention, _scale_out, _slow_stage, _memory):
        out += _safe(build)
    return out


def _cpu() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if cpu := _load("cpu"):
        r = cpu["results"]
        out.append((("CPU per question, all stages (vs raw relay chain)",
                     f"{r['otel_off']['cpu_ms_per_question']:.2f} ms",
                     f"relay {r['relay']['cpu_ms_per_question']:.2f} ms",
                     _x(r["ratio_vs_relay"]), "≤ 3×", _met(cpu)), cpu))
        out.append((("CPU per question, tracing on (SDK, spans dropped)",
                     f"{r['otel_on']['cpu_ms_per_question']:.2f} ms",
                     f"tracing off {r['otel_off']['cpu_ms_per_question']:.2f} ms",
                     _x(r["otel_cost_ratio"]), "", ""), cpu))
    return out


def _latency() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if lat := _load("latency"):
        r = lat["results"]
        out.append((("end-to-end p50 / p95 / p99 at 50 q/s", _e2e(r["ours"]),
                     f"relay {_e2e(r['relay'])}", f"{_x(r['ratio']['p50'])} (p50)",
                     "p50 ≤ 1.5×", _met(lat)), lat))
    return out


def _saturation() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if sat := _load("saturation"):
        r = sat["results"]
        out.append((("saturation: q/s with p99 ≤ 250 ms, one process",
                     f"{r['ours']['sustained_q_per_s']:.0f} q/s",
                     f"relay {r['relay']['sustained_q_per_s']:.0f} q/s", _x(r["ratio"]),
                     "≥ 0.3×", _met(sat)), sat))
    return out


def _contention() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if con := _load("contention"):
        r = con["results"]
        out.append((("contention: 50 q/s with a CPU hog on one core", _e2e(r["hog"]),
                     f"quiet {_e2e(r['quiet'])}", f"{_x(r['ratio']['p50'])} (p50)",
                     "p50 ≤ 3×", _met(con)), con))
    return out


def _scale_out() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if so := _load("scale_out"):
        r = so["results"]
        out.append((("scale-out: 2 vs 1 processes, 6 partitions, q/s at saturation",
                     f"{r['two_processes']['sustained_q_per_s']:.0f} q/s",
                     f"1 process {r['one_process']['sustained_q_per_s']:.0f} q/s",
                     _x(r["ratio"]), "report", ""), so))
    return out


def _slow_stage() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if slow := _load("slow_stage"):
        r = slow["results"]
        out.append((("evidence stage, 500 ms fake adapter, 3 partitions",
                     f"{r['ours']['questions_per_s']:.0f} q/s",
                     f"FastStream default {r['faststream_default']['questions_per_s']:.1f} q/s",
                     f"{r['ratio_vs_default']:.0f}×", "≥ 100 q/s, at-least-once",
                     "yes" if slow["target"]["met"] and r["ours"]["committed_equals_end"]
                     else "no"), slow))
    return out


def _memory() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    if memory := _load("memory"):
        r = memory["results"]
        out.append((("RSS growth over 20,000 questions after warm-up",
                     f"+{r['growth_pct']:.1f} %", f"{r['rss_after_warmup_kb'] // 1024} MB",
                     "", "≤ +10 %", _met(memory)), memory))
    return out


def markdown() -> str:
    lines = ["| scenario | ours | baseline | ratio | target | met | load 1m | commit |",
             "|---|---|---|---|---|---|---|---|"]
    for row, result in rows() + failures():
        env = result["environment"]
        flag = " **MODIFIED**" if env.get("gateway_code_modified") else ""
        lines.append("| " + " | ".join(row) + f" | {env['load_avg_1m']} | "
                     f"`{env['commit'][:7]}`{flag} |")
    return "\n".join(lines)


def write_readme(table: str) -> str | None:
    """None when written, else why not."""
    if any(res["environment"].get("gateway_code_modified") for _, res in rows()):
        return "a result was measured with local changes"
    if changed := local_changes():
        return f"the checkout has local changes ({', '.join(changed[:3])})"
    readme = ROOT / "README.md"
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        return f"README.md has no {BEGIN} ... {END} markers"
    head, rest = text.split(BEGIN, 1)
    readme.write_text(f"{head}{BEGIN}\n{table}\n{END}{rest.split(END, 1)[1]}")
    return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.table", description=__doc__)
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    args = parser.parse_args()
    table = markdown()
    print(table)
    if args.readme and (why := write_readme(table)):
        sys.exit(f"bench.table: README.md not updated: {why}")
