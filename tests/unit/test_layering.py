"""The package's layering, read from the source with `ast`: imports go downward only.

Entry points -> streams -> handlers -> contract -> schemas; adapters implement the ports and
know nothing of the stages. Every import counts for the layer rules, including ones inside
functions or under TYPE_CHECKING: a lazy import is still a dependency. Only imports that run
when a module is loaded count for import cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import pmflow_gateway

ROOT = Path(pmflow_gateway.__file__).parent
PACKAGE = "pmflow_gateway"
STAGES = frozenset(f"{PACKAGE}.handlers.{name}"
                   for name in ("plan", "evidence", "verify", "answer", "render", "memory",
                                "feedback", "outcome", "probe"))
# The only modules that build the dependencies: the CLI, the MCP tools server's main, the
# `replay` subcommand, which builds the planner it replays with, and `doctor`'s source checks,
# which search through the engine exactly as the workers would build it.
ENTRY_POINTS = frozenset(f"{PACKAGE}.{name}" for name in (
    "cli", "agent_tools.serve", "ops.replay", "ops.doctor_sources"))
CONTRACT_MAY_USE = (f"{PACKAGE}.contract", f"{PACKAGE}.ports", f"{PACKAGE}.schemas")


@dataclass(frozen=True)
class Import:
    target: str
    line: int
    at_load: bool  # runs when the importing module is loaded


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    yield base
    # `from pmflow_gateway.handlers import plan` imports the module `handlers.plan`.
    yield from (f"{base}.{alias.name}" for alias in node.names
                if f"{base}.{alias.name}" in MODULES)


def _walk(node: ast.AST, module: str, at_load: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            for target in _targets(child, module):
                yield Import(target, child.lineno, at_load)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) or (
                isinstance(child, ast.If) and _is_type_checking(child)):
            yield from _walk(child, module, False)
        else:
            yield from _walk(child, module, at_load)


def imports_of(module: str) -> list[Import]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return [i for i in _walk(tree, module, True) if i.target.split(".")[0] == PACKAGE]


IMPORTS = {module: imports_of(module) for module in MODULES}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _breaches(importers: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{module}:{i.line} imports {i.target}"
            for module, found in IMPORTS.items() if _within(module, importers)
            for i in found if any(_within(i.target, f) for f in forbidden)]


def test_the_reader_sees_every_module_and_their_imports() -> None:
    assert f"{PACKAGE}.handlers.plan" in MODULES
    assert f"{PACKAGE}.handlers.planners.rules" in MODULES
    stage_table = {i.target for i in IMPORTS[f"{PACKAGE}.streams.stages"]}
    assert f"{PACKAGE}.handlers.plan" in stage_table
    lazy = [i for i in IMPORTS[f"{PACKAGE}.cli"] if i.target == f"{PACKAGE}.bootstrap"]
    assert lazy and not any(i.at_load for i in lazy)


def test_adapters_import_no_handler() -> None:
    assert _breaches(f"{PACKAGE}.adapters", (f"{PACKAGE}.handlers",)) == []


def test_streams_never_import_the_composition_root() -> None:
    assert _breaches(f"{PACKAGE}.streams", (f"{PACKAGE}.bootstrap",)) == []


def test_contract_imports_only_contract_ports_and_schemas() -> None:
    breaches = [f"{module}:{i.line} imports {i.target}"
                for module, found in IMPORTS.items() if _within(module, f"{PACKAGE}.contract")
                for i in found
                if i.target != PACKAGE
                and not any(_within(i.target, allowed) for allowed in CONTRACT_MAY_USE)]
    assert breaches == []


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_no_stage_module_imports_another(stage: str) -> None:
    others = tuple(STAGES - {stage})
    assert [f"line {i.line}: {i.target}" for i in IMPORTS[stage]
            if any(_within(i.target, other) for other in others)] == []


def test_only_entry_points_import_the_composition_root() -> None:
    importers = sorted(module for module, found in IMPORTS.items()
                       if any(i.target == f"{PACKAGE}.bootstrap" for i in found))
    assert set(importers) <= ENTRY_POINTS, importers


def _cycle_from(start: str, edges: dict[str, set[str]]) -> list[str] | None:
    """The first import cycle reachable from `start`, depth first, as the path round it."""
    path: list[str] = []
    on_path: set[str] = set()
    done: set[str] = set()

    def visit(module: str) -> list[str] | None:
        if module in on_path:
            return [*path[path.index(module):], module]
        if module in done:
            return None
        path.append(module)
        on_path.add(module)
        for target in sorted(edges.get(module, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        on_path.discard(module)
        done.add(module)
        return None

    return visit(start)


def _load_edges() -> dict[str, set[str]]:
    return {module: {i.target for i in found if i.at_load and i.target in MODULES
                     and i.target != module}
            for module, found in IMPORTS.items()}


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle_from("a", {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle_from("a", {"a": {"b"}, "b": {"c"}}) is None


def test_no_import_cycles_at_load() -> None:
    edges = _load_edges()
    cycles = [cycle for module in sorted(edges) if (cycle := _cycle_from(module, edges))]
    assert cycles == []


def test_no_test_module_imports_another() -> None:
    # Shared helpers live in tests/support or tests/fakes; a test module is never a library.
    tests = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.rsplit(".", 1)[-1].startswith("test_"):
                found.append(f"{path.relative_to(tests)}:{node.lineno} imports {node.module}")
    assert found == []


# Private names the code may read on objects not its own: SQLAlchemy documents `Row._mapping`
# as public API (the underscore only avoids clashing with column names), and argparse's
# sub-parser type is only spelled privately.
PRIVATE_READS_ALLOWED = frozenset({"_mapping", "_SubParsersAction"})


def _private_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in {"self", "cls"}:
            continue
        if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and \
                base.func.id == "super":
            continue
        if node.attr not in PRIVATE_READS_ALLOWED:
            yield node.lineno, ast.unparse(node)


def test_the_private_read_finder_sees_reads_through_other_objects() -> None:
    tree = ast.parse("consumer._client.x\nself._consumer._coordinator\nself._own\n"
                     "super()._help()\nrow._mapping\n")
    assert sorted(text for _, text in _private_reads(tree)) == [
        "consumer._client", "self._consumer._coordinator"]


def test_nothing_reads_a_private_attribute_of_a_library_object() -> None:
    """aiokafka's (and any library's) internals are not read anywhere in the package: an
    upgrade that renames them would break the workers silently. What the public API lacks
    is written on top of it (the consume loop, committed metadata through the admin API)."""
    found = [f"{module}:{line} reads {text}" for module, path in MODULES.items()
             for line, text in _private_reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_no_module_imports_faststream_or_a_private_aiokafka_module() -> None:
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{module}:{node.lineno} imports {name}" for name in names
                      if name.split(".")[0] == "faststream" or (
                          name.split(".")[0] == "aiokafka"
                          and any(part.startswith("_") for part in name.split(".")))]
    assert found == []


TRANSACTION_CODE = tuple(f"{PACKAGE}.streams.{name}" for name in (
    "transactional", "partition_producers", "done_map", "outbox"))


@pytest.mark.parametrize("module", [f"{PACKAGE}.streams.runner", f"{PACKAGE}.streams.publisher",
                                    f"{PACKAGE}.streams.polling"])
def test_the_runner_and_the_publisher_know_nothing_of_transactions(module: str) -> None:
    """The delivery mode is a commit strategy handed to the runner: neither the runner, its
    consume loop nor the publisher imports the exactly-once code."""
    assert [f"line {i.line}: {i.target}" for i in IMPORTS[module]
            if any(_within(i.target, t) for t in TRANSACTION_CODE)] == []


def test_tests_build_their_dependencies_in_one_place() -> None:
    """`Deps` is built by `tests.fakes.fake_deps` (and the composition root), never by hand
    in a test: a new field is then added in one place."""
    tests = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted(tests.rglob("*.py")):
        if path.name == "fakes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "Deps":
                found.append(f"{path.relative_to(tests)}:{node.lineno}")
    assert found == []


def test_the_benchmarks_import_nothing_from_the_tests() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench"
    found = []
    for path in sorted(bench.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            found += [f"{path.relative_to(bench)}:{node.lineno} imports {name}"
                      for name in names if name.split(".")[0] == "tests"]
    assert found == []
