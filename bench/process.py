"""The harness side of `bench.worker`: start it, ask it for samples, stop it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent


class Worker:
    def __init__(self, bootstrap: str, prefix: str, *, stages: str, otel: bool = False,
                 adapter_delay_ms: float = 0.0, profile: str | None = None,
                 real_mcp: bool = False, relay: bool = False, probe_hops: bool = False
                 ) -> None:
        """`relay`: the raw aiokafka relay chain (`bench.relay`) instead of our stages."""
        self.argv = [sys.executable, "-m", "bench.relay" if relay else "bench.worker",
                     "--bootstrap", bootstrap, "--prefix", prefix, "--stages", stages]
        if not relay:
            self.argv += ["--adapter-delay-ms", str(adapter_delay_ms)]
        if otel:
            self.argv.append("--otel")
        if probe_hops:
            self.argv.append("--probe-hops")
        if real_mcp:
            self.argv.append("--real-mcp")
        if profile:
            self.argv += ["--profile", profile]
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_path = (ROOT / "bench" / "results"
                            / f"worker-{prefix.strip('.')}-{id(self):x}.stderr.tmp")

    async def start(self, timeout_s: float = 90) -> dict[str, Any]:
        # A file, not a pipe: nobody reads stderr while the worker runs. Closed in stop().
        self._stderr = self.stderr_path.open("w")
        # The scenarios measured against the relay chain (a non-transactional floor) run
        # at-least-once unless the scenario chose a mode (`exactly_once` runs both).
        env = {"PMFLOW_PROCESSING_GUARANTEE": "at_least_once", **os.environ}
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr, env=env)
        return await self._read("ready", timeout_s)

    async def sample(self) -> dict[str, Any]:
        return await self._command("sample", "sample", 30)

    async def probe(self) -> dict[str, Any]:
        """`bench.worker --probe-hops` only: where each record's time went inside the worker."""
        return await self._command("probe", "probe", 30)

    async def stop(self) -> dict[str, Any]:
        try:
            return await self._command("stop", "stopped", 60)
        finally:
            assert self.proc is not None
            if self.proc.returncode is None:
                try:
                    await asyncio.wait_for(self.proc.wait(), 30)
                except TimeoutError:
                    self.proc.kill()
                    await self.proc.wait()
            self._stderr.close()
            if self.proc.returncode == 0:
                self.stderr_path.unlink(missing_ok=True)

    async def _command(self, command: str, kind: str, timeout_s: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        return await self._read(kind, timeout_s)

    async def _read(self, kind: str, timeout_s: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout_s)
        if not line:
            rc = await self.proc.wait()
            raise RuntimeError(f"worker exited (rc={rc}); see {self.stderr_path}")
        data: dict[str, Any] = json.loads(line)
        if data.get("kind") != kind:
            raise RuntimeError(f"worker said {data.get('kind')!r}, expected {kind!r}")
        return data
