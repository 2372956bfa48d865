"""The results table, from the last saved full run of each scenario (clean checkouts only: the
harness never saves a result measured with local changes under bench/results/).

`python -m bench.table` prints it (markdown); `python -m bench.table --readme` also writes it
into README.md between its markers, and refuses when a result, or the checkout, is modified.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any

from bench.report import RESULTS, ROOT, local_changes

Row = tuple[str, str, str, str, str, str]
BEGIN, END = "<!-- bench.table begin -->", "<!-- bench.table end -->"




def _read(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _load(name: str) -> dict[str, Any] | None:
    """The last result of `name`, unless that run failed (listed by `failures`) or predates
    the scenario's baseline (no `results` of today's shape: `rows` skips it)."""
    result = _read(name)
    return None if result is None or "error" in result else result


def failures() -> list[tuple[Row, dict[str, Any]]]:
    return [((name, "failed", result["error"][:80], "", "", "no"), result)
            for name in ROWS if (result := _read(name)) and "error" in result]


def _met(result: dict[str, Any]) -> str:
    return "yes" if result.get("target", {}).get("met") else "no"


def _e2e(r: dict[str, Any]) -> str:
    e = r["end_to_end_ms"]
    return f"{e['p50']:.1f} / {e['p95']:.1f} / {e['p99']:.1f} ms"


def _x(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}×"


def _cpu(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    return [("CPU per question, all stages (vs raw relay chain)",
             f"{r['otel_off']['cpu_ms_per_question']:.2f} ms",
             f"relay {r['relay']['cpu_ms_per_question']:.2f} ms",
             _x(r["ratio_vs_relay"]), "≤ 3×", _met(result)),
            *([("CPU per question, runtime only (all but the stage cores)",
                f"{r['otel_off']['runtime_ms_per_question']:.2f} ms",
                f"relay {r['relay']['cpu_ms_per_question']:.2f} ms",
                _x(r["runtime_ratio_vs_relay"]), "", "")]
              if r.get("runtime_ratio_vs_relay") is not None else []),
            ("CPU per question, tracing on (SDK, spans dropped)",
             f"{r['otel_on']['cpu_ms_per_question']:.2f} ms",
             f"tracing off {r['otel_off']['cpu_ms_per_question']:.2f} ms",
             _x(r["otel_cost_ratio"]), "", "")]


def _e2e_row(result: dict[str, Any], label: str, *, ours: str, base: str, target: str) -> Row:
    """End-to-end latencies of the run `ours` against the run `base`, compared at p50."""
    r = result["results"]
    return (label, _e2e(r[ours]), f"{base} {_e2e(r[base])}", f"{_x(r['ratio']['p50'])} (p50)",
            target, _met(result))


def _latency(result: dict[str, Any]) -> list[Row]:
    return [_e2e_row(result, "end-to-end p50 / p95 / p99 at 50 q/s", ours="ours", base="relay",
                     target="p50 ≤ 1.5×")]


def _saturation(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    return [("saturation: q/s with p99 ≤ 250 ms, one process",
             f"{r['ours']['sustained_q_per_s']:.0f} q/s",
             f"relay {r['relay']['sustained_q_per_s']:.0f} q/s", _x(r["ratio"]),
             "≥ 0.3×", _met(result))]


def _contention(result: dict[str, Any]) -> list[Row]:
    return [_e2e_row(result, "contention: 50 q/s with a CPU hog on one core", ours="hog",
                     base="quiet", target="p50 ≤ 3×")]


def _scale_out(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    return [("scale-out: 2 vs 1 processes, 6 partitions, q/s at saturation",
             f"{r['two_processes']['sustained_q_per_s']:.0f} q/s",
             f"1 process {r['one_process']['sustained_q_per_s']:.0f} q/s",
             _x(r["ratio"]), "report", "")]


def _slow_stage(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    return [("evidence stage, 500 ms fake adapter, 3 partitions",
             f"{r['ours']['questions_per_s']:.0f} q/s",
             f"FastStream default {r['faststream_default']['questions_per_s']:.1f} q/s",
             f"{r['ratio_vs_default']:.0f}×", "≥ 100 q/s, at-least-once",
             "yes" if result["target"]["met"] and r["ours"]["committed_equals_end"] else "no")]


def _memory(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    return [("RSS growth over 20,000 questions after warm-up",
             f"+{r['growth_pct']:.1f} %", f"{r['rss_after_warmup_kb'] // 1024} MB",
             "", "≤ +10 %", _met(result))]


def _exactly_once(result: dict[str, Any]) -> list[Row]:
    r = result["results"]
    alo, eos = r["at_least_once"], r["exactly_once"]
    a, e = alo["at_50_per_s"]["end_to_end_ms"], eos["at_50_per_s"]["end_to_end_ms"]
    latency_met = e["p50"] <= a["p50"] + 50 and e["p99"] <= a["p99"] + 150
    a_qps, e_qps = alo["saturation"]["questions_per_s"], eos["saturation"]["questions_per_s"]
    return [("exactly-once: end-to-end p50 / p95 / p99 at 50 q/s",
             _e2e(eos["at_50_per_s"]), f"at-least-once {_e2e(alo['at_50_per_s'])}",
             f"+{e['p50'] - a['p50']:.1f} ms (p50)", "p50 ≤ +50 ms, p99 ≤ +150 ms",
             "yes" if latency_met else "no"),
            ("exactly-once: burst of 2,000 questions, q/s",
             f"{e_qps:.0f} q/s", f"at-least-once {a_qps:.0f} q/s", _x(e_qps / a_qps),
             "≥ 0.9×", "yes" if e_qps >= 0.9 * a_qps else "no")]


# The scenarios the table shows, in its order, each with how its saved result reads as rows.
ROWS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "cpu": _cpu, "latency": _latency, "saturation": _saturation, "contention": _contention,
    "scale_out": _scale_out, "slow_stage": _slow_stage, "memory": _memory,
    "exactly_once": _exactly_once}


def rows() -> list[tuple[Row, dict[str, Any]]]:
    out: list[tuple[Row, dict[str, Any]]] = []
    for name, build in ROWS.items():
        if result := _load(name):
            # A result saved by an older harness is not comparable: it gives no row.
            with contextlib.suppress(KeyError, TypeError):
                out += [(row, result) for row in build(result)]
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
