"""The compiled build's guard: a compiled module whose source changed after the build stops the
import, naming the fix; a current build, or none, goes on. On a fake package tree: the build
itself is what `scripts/install` runs, and the whole suite then runs on it."""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

import pytest

from pmflow_gateway import compiled

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "contract").mkdir()
    for name in ("text", "slots"):
        (tmp_path / "contract" / f"{name}.py").write_text(f"RULE = {name!r}\n")
    monkeypatch.setattr(compiled, "PACKAGE", tmp_path)
    monkeypatch.setattr(compiled, "MANIFEST", tmp_path / "compiled-sources.txt")
    return tmp_path


def built(package: Path, *names: str) -> None:
    """As the build leaves it: the shared library, an extension beside each source, and the
    sources' hashes."""
    (package / f"{compiled.SHARED}{SUFFIX}").write_bytes(b"")
    lines = []
    for name in names:
        source = package / "contract" / f"{name}.py"
        source.with_suffix(SUFFIX).write_bytes(b"")
        lines.append(f"{compiled._digest(source)} contract/{name}.py\n")
    compiled.MANIFEST.write_text("".join(lines))


def test_no_build_is_pure_python_and_goes_on(package: Path) -> None:
    assert compiled.compiled() == []
    compiled.check()


def test_a_current_build_goes_on(package: Path) -> None:
    built(package, "text", "slots")
    assert compiled.compiled() == ["contract/slots.py", "contract/text.py"]
    assert compiled.stale() == []
    compiled.check()


def test_an_edited_source_stops_the_import_and_names_the_fix(package: Path) -> None:
    built(package, "text", "slots")
    (package / "contract" / "text.py").write_text("RULE = 'edited'\n")
    assert compiled.stale() == ["contract/text.py"]
    with pytest.raises(ImportError, match=r"contract/text\.py.*scripts/compile"):
        compiled.check()


def test_an_extension_the_manifest_does_not_know_is_stale(package: Path) -> None:
    built(package, "text")
    (package / "contract" / "slots.py").with_suffix(SUFFIX).write_bytes(b"")
    assert compiled.stale() == ["contract/slots.py"]
    compiled.MANIFEST.unlink()  # a build interrupted before it recorded anything
    assert compiled.stale() == ["contract/slots.py", "contract/text.py"]


def test_clean_leaves_pure_python(package: Path) -> None:
    built(package, "text", "slots")
    compiled.clean()
    assert compiled.compiled() == [] and not compiled.MANIFEST.exists()
    assert (package / "contract" / "text.py").exists()


def test_the_build_compiles_the_text_rules_and_leaves_the_memo_interpreted() -> None:
    names = {p.relative_to(compiled.PACKAGE).as_posix() for p in compiled.sources()}
    assert {"contract/text.py", "contract/relevance.py", "handlers/composers.py",
            "handlers/planners/rules.py"} <= names
    assert "contract/memo.py" not in names
    assert not any(n.endswith("__init__.py") for n in names)
    assert all((compiled.PACKAGE / n).exists() for n in names)
