"""Where the integration tests' services come from: environment, container, skip or fail."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support import services
from tests.support.services import KAFKA, POSTGRES, Service, choose, docker_engine_problem

ROOT = Path(__file__).resolve().parents[2]


def _never_asked() -> str | None:
    raise AssertionError("the Docker engine was probed though the environment settles it")


def _answers() -> str | None:
    return None


def _absent() -> str | None:
    return "ConnectionError: no socket"


@pytest.mark.parametrize("mode", ["", "auto", "env", "ENV "])
def test_a_set_variable_is_used_as_today_without_probing_docker(mode: str) -> None:
    environ = {"PMFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:9092", "PMFLOW_TEST_SERVICES": mode}
    assert choose(KAFKA, environ, _never_asked) == services.Choice("env", value="127.0.0.1:9092")


def test_env_mode_fails_naming_the_missing_variable() -> None:
    choice = choose(POSTGRES, {"PMFLOW_TEST_SERVICES": "env"}, _never_asked)
    assert choice.provider == "fail"
    assert "PMFLOW_TEST_POSTGRES_URL" in choice.reason


def test_auto_starts_a_container_when_the_variable_is_missing_and_an_engine_answers() -> None:
    assert choose(KAFKA, {}, _answers).provider == "docker"


def test_auto_skips_with_the_reason_when_no_engine_answers() -> None:
    choice = choose(KAFKA, {"PMFLOW_KAFKA_BOOTSTRAP": ""}, _absent)
    assert choice.provider == "skip"
    assert "PMFLOW_KAFKA_BOOTSTRAP" in choice.reason and "no socket" in choice.reason


def test_docker_mode_ignores_the_variable_and_fails_without_an_engine() -> None:
    environ = {"PMFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:9092", "PMFLOW_TEST_SERVICES": "docker"}
    assert choose(KAFKA, environ, _answers).provider == "docker"
    choice = choose(KAFKA, environ, _absent)
    assert choice.provider == "fail" and "no Docker engine" in choice.reason


def test_an_unknown_mode_is_an_error_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="env, docker, auto"):
        choose(KAFKA, {"PMFLOW_TEST_SERVICES": "k8s"}, _answers)


def test_the_real_probe_reports_an_absent_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-docker.sock'}")
    problem = docker_engine_problem()
    assert problem is not None and problem  # a reason, not a crash
    choice = choose(Service("kafka", "UNSET_VARIABLE_X", lambda _: ""), {},
                    docker_engine_problem)
    assert choice.provider == "skip"


def test_containers_run_the_compose_files_images() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    images = {name: s.get("image") for name, s in compose["services"].items()}
    assert images["kafka"] == services.KAFKA_IMAGE
    assert images["postgres"] == services.POSTGRES_IMAGE
    assert images["jaeger"] == services.JAEGER_IMAGE
