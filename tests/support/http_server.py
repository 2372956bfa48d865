"""A real HTTP server on 127.0.0.1 for tests, served from a daemon thread inside a `with`:
the benchmarks' own (`bench.support`), which may not import the tests, so they lend it here."""

from __future__ import annotations

from bench.support import LocalServer, QuietHandler

__all__ = ["LocalServer", "QuietHandler"]
