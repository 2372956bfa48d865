"""Operator tools: the AsyncAPI document, `doctor`, `replay` and `trace`.

Each module exposes `add_<name>_parser(sub)` and `cmd_<name>(args, settings) -> int` for the
command line; the work itself is plain functions that tests call directly.
"""
