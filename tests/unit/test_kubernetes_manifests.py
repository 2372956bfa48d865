"""deploy/kubernetes/ is valid Kubernetes (against the API's JSON schemas, offline, strict:
no unknown fields), every pod meets Pod Security "restricted" with a read-only root, the
network policies let the workers reach only the broker, the database, the search engine, the
collector and public web ports, and it agrees with the code: probes on the worker's routes,
the KEDA triggers on the stages' real consumer groups and source topics, no more replicas
than partitions, the live search pointed at the SearXNG Service."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest

from pmflow_gateway.cli import STAGE_NAMES
from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from pmflow_gateway.streams.stages import STAGES
from tests.support.pod_security import restricted_violations

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


def pod_templates() -> dict[str, dict[str, Any]]:
    return {name: d["spec"]["template"]["spec"] for name, d in by_kind("Deployment").items()}


@pytest.mark.parametrize("name", sorted(pod_templates()))
def test_every_pod_meets_the_restricted_profile_with_a_read_only_root(name: str) -> None:
    assert restricted_violations(pod_templates()[name]) == []


@pytest.mark.parametrize(("change", "violation"), [
    (lambda c, p: c["securityContext"].pop("allowPrivilegeEscalation"), "allowPrivilegeEscalation"),
    (lambda c, p: c["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]), "NET_BIND"),
    (lambda c, p: c["securityContext"]["capabilities"].update(drop=[]), "drop ALL"),
    (lambda c, p: p["securityContext"].pop("seccompProfile"), "seccompProfile"),
    (lambda c, p: p["securityContext"].update(runAsNonRoot=False), "runAsNonRoot"),
    (lambda c, p: c["securityContext"].update(readOnlyRootFilesystem=False), "readOnlyRoot"),
    (lambda c, p: p["volumes"].append({"name": "h", "hostPath": {"path": "/"}}), "hostPath"),
    (lambda c, p: p.update(hostNetwork=True), "hostNetwork"),
])
def test_the_profile_check_bites(change: Any, violation: str) -> None:
    pod = copy.deepcopy(pod_templates()["pmflow-gateway"])
    change(pod["containers"][0], pod)
    assert any(violation in found for found in restricted_violations(pod))


def test_the_workers_search_through_the_searxng_service_with_json_on() -> None:
    config = by_kind("ConfigMap")["pmflow-gateway"]["data"]
    assert config["PMFLOW_LIVE_SEARCH_ENGINE"] == "searxng" and "PMFLOW_DEMO" not in config
    assert "PMFLOW_MCP_CONFIG" not in config  # optional; no demo corpus server is deployed
    endpoint = urlsplit(config["PMFLOW_LIVE_SEARCH_ENDPOINT"])
    service = by_kind("Service")[endpoint.hostname or ""]
    [port] = service["spec"]["ports"]
    assert port["port"] == endpoint.port
    searxng = by_kind("Deployment")["pmflow-searxng"]
    assert service["spec"]["selector"] == searxng["spec"]["selector"]["matchLabels"]
    settings = yaml.safe_load(by_kind("ConfigMap")["pmflow-searxng"]["data"]["settings.yml"])
    assert "json" in settings["search"]["formats"] and settings["server"]["limiter"] is False
    [container] = searxng["spec"]["template"]["spec"]["containers"]
    assert container["image"].rpartition(":")[2][:1].isdigit()  # pinned, never latest


def _egress(policy: str) -> list[dict[str, Any]]:
    return by_kind("NetworkPolicy")[policy]["spec"]["egress"]  # type: ignore[no-any-return]


def _ports(rule: dict[str, Any]) -> set[int]:
    return {p["port"] for p in rule["ports"]}


def test_the_workers_egress_is_the_broker_database_search_engine_and_public_web() -> None:
    config = by_kind("ConfigMap")["pmflow-gateway"]["data"]
    policy = by_kind("NetworkPolicy")["pmflow-gateway"]["spec"]
    workers = by_kind("Deployment")["pmflow-gateway"]["spec"]["selector"]["matchLabels"]
    assert policy["podSelector"]["matchLabels"] == workers
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    rules = _egress("pmflow-gateway")
    assert set().union(*map(_ports, rules)) == {53, 9092, 5432, 4318, 8080, 80, 443}
    assert int(config["PMFLOW_KAFKA_BOOTSTRAP"].rpartition(":")[2]) in set().union(
        *map(_ports, rules))
    [search] = [r for r in rules if _ports(r) == {8080}]
    assert search["to"][0]["podSelector"]["matchLabels"] == (
        by_kind("Deployment")["pmflow-searxng"]["spec"]["selector"]["matchLabels"])
    for policy_name in ("pmflow-gateway", "pmflow-searxng"):
        [web] = [r for r in _egress(policy_name) if _ports(r) == {80, 443}]
        block = web["to"][0]["ipBlock"]
        assert block["cidr"] == "0.0.0.0/0"
        assert {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"} <= set(
            block["except"])
    searxng_in = by_kind("NetworkPolicy")["pmflow-searxng"]["spec"]["ingress"]
    assert [rule["from"][0]["podSelector"]["matchLabels"] for rule in searxng_in] == [workers]
