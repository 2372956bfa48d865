"""Benchmarks against the real broker (DESIGN §9). `python -m bench --help`."""
