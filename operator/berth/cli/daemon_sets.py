"""DaemonSet pods: one per node the DaemonSet controller would run it on.

Eligibility is the controller's `NodeShouldRunDaemonPod` for a node without the pod yet: the
template's `nodeName`, its `nodeSelector` and required node affinity, and every NoSchedule or
NoExecute taint tolerated by the template's tolerations plus the defaults each daemon pod gets.
Each pod is then pinned to its node the controller's way, by a required node affinity
`matchFields: metadata.name In [node]` that replaces the template's required terms.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from berth.cli.controller_names import generated_name, template_hash
from berth.cli.workload_template import APPS, Workload, make_pod, require_selector
from berth.engine.model.node import Node
from berth.engine.model.parsing import as_bool, as_list, as_map
from berth.engine.model.pod import Pod
from berth.engine.nodematch import first_untolerated_taint, pod_matches_node

__all__ = ["expand_daemon_set"]

# The tolerations the DaemonSet controller adds to every daemon pod (AddOrUpdateDaemonPodTolerations).
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def _daemon_tolerations(spec: Mapping[str, Any]) -> list[Any]:
    tolerations = list(as_list(spec.get("tolerations"), "spec.template.spec.tolerations"))
    wanted = list(_DAEMON_TOLERATIONS)
    if as_bool(spec.get("hostNetwork"), "spec.template.spec.hostNetwork"):
        wanted.append(_HOST_NETWORK_TOLERATION)
    for key, effect in wanted:
        # AddOrUpdateTolerationInPodSpec: an equal toleration is not added twice.
        if not any(
            isinstance(t, Mapping)
            and t.get("key") == key
            and t.get("operator") == "Exists"
            and not t.get("value")
            and t.get("effect") == effect
            for t in tolerations
        ):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    return tolerations


def _pinned_to(spec: Mapping[str, Any], node_name: str) -> dict[str, Any]:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node terms become the node's name."""
    affinity = copy.deepcopy(dict(as_map(spec.get("affinity"), "spec.template.spec.affinity")))
    node_affinity = dict(
        as_map(affinity.get("nodeAffinity"), "spec.template.spec.affinity.nodeAffinity")
    )
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }
    affinity["nodeAffinity"] = node_affinity
    return {**spec, "affinity": affinity}


def _should_run(template_pod: Pod, node: Node) -> bool:
    """NodeShouldRunDaemonPod's `shouldRun` for a node without the DaemonSet's pod yet."""
    if template_pod.node_name and template_pod.node_name != node.name:
        return False
    return pod_matches_node(template_pod, node) and (
        first_untolerated_taint(node.taints, template_pod.tolerations) is None
    )


def expand_daemon_set(workload: Workload, nodes: Sequence[Node]) -> list[Pod]:
    require_selector(workload)
    spec = {**workload.pod_spec, "tolerations": _daemon_tolerations(workload.pod_spec)}
    labels = {
        **workload.labels,
        "controller-revision-hash": template_hash(workload.template),
        "pod-template-generation": str(workload.generation),
    }
    owner = workload.owner(APPS)
    template_pod = make_pod(workload, name=workload.name, owner=owner, labels=labels, spec=spec)
    return [
        make_pod(
            workload,
            name=generated_name(f"{workload.name}-", index),
            owner=owner,
            labels=labels,
            spec=_pinned_to(spec, node.name),
        )
        for index, node in enumerate(nodes)
        if _should_run(template_pod, node)
    ]
