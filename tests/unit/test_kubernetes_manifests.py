"""deploy/kubernetes/ is valid Kubernetes (against the API's JSON schemas, offline, strict:
no unknown fields) and agrees with the code: probes on the worker's routes, the KEDA triggers
on the stages' real consumer groups and source topics, no more replicas than partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from pmflow_gateway.cli import STAGE_NAMES
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.stages import STAGES

yaml = pytest.importorskip("yaml", reason="PyYAML is a test dependency (pip install -e '.[test]')")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.33.0"  # the oldest release the manifests must work on


def documents() -> list[dict[str, Any]]:
    return [doc for path in sorted(DEPLOY.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in documents() if d["kind"] == kind}


@pytest.mark.parametrize("doc", [d for d in documents() if d["apiVersion"] != "keda.sh/v1alpha1"],
                         ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_resource_validates_against_the_kubernetes_schema(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_an_unknown_field_is_caught() -> None:
    deployment = by_kind("Deployment")["pmflow-gateway"]
    broken = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_the_workers_probe_their_own_routes_and_have_a_disruption_budget() -> None:
    deployment = by_kind("Deployment")["pmflow-gateway"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    [port] = container["ports"]
    config = by_kind("ConfigMap")["pmflow-gateway"]["data"]
    assert port["containerPort"] == int(config["PMFLOW_HTTP_PORT"])
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert by_kind("PodDisruptionBudget")["pmflow-gateway"]["spec"]["selector"]["matchLabels"] \
        == selector
    assert Settings.model_validate(
        {k.removeprefix("PMFLOW_").lower(): v for k, v in config.items()
         if k.startswith("PMFLOW_")})  # every variable is a setting with a valid value


def test_keda_scales_the_workers_on_each_stage_group_lag() -> None:
    [scaled] = by_kind("ScaledObject").values()
    config = by_kind("ConfigMap")["pmflow-gateway"]["data"]
    topics = Topics(prefix=config["PMFLOW_TOPIC_PREFIX"])
    assert scaled["spec"]["scaleTargetRef"]["name"] in by_kind("Deployment")
    triggers = {t["metadata"]["consumerGroup"]: t["metadata"] for t in scaled["spec"]["triggers"]
                if t["type"] == "kafka"}
    assert set(triggers) == {f"{topics.prefix}gateway-{name}" for name in STAGE_NAMES}
    for name, stage in STAGES.items():
        trigger = triggers[f"{topics.prefix}gateway-{name}"]
        assert trigger["topic"] == stage.source(topics)
        assert trigger["bootstrapServers"] == config["PMFLOW_KAFKA_BOOTSTRAP"]
        assert int(trigger["lagThreshold"]) > 0
    assert 1 <= scaled["spec"]["minReplicaCount"] <= scaled["spec"]["maxReplicaCount"] \
        <= int(config["PMFLOW_TOPIC_PARTITIONS"])


def test_keda_scales_the_evidence_stage_on_the_wait_the_workers_export() -> None:
    from pmflow_gateway.streams.health import QUEUE_WAIT

    [scaled] = by_kind("ScaledObject").values()
    [waited] = [t for t in scaled["spec"]["triggers"] if t["type"] == "prometheus"]
    assert f'{QUEUE_WAIT._name}_bucket{{stage="evidence"}}' in waited["metadata"]["query"]
    assert "evidence" in STAGES and float(waited["metadata"]["threshold"]) > 0
