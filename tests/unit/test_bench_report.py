"""A figure measured with local changes in place never lands where published figures live."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import report


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(report, "ROOT", tmp_path)
    monkeypatch.setattr(report, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(report, "MODIFIED", tmp_path / "results" / "modified")
    return tmp_path / "results"


def test_a_clean_result_is_published(folders: Path) -> None:
    path = report.save("cpu", {"environment": {"gateway_code_modified": False}})
    assert path == folders / "cpu.json"


def test_a_modified_result_is_kept_aside_and_said_so(folders: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = report.save("cpu", {"environment": {"gateway_code_modified": True}})
    assert path == folders / "modified" / "cpu.json"
    assert not (folders / "cpu.json").exists()
    assert "NOT publishing cpu" in capsys.readouterr().err


def test_a_result_without_its_environment_counts_as_modified(folders: Path) -> None:
    assert report.save("cpu", {}).parent == folders / "modified"


def test_the_environment_records_load_commit_and_the_changed_paths() -> None:
    env = report.environment()
    assert {"load_avg_1m", "commit", "gateway_code_modified", "local_changes"} <= set(env)
    assert env["gateway_code_modified"] is bool(env["local_changes"])
