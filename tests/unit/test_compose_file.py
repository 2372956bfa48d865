"""docker-compose.yml, the Dockerfile and the mounted SearXNG settings agree with each other
and with the code. No Docker engine runs here, so the file is validated against the Compose
Specification's JSON Schema and checked service by service, its `${VAR:-default}` values
read as compose reads them with the variable unset."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from pmflow_gateway.settings import Settings

yaml = pytest.importorskip("yaml", reason="PyYAML is a test dependency (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_SCHEMA = ROOT / "tests" / "data" / "compose-spec.schema.json"
SERVICES = {"kafka", "jaeger", "postgres", "topics-init", "searxng", "processor"}
_DEFAULTED = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8")))


def _env(service: dict[str, Any]) -> dict[str, str]:
    """The service's environment with every `${VAR:-default}` at its default."""
    return {k: _DEFAULTED.sub(lambda m: m.group(2) or "", str(v))
            for k, v in service.get("environment", {}).items()}


def test_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft201909Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(compose)]
    assert not errors, errors
    broken = {**compose, "services": {**compose["services"], "kafka": {"image": 42}}}
    assert not validator.is_valid(broken)  # the schema does bite


def test_every_service_is_there_with_a_pinned_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) >= SERVICES
    for name, service in services.items():
        image = service["image"]
        repository, _, tag = image.rpartition(":")
        assert repository and tag and tag != "latest", f"{name}: {image} is not pinned"
        assert re.search(r"\d", tag) or image == "pmflow-query-gateway:local", image
    local_stack = (ROOT / "scripts" / "local-stack").read_text(encoding="utf-8")
    (kafka_version,) = re.findall(r"^KAFKA_VERSION=(\S+)$", local_stack, flags=re.MULTILINE)
    assert services["kafka"]["image"] == f"apache/kafka:{kafka_version}"  # tests run that one
    assert services["jaeger"]["image"].startswith("jaegertracing/jaeger:2.")
    assert services["postgres"]["image"].startswith("postgres:16")


def test_kafka_is_one_kraft_node_the_gateway_can_reach(compose: dict[str, Any]) -> None:
    kafka = _env(compose["services"]["kafka"])
    assert set(kafka["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert "PLAINTEXT://kafka:9092" in kafka["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert kafka["KAFKA_NUM_PARTITIONS"] == "3"
    assert _env(compose["services"]["processor"])["PMFLOW_KAFKA_BOOTSTRAP"] == "kafka:9092"


def test_gateway_services_run_the_right_commands_in_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("topics-init", "processor"):
        assert services[name]["build"] == "."
    assert services["topics-init"]["command"][:2] == ["topics", "create"]
    assert services["processor"]["command"][0] == "run"
    depends = services["processor"]["depends_on"]
    assert depends["topics-init"]["condition"] == "service_completed_successfully"
    assert depends["postgres"]["condition"] == "service_healthy"
    assert services["topics-init"]["depends_on"]["kafka"]["condition"] == "service_healthy"


def test_processor_environment_is_made_of_real_settings(compose: dict[str, Any]) -> None:
    env = _env(compose["services"]["processor"])
    fields = set(Settings.model_fields)
    for name in env:
        assert name.startswith("OTEL_") or (
            name.startswith("PMFLOW_") and name.removeprefix("PMFLOW_").lower() in fields), name
    assert env["PMFLOW_DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert urlsplit(env["PMFLOW_DATABASE_URL"]).hostname == "postgres"
    endpoint = urlsplit(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
    assert (endpoint.hostname, endpoint.port) == ("jaeger", 4318)
    Settings.model_validate({k.removeprefix("PMFLOW_").lower(): v for k, v in env.items()
                             if k.startswith("PMFLOW_")})


def test_the_processor_searches_through_the_searxng_service_with_json_on(
        compose: dict[str, Any]) -> None:
    services = compose["services"]
    env = _env(services["processor"])
    assert env["PMFLOW_LIVE_SEARCH_ENGINE"] == "searxng"
    endpoint = urlsplit(env["PMFLOW_LIVE_SEARCH_ENDPOINT"])
    searxng = services["searxng"]
    base = urlsplit(_env(searxng)["SEARXNG_BASE_URL"])
    assert (endpoint.hostname, endpoint.port) == ("searxng", 8080) == (base.hostname, base.port)
    assert "8080" in " ".join(searxng["healthcheck"]["test"])
    mounted = {target: source for source, target, *_ in
               (v.split(":") for v in searxng["volumes"])}
    settings = yaml.safe_load((ROOT / mounted["/etc/searxng/settings.yml"]).read_text("utf-8"))
    assert "json" in settings["search"]["formats"]  # else SearXNG answers 403
    assert settings["server"]["limiter"] is False  # a limiter needs Valkey
    assert "ports" not in searxng  # nobody else searches through it


def test_the_demo_corpus_is_only_there_when_asked_for(compose: dict[str, Any]) -> None:
    services = compose["services"]
    processor = services["processor"]
    assert processor["environment"]["PMFLOW_DEMO"] == "${PMFLOW_DEMO:-0}"
    assert Settings.model_validate({"demo": _env(processor)["PMFLOW_DEMO"]}).demo is False
    assert "PMFLOW_MCP_CONFIG" not in processor["environment"]
    assert not any("mcp_server" in " ".join(map(str, s.get("entrypoint", [])))
                   for s in services.values())


def test_readme_documents_only_settings_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `PMFLOW_([A-Z_]+)`", readme, flags=re.MULTILINE))
    assert documented, "no PMFLOW_ table in the README"
    assert {d.lower() for d in documented} <= set(Settings.model_fields)


def test_dockerfile_runs_one_non_root_image_for_every_stage() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    froms = re.findall(r"^FROM (\S+)", dockerfile, flags=re.MULTILINE)
    assert froms and all(f == "python:3.11-slim" for f in froms), froms
    users = re.findall(r"^USER (\S+)", dockerfile, flags=re.MULTILINE)
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert 'ENTRYPOINT ["pmflow-gateway"]' in dockerfile
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", ".local-stack"} <= set(ignored)


def test_the_processor_and_its_search_engine_report_health(compose: dict[str, Any]) -> None:
    services = compose["services"]
    port = Settings.model_fields["http_port"].default
    processor = services["processor"]
    assert f"{port}:{port}" in processor["ports"]
    assert f"http://127.0.0.1:{port}/readyz" in " ".join(processor["healthcheck"]["test"])
    assert "/healthz" in " ".join(services["searxng"]["healthcheck"]["test"])
    assert processor["depends_on"]["searxng"]["condition"] == "service_healthy"


def test_docker_compose_itself_reads_the_file_where_it_is_installed() -> None:
    import shutil
    import subprocess

    docker = shutil.which("docker")
    if not docker or subprocess.run([docker, "compose", "version"], capture_output=True,
                                    check=False).returncode != 0:
        pytest.skip("no `docker compose` here: the schema test above stands in for it")
    for demo in ("0", "1"):
        done = subprocess.run([docker, "compose", "config", "-q"], cwd=ROOT, capture_output=True,
                              text=True, check=False, timeout=60,
                              env={"PATH": "/usr/bin:/bin:/usr/local/bin",
                                   "HOME": str(Path.home()), "PMFLOW_DEMO": demo})
        assert done.returncode == 0, done.stderr
