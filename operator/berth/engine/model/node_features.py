"""Node features a pod needs: what NodeDeclaredFeatures infers from a pod's spec.

Kubelets declare, in `node.status.declaredFeatures`, the newer behaviours they implement; a pod
whose spec relies on one (a container rule restarting all containers, host networking inside a
user namespace, bind-mount options on a volume mount) may run only on a node declaring it.
kube-scheduler v1.37 knows nine such features (k8s.io/component-helpers' registry); only the
three below are inferred from a pod for scheduling, the others only for in-place updates.
The inference reads the raw spec, so it happens once, when the pod is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.model.parsing import RawObject, as_list, as_map

__all__ = [
    "BIND_MOUNT_OPTIONS",
    "RESTART_ALL_CONTAINERS",
    "USER_NAMESPACES_HOST_NETWORK",
    "required_node_features",
]

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"


def _containers(spec: Mapping[str, object], section: str) -> list[tuple[str, RawObject]]:
    field = f"spec.{section}"
    return [
        (f"{field}[{index}]", as_map(item, f"{field}[{index}]"))
        for index, item in enumerate(as_list(spec.get(section), field))
    ]


def _restarts_all_containers(spec: Mapping[str, object]) -> bool:
    for where, container in (
        *_containers(spec, "containers"),
        *_containers(spec, "initContainers"),
    ):
        rules = as_list(container.get("restartPolicyRules"), f"{where}.restartPolicyRules")
        for index, rule in enumerate(rules):
            action = as_map(rule, f"{where}.restartPolicyRules[{index}]").get("action")
            if action == "RestartAllContainers":
                return True
    return False


def _host_network_in_user_namespace(spec: Mapping[str, object]) -> bool:
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _uses_bind_mount_options(spec: Mapping[str, object]) -> bool:
    sections = ("containers", "initContainers", "ephemeralContainers")
    for where, container in (item for section in sections for item in _containers(spec, section)):
        mounts = as_list(container.get("volumeMounts"), f"{where}.volumeMounts")
        for index, mount in enumerate(mounts):
            options = as_map(mount, f"{where}.volumeMounts[{index}]").get("bindMountOptions")
            if as_list(options, f"{where}.volumeMounts[{index}].bindMountOptions"):
                return True
    return False


_INFERENCES = (
    (RESTART_ALL_CONTAINERS, _restarts_all_containers),
    (USER_NAMESPACES_HOST_NETWORK, _host_network_in_user_namespace),
    (BIND_MOUNT_OPTIONS, _uses_bind_mount_options),
)


def required_node_features(spec: Mapping[str, object]) -> frozenset[str]:
    """The features a node must declare to run a pod with this spec; raises `FieldError`."""
    return frozenset(name for name, needs in _INFERENCES if needs(spec))
