"""What every result carries (machine, commit, interpreter) and the small statistics used."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


ROOT = Path(__file__).parent.parent
# Modified results go here (git-ignored): printed and kept for the engineer, never published.
MODIFIED = RESULTS / "modified"


def local_changes() -> list[str]:
    """Paths with uncommitted changes, the harness's own output excepted; a figure measured
    with any of them in place does not describe a commit anyone can check out."""
    out = subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude)bench/results"],
                         cwd=ROOT, capture_output=True, text=True, check=False).stdout
    return [line[3:] for line in out.splitlines() if line.strip()]


def environment() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip()
    changed = local_changes()
    return {"cpu_count": os.cpu_count(), "commit": commit,
            "gateway_code_modified": bool(changed), "local_changes": changed[:20],
            # Settings given to the workers through the environment change what is measured.
            "settings_from_environment": {k: v for k, v in sorted(os.environ.items())
                                          if k.startswith("PMFLOW_") and "URL" not in k},
            "python": platform.python_version(), "platform": platform.platform(),
            "load_avg_1m": round(os.getloadavg()[0], 2)}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def summary(values: list[float], digits: int = 3) -> dict[str, float]:
    return {"n": len(values), "p50": round(percentile(values, 50), digits),
            "p95": round(percentile(values, 95), digits),
            "p99": round(percentile(values, 99), digits),
            "max": round(max(values), digits)}


def save(name: str, result: dict[str, Any]) -> Path:
    """`bench/results/<name>.json` from a clean checkout; with local changes the result goes to
    `bench/results/modified/` instead, so the published figures only ever come from a commit."""
    modified = result.get("environment", {}).get("gateway_code_modified", True)
    folder = MODIFIED if modified else RESULTS
    if modified:
        print(f"bench: the checkout has local changes: NOT publishing {name}; saved under "
              f"{folder.relative_to(ROOT)}/ with gateway_code_modified=true", file=sys.stderr)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return path


def rss_kb() -> int:
    """Resident set size of this process, from /proc (no extra dependency)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    json.dump(environment(), sys.stdout)
