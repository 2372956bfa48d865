"""A private single-node Kafka for tests that stop and restart the broker, so the shared one
(scripts/local-stack) is never disturbed. Uses the jars scripts/local-stack caches."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class PrivateBroker:
    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.port = _free_port()
        self.controller_port = _free_port()
        self.libs = subprocess.run([str(ROOT / "scripts/local-stack"), "kafka-libs"], check=True,
                                   capture_output=True, text=True).stdout.strip()
        self.proc: subprocess.Popen[bytes] | None = None
        self._write_config()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _java(self, *args: str) -> list[str]:
        return ["java", "-Xms128m", "-Xmx512m",
                f"-Dlog4j2.configurationFile={self.dir}/log4j2.properties",
                "-cp", f"{self.libs}/*", *args]

    def _write_config(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "log4j2.properties").write_text(
            "rootLogger.level=WARN\nrootLogger.appenderRef.out.ref=out\nappender.out.type=Console\n"
            "appender.out.name=out\nappender.out.layout.type=PatternLayout\n"
            "appender.out.layout.pattern=%p %m%n\n")
        (self.dir / "server.properties").write_text("\n".join([
            "process.roles=broker,controller", "node.id=1",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={self.dir}/data", "num.partitions=3", "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=3", "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1", "group.initial.rebalance.delay.ms=0",
            "share.coordinator.state.topic.replication.factor=1", ""]))
        subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", uuid.uuid4().hex[:22],
                                  "-c", str(self.dir / "server.properties"), "--standalone"),
                       check=True, capture_output=True)

    def start(self, timeout_s: float = 60) -> None:
        log = open(self.dir / "kafka.log", "ab")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(self._java("kafka.Kafka", str(self.dir / "server.properties")),
                                     stdout=log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "KAFKA_HEAP_OPTS": "-Xmx512m"})
        log.close()
        deadline = time.monotonic() + timeout_s
        while not _port_open(self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"private kafka did not start; see {self.dir}/kafka.log")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
