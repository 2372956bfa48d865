"""Pod Security Standards, "restricted" profile (Kubernetes v1.33), as the admission
controller checks a pod spec, plus the read-only root filesystem this project asks for.
Each rule is the profile's own; a violation names the field."""

from __future__ import annotations

from typing import Any

# Volumes the restricted profile allows (hostPath and every in-tree driver are refused).
ALLOWED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                             "persistentVolumeClaim", "projected", "secret"})
ALLOWED_SECCOMP = frozenset({"RuntimeDefault", "Localhost"})


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """Every way `pod` (a PodSpec) breaks the restricted profile or has a writable root."""
    found: list[str] = []
    pod_context = pod.get("securityContext") or {}
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            found.append(f"spec.{flag}")
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            found.append(f"volume {volume['name']}: {', '.join(sorted(kinds))}")
    if pod_context.get("runAsUser") == 0:
        found.append("spec.securityContext.runAsUser: 0")
    for container in [*(pod.get("initContainers") or []), *pod.get("containers", [])]:
        found += _container_violations(container, pod_context)
    return found


def _container_violations(container: dict[str, Any], pod_context: dict[str, Any]) -> list[str]:
    name, context = container["name"], container.get("securityContext") or {}
    found = []
    if context.get("privileged"):
        found.append(f"{name}: privileged")
    if context.get("allowPrivilegeEscalation") is not False:
        found.append(f"{name}: allowPrivilegeEscalation must be false")
    if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot")):
        found.append(f"{name}: runAsNonRoot must be true")
    if context.get("runAsUser") == 0:
        found.append(f"{name}: runAsUser 0")
    seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {})
    if seccomp.get("type") not in ALLOWED_SECCOMP:
        found.append(f"{name}: seccompProfile must be RuntimeDefault or Localhost")
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        found.append(f"{name}: capabilities must drop ALL")
    if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
        found.append(f"{name}: only NET_BIND_SERVICE may be added")
    if any(port.get("hostPort") for port in container.get("ports") or []):
        found.append(f"{name}: hostPort")
    if context.get("readOnlyRootFilesystem") is not True:
        found.append(f"{name}: readOnlyRootFilesystem must be true")
    return found
