"""The compiled build: the answer path's text rules as C extensions, built by mypyc from the
same typed sources, and the check that stops an import when one of them is older than its
source.

Which modules: the pure text functions a question runs through thousands of times
(`contract/`, the extractive composer, the rules planner): most of the CPU the stage cores
cost, which compiled cost about 15 % less (their time spent in `re` and the str and dict
methods, already C, does not change). Left interpreted: package
`__init__` files, `contract/memo.py` (a compiled class cannot extend `OrderedDict`), and
everything that waits on I/O, where the interpreter is not what takes the time.

Pure Python stays the reference: a checkout without a C compiler runs the same code
uncompiled, and CI runs the unit tests on Python 3.12 that way. `scripts/compile` (called by
`scripts/install`) builds; it records each source's hash, and `check()`, run when the
package is imported, refuses to go on with a compiled module whose source has changed since,
naming the fix: an edited rule must never run as its older compiled self.

    python pmflow_gateway/compiled.py [--clean]     (what scripts/compile runs)

This file imports only the standard library, so it runs as a script without importing the
package (whose import is what it checks)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import sys
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
MANIFEST = PACKAGE / "compiled-sources.txt"  # "<sha256> <path from the package>" per source
GROUP = "pmflow_gateway.native"
SHARED = "native__mypyc"  # the group's shared library: pmflow_gateway/native__mypyc.*.so
INTERPRETED = {"contract/memo.py"}


def sources() -> list[Path]:
    """The modules the build compiles."""
    found = [p for p in sorted((PACKAGE / "contract").glob("*.py"))
             if p.name != "__init__.py" and _rel(p) not in INTERPRETED]
    found += [PACKAGE / "handlers" / "composers.py"]
    found += [PACKAGE / "handlers" / "planners" / f"{name}.py"
              for name in ("rules", "words", "place_queries")]
    return found


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiled() -> list[str]:
    """The modules this interpreter imports compiled (their paths from the package): each
    source beside an extension built for it. One walk of the package, and none at all for a
    tree without the build's shared library (then no compiled module can load)."""
    if not any(PACKAGE.glob(f"{SHARED}.*")):
        return []
    found = []
    for built in PACKAGE.rglob("*.so"):
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            source = built.with_name(built.name.removesuffix(suffix) + ".py")
            if built.name.endswith(suffix) and source.exists():
                found.append(_rel(source))
                break
    return sorted(found)


def stale() -> list[str]:
    """Compiled modules whose source is not what they were built from."""
    try:
        built = dict(line.split(" ", 1)[::-1] for line in MANIFEST.read_text().splitlines())
    except (OSError, ValueError):
        built = {}
    return [rel for rel in compiled() if built.get(rel) != _digest(PACKAGE / rel)]


def check() -> None:
    changed = stale()
    if changed:
        raise ImportError(
            f"pmflow_gateway: {len(changed)} compiled module(s) older than their source "
            f"({', '.join(changed[:3])}{', …' if len(changed) > 3 else ''}): run "
            "scripts/compile to rebuild them, or scripts/compile --clean to run uncompiled")


def clean() -> None:
    for built in [*PACKAGE.rglob("*.so"), *PACKAGE.rglob("*.pyd")]:
        built.unlink()
    MANIFEST.unlink(missing_ok=True)


def build() -> None:
    """Compile `sources()` in place (about four minutes on two cores), then record what was
    compiled. Nothing to do when the recorded build is current."""
    todo = sources()
    if set(compiled()) == {_rel(p) for p in todo} and not stale():
        print("compile: the compiled modules are current", file=sys.stderr)
        return
    clean()
    from mypyc.build import mypycify  # a build-time dependency: mypy, from the test extras

    setuptools: Any = importlib.import_module("setuptools")  # untyped, whichever version

    extensions = mypycify([str(p) for p in todo], group_name=GROUP,
                          target_dir=str(ROOT / "build" / "mypyc"))
    # The command alone, not setup(): setup() would read pyproject.toml, whose metadata the
    # setuptools a fresh venv comes with cannot parse, and has nothing to do with this build.
    dist = setuptools.Distribution({"name": "pmflow-gateway-native", "ext_modules": extensions,
                                    "package_dir": {"": str(ROOT)}})
    command = dist.get_command_obj("build_ext")
    command.inplace = True
    dist.run_command("build_ext")
    MANIFEST.write_text("".join(f"{_digest(p)} {_rel(p)}\n" for p in todo))
    print(f"compile: {len(todo)} modules compiled", file=sys.stderr)


if __name__ == "__main__":
    clean() if sys.argv[1:] == ["--clean"] else build()
