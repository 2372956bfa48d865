"""Benchmarks against the real broker. `python -m bench --help`."""
