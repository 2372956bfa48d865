"""docker-compose.yml, the Dockerfile and the mounted MCP config agree with each other and
with the code. No Docker engine runs here, so the file is validated against the Compose
Specification's JSON Schema and checked service by service."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from pmflow_gateway.settings import Settings

yaml = pytest.importorskip("yaml", reason="PyYAML is a test dependency (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_SCHEMA = ROOT / "tests" / "data" / "compose-spec.schema.json"
SERVICES = {"kafka", "jaeger", "postgres", "topics-init", "mcp", "processor"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8")))


def _env(service: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in service.get("environment", {}).items()}


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
    for name in ("topics-init", "mcp", "processor"):
        assert services[name]["build"] == "."
    assert services["topics-init"]["command"][:2] == ["topics", "create"]
    assert services["processor"]["command"][0] == "run"
    assert services["mcp"]["entrypoint"] == ["python", "-m", "pmflow_gateway.mcp_server"]
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


def test_mounted_mcp_config_points_at_the_mcp_service(compose: dict[str, Any]) -> None:
    processor = compose["services"]["processor"]
    mounted = {target: source for source, target, *_ in
               (v.split(":") for v in processor["volumes"])}
    config_path = _env(processor)["PMFLOW_MCP_CONFIG"]
    source = ROOT / mounted[config_path]
    servers = tomllib.loads(source.read_text(encoding="utf-8"))["servers"]
    mcp_command = compose["services"]["mcp"]["command"]
    port = int(mcp_command[mcp_command.index("--port") + 1])
    assert mcp_command[mcp_command.index("--transport") + 1] == "http"
    assert mcp_command[mcp_command.index("--host") + 1] == "0.0.0.0"
    (server,) = servers
    url = urlsplit(server["url"])
    assert server["transport"] == "http" and (url.hostname, url.port) == ("mcp", port)
    assert server["search_tool"] == "search"


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


def test_the_processor_and_mcp_server_report_health(compose: dict[str, Any]) -> None:
    services = compose["services"]
    port = Settings.model_fields["http_port"].default
    processor = services["processor"]
    assert f"{port}:{port}" in processor["ports"]
    assert f"http://127.0.0.1:{port}/readyz" in " ".join(processor["healthcheck"]["test"])
    assert "8765" in " ".join(services["mcp"]["healthcheck"]["test"])
    assert processor["depends_on"]["mcp"]["condition"] == "service_healthy"
