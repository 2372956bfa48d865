"""The worker's /metrics, /healthz and /readyz server against malformed requests, over real
sockets: a bad request gets 400 and a quiet debug line, never an error with a traceback."""

from __future__ import annotations

import asyncio
import inspect
import logging

import pytest

from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.health import HealthServer

MALFORMED = [b"\xff\xfe\xfd GET /metrics\r\n", b"G" * 70_000 + b"\r\n", b"\r\n", b"GET\r\n",
             b"GET /healthz HTTP/1.1 extra words\xff\r\n"]


async def ask(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_malformed_requests_get_400_and_log_no_error(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = HealthServer(port=0, host="127.0.0.1", ready=lambda: True)
    await server.start()
    try:
        answers = [await ask(server.port, request) for request in MALFORMED]
        healthy = await ask(server.port, b"GET /healthz HTTP/1.0\r\n\r\n")
        await asyncio.sleep(0.05)
    finally:
        await server.stop()
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    print(f"\nmalformed requests logged as errors: {len(errors)} of {len(MALFORMED)}")
    assert errors == []
    assert all(answer.startswith(b"HTTP/1.0 400") for answer in answers), answers
    assert healthy.startswith(b"HTTP/1.0 200")


def test_the_metrics_port_listens_on_this_machine_only_by_default() -> None:
    assert Settings().http_host == "127.0.0.1"
    assert inspect.signature(HealthServer).parameters["host"].default == "127.0.0.1"
