"""One `doctor` finding: a check's name, whether it passed, what was seen, and the fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warning: bool = False
    """Works, but not as production should: said loudly, does not fail the run."""

    def lines(self) -> list[str]:
        word = "FAIL" if not self.ok else "WARN" if self.warning else "ok"
        head = f"{word} {self.name}: {self.detail}"
        return [head] if not self.fix else [head, f"     fix: {self.fix}"]


def ok(name: str, detail: str) -> Check:
    return Check(name=name, ok=True, detail=detail)


def fail(name: str, detail: str, fix: str) -> Check:
    return Check(name=name, ok=False, detail=detail, fix=fix)


def why(exc: BaseException) -> str:
    return "timed out" if isinstance(exc, TimeoutError) else (str(exc) or type(exc).__name__)
