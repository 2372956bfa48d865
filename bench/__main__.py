"""`python -m bench [SCENARIO...] [--quick]`: one JSON object per scenario, saved under
bench/results/<scenario>.json (the --quick ones as <scenario>.quick.json)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import sys
import time

from bench.report import environment, save

SCENARIOS = ("cpu", "latency", "saturation", "contention", "scale_out", "slow_stage", "memory",
             "exactly_once", "fetch_wait")


async def main(names: list[str], *, quick: bool, bootstrap: str) -> int:
    failed = 0
    for name in names:
        module = importlib.import_module(f"bench.scenarios.{name}")
        started = time.time()
        result = {"scenario": name, "quick": quick, "environment": environment(),
                  "bootstrap": bootstrap}
        try:
            result |= await module.run(bootstrap, quick=quick)
        except Exception as exc:  # report it and go on with the next scenario
            failed += 1
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["seconds"] = round(time.time() - started, 1)
        result["environment"]["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
        save(f"{name}.quick" if quick else name, result)
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("scenarios", nargs="*", choices=[*SCENARIOS, []], metavar="SCENARIO",
                        help=f"any of {', '.join(SCENARIOS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="small N, for a fast check")
    parser.add_argument("--bootstrap", default=os.environ.get("PMFLOW_KAFKA_BOOTSTRAP",
                                                              "127.0.0.1:9092"))
    args = parser.parse_args()
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # teardown noise of deleted topics
    sys.exit(asyncio.run(main(args.scenarios or list(SCENARIOS), quick=args.quick,
                              bootstrap=args.bootstrap)))
