"""Worker processes (`pmflow-gateway run`) for chaos tests: start, SIGKILL, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


class Worker:
    def __init__(self, env: dict[str, str], *, stages: Sequence[str] = (), log: Path,
                 grace_s: float = 10.0) -> None:
        self.env = {**os.environ, "PMFLOW_HTTP_PORT": "0", **env}
        self.args = [sys.executable, "-m", "pmflow_gateway.cli", "run", "--grace", str(grace_s)]
        for stage in stages:
            self.args += ["--stage", stage]
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Worker:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)
        return self

    def kill(self) -> None:
        """SIGKILL: no drain, no commit; whatever was in flight must be redelivered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def pause(self) -> None:
        """SIGSTOP: the process stands still (a long GC pause, a frozen VM) and keeps its state."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def terminate(self, timeout_s: float = 30) -> int:
        """SIGTERM: drain, commit, exit; returns the exit code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout_s)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
