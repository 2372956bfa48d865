"""The lock files install what pyproject.toml asks for, every pin is hash-checked, the image's
lock runs the versions the tests ran, and every third-party import is declared."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)")
# Import names that differ from their distribution's name.
IMPORT_TO_DIST = {"yaml": "pyyaml", "pydantic_settings": "pydantic-settings",
                  "prometheus_client": "prometheus-client", "mypyc": "mypy"}


def pins(lock: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
        if match := PIN.match(line):
            found[canonicalize_name(match[1])] = match[2]
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in [*project["dependencies"],
                                     *project["optional-dependencies"]["test"]]]


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-runtime.lock"])
def test_every_pin_carries_a_hash(lock: str) -> None:
    text = (ROOT / lock).read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    unhashed = [b.split()[0] for b in blocks if PIN.match(b) and "--hash=sha256:" not in b]
    assert pins(lock) and not unhashed


def test_the_lock_satisfies_every_declared_range() -> None:
    locked = pins("requirements.lock")
    wrong = {str(r): locked.get(canonicalize_name(r.name)) for r in declared()
             if locked.get(canonicalize_name(r.name)) is None
             or not r.specifier.contains(locked[canonicalize_name(r.name)], prereleases=True)}
    assert not wrong, f"out of date: run scripts/lock ({wrong})"


def test_the_image_runs_the_versions_the_tests_ran() -> None:
    full, runtime = pins("requirements.lock"), pins("requirements-runtime.lock")
    assert {name: (v, full.get(name)) for name, v in runtime.items() if full.get(name) != v} == {}
    assert "pytest" not in runtime and "faststream" not in runtime  # bench only


def test_opentelemetry_sdk_and_instrumentation_move_together() -> None:
    otel = {n: v for n, v in pins("requirements.lock").items() if n.startswith("opentelemetry-")}
    stable = {v for v in otel.values() if v.startswith("1.")}
    contrib = {v for v in otel.values() if v.startswith("0.")}
    assert len(stable) == 1 and len(contrib) == 1, otel
    # The contrib release train (0.Nb*) ships for the SDK 1.(N-21).
    (sdk,), (instr,) = stable, contrib
    assert int(instr.split(".")[1].split("b")[0]) - 21 == int(sdk.split(".")[1])


def test_every_third_party_import_is_declared() -> None:
    names = {canonicalize_name(r.name) for r in declared()}
    imported: set[str] = set()
    for path in [*(ROOT / "pmflow_gateway").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names
                   and m not in {"pmflow_gateway", "tests", "bench"}}
    missing = {m for m in third_party
               if canonicalize_name(IMPORT_TO_DIST.get(m, m)) not in names
               and not canonicalize_name(IMPORT_TO_DIST.get(m, m)).startswith("opentelemetry")}
    assert not missing
