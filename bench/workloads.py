"""scheduler_perf's workloads, as this benchmark runs them: names, templates and sizes.

The pod and node bodies follow test/integration/scheduler_perf/templates/ of
kubernetes/kubernetes (node-default, pod-default, pod-with-node-affinity,
pod-with-pod-anti-affinity, pod-with-topology-spreading,
pod-high-priority-large-cpu, churn/*); the workload shapes follow
misc/performance-config.yaml and affinity/performance-config.yaml. Deviations,
each forced by this control plane, are listed in DEVIATIONS and in the results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CHURN_LABEL",
    "CHURN_NAMESPACE",
    "DEVIATIONS",
    "HIGH_PRIORITY_CLASS",
    "INIT_NAMESPACE",
    "MEASURED_NAMESPACE",
    "SUITES",
    "WORKLOADS",
    "Churn",
    "Workload",
    "churn_node_manifest",
    "node_template_for",
    "pod_manifests",
    "service_manifest",
]

INIT_NAMESPACE = "sched-0"
MEASURED_NAMESPACE = "sched-1"
CHURN_NAMESPACE = "churn"
# Churn pods (unschedulable by design) carry this label; the null binder leaves them alone.
CHURN_LABEL = "bench.berth.dev/churn"
HIGH_PRIORITY_CLASS = "bench-high-priority"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

Manifest = dict[str, Any]
PodFactory = Callable[[str, str], Manifest]  # (name, schedulerName) -> Pod

DEVIATIONS = (
    "Nodes carry the kubernetes.io/hostname (and os/arch) labels a kubelet would set; "
    "upstream's node-default.yaml has none, but required anti-affinity on hostname needs it.",
    "pod-high-priority-large-cpu sets `priority: 10` directly upstream (the Priority admission "
    "plugin is off there); here it stays on, so the pods name a PriorityClass of value 10.",
    "Pods are created with explicit names (pod-00001...) instead of generateName.",
)

_DEFAULT_RESOURCES = {
    "limits": {"cpu": "100m", "memory": "500Mi"},
    "requests": {"cpu": "100m", "memory": "500Mi"},
}


def _pod(
    name: str,
    scheduler: str,
    *,
    labels: Mapping[str, str] | None = None,
    resources: Mapping[str, Any] = _DEFAULT_RESOURCES,
    **spec: Any,
) -> Manifest:
    container = {
        "image": PAUSE_IMAGE,
        "name": "pause",
        "ports": [{"containerPort": 80}],
        "resources": {key: dict(value) for key, value in resources.items()},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "schedulerName": scheduler,
            "containers": [container],
            # Nothing runs these pods; let deletes (churn) complete at once.
            "terminationGracePeriodSeconds": 0,
            **spec,
        },
    }


def pod_default(name: str, scheduler: str) -> Manifest:
    return _pod(name, scheduler)


def pod_with_node_affinity(name: str, scheduler: str) -> Manifest:
    term = {
        "matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone1", "zone2"]}
        ]
    }
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    return _pod(name, scheduler, affinity=affinity)


def pod_with_pod_anti_affinity(name: str, scheduler: str) -> Manifest:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
        "namespaces": [INIT_NAMESPACE, MEASURED_NAMESPACE],
    }
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return _pod(name, scheduler, labels={"color": "green", "name": "test"}, affinity=affinity)


def pod_with_topology_spreading(name: str, scheduler: str) -> Manifest:
    constraint = {
        "maxSkew": 5,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return _pod(name, scheduler, labels={"color": "blue"}, topologySpreadConstraints=[constraint])


def pod_high_priority_large_cpu(name: str, scheduler: str) -> Manifest:
    return _pod(
        name,
        scheduler,
        labels={CHURN_LABEL: "true"},
        resources={"requests": {"cpu": "9", "memory": "500Mi"}},
        priorityClassName=HIGH_PRIORITY_CLASS,
    )


def service_manifest(name: str) -> Manifest:
    """templates/churn/service-default.yaml."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "selector": {"app": "foo"},
            "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}],
        },
    }


def churn_node_manifest(name: str) -> Manifest:
    """templates/churn/node-default.yaml: Ready, but room for no pods at all."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": {"pods": "0"},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


@dataclass(frozen=True)
class Churn:
    """scheduler_perf's churn op during the measured phase.

    `create`: one new pod of `pod` every interval (Unschedulable).
    `recreate`: every interval, delete the previous node, pod and service and
    create new ones (SchedulingWithMixedChurn, number: 1).
    """

    mode: str
    interval_seconds: float
    pod: PodFactory = pod_high_priority_large_cpu
    with_node_and_service: bool = False


@dataclass(frozen=True)
class Workload:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    measured_pod: PodFactory = pod_default
    init_pod: PodFactory = pod_default
    zones: tuple[str, ...] = ()
    churn: Churn | None = None
    upstream: str = ""  # the upstream workload(s) this corresponds to, and the cut
    checks: tuple[str, ...] = field(default=())
    # A backlog drain (bench/backlog.py): the measured pods exist, pending, before the
    # scheduler starts; no init pods.
    backlog: bool = False


def pod_manifests(factory: PodFactory, count: int, scheduler_name: str) -> list[Manifest]:
    """`count` pods of one template, named pod-00000, pod-00001, ..., for one scheduler."""
    return [factory(f"pod-{i:05d}", scheduler_name) for i in range(count)]


def node_template_for(workload: Workload) -> dict[str, Any]:
    """Keyword arguments for berth.controlplane.NodeTemplate: node-default.yaml's shape."""
    return {
        "name_prefix": "scheduler-perf",
        "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "zones": workload.zones,
        "region": None,
    }


_MOON = ("moon-1", "moon-2", "moon-3")

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "SchedulingBasic/500Nodes",
            nodes=500,
            init_pods=500,
            measured_pods=1000,
            upstream="SchedulingBasic/500Nodes, exact",
        ),
        Workload(
            "SchedulingBasic/5000Nodes_5000Pods",
            nodes=5000,
            init_pods=1000,
            measured_pods=5000,
            upstream="between SchedulingBasic/5000Nodes (1000 measured) and 5000Nodes_10000Pods",
        ),
        Workload(
            "SchedulingNodeAffinity/5000Nodes",
            nodes=5000,
            init_pods=2000,
            measured_pods=5000,
            init_pod=pod_with_node_affinity,
            measured_pod=pod_with_node_affinity,
            zones=("zone1",),
            upstream="5000/5000/10000 upstream; init 2000 and measured 5000 here",
            checks=("node-affinity",),
        ),
        Workload(
            "SchedulingPodAntiAffinity/500Nodes",
            nodes=500,
            init_pods=100,
            measured_pods=400,
            init_pod=pod_with_pod_anti_affinity,
            measured_pod=pod_with_pod_anti_affinity,
            upstream="SchedulingPodAntiAffinity/500Nodes, exact",
            checks=("anti-affinity",),
        ),
        Workload(
            "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
            nodes=5000,
            init_pods=1000,
            measured_pods=2000,
            init_pod=pod_with_pod_anti_affinity,
            measured_pod=pod_with_pod_anti_affinity,
            upstream="SchedulingPodAntiAffinity/5000Nodes_2000Pods, exact",
            checks=("anti-affinity",),
        ),
        Workload(
            "TopologySpreading/5000Nodes_2000Pods",
            nodes=5000,
            init_pods=5000,
            measured_pods=2000,
            measured_pod=pod_with_topology_spreading,
            zones=_MOON,
            upstream="TopologySpreading/5000Nodes (5000/5000/2000), exact",
            checks=("spread",),
        ),
        Workload(
            "Unschedulable/500Nodes/10Init/1kPods",
            nodes=500,
            init_pods=10,
            measured_pods=1000,
            churn=Churn(mode="create", interval_seconds=0.2),
            upstream="Unschedulable/500Nodes/10Init/1kPods, exact",
        ),
        Workload(
            "SchedulingWithMixedChurn/1000Nodes",
            nodes=1000,
            init_pods=0,
            measured_pods=1000,
            churn=Churn(mode="recreate", interval_seconds=1.0, with_node_and_service=True),
            upstream="SchedulingWithMixedChurn/1000Nodes, exact",
        ),
        # What a scheduler faces after a restart or a failover (issue 13); not upstream.
        Workload(
            "BacklogDrain/5000Nodes_10000Pods",
            nodes=5000,
            init_pods=0,
            measured_pods=10000,
            upstream="none upstream: 10,000 pods pending before the scheduler starts",
            backlog=True,
        ),
        Workload(
            "BacklogDrain/500Nodes_1000Pods",
            nodes=500,
            init_pods=0,
            measured_pods=1000,
            upstream="none upstream: the backlog drain at a tenth of its size (smoke check)",
            backlog=True,
        ),
        # Start-up to the first decision (issue 13: short workloads show start-up costs).
        Workload(
            "FirstDecision/500Nodes_1Pod",
            nodes=500,
            init_pods=0,
            measured_pods=1,
            upstream="none upstream: one pod pending before the scheduler starts, 500 nodes",
            backlog=True,
        ),
        # The 10,000-node points and peak memory at 10,000 pods (issue 13).
        Workload(
            "SchedulingBasic/10000Nodes_5000Pods",
            nodes=10000,
            init_pods=1000,
            measured_pods=5000,
            upstream="SchedulingBasic at 10,000 nodes; 5,000 measured pods",
        ),
        Workload(
            "TopologySpreading/10000Nodes_2000Pods",
            nodes=10000,
            init_pods=5000,
            measured_pods=2000,
            measured_pod=pod_with_topology_spreading,
            zones=_MOON,
            upstream="TopologySpreading/5000Nodes's pods on 10,000 nodes",
            checks=("spread",),
        ),
        Workload(
            "SchedulingBasic/5000Nodes_10000Pods",
            nodes=5000,
            init_pods=1000,
            measured_pods=10000,
            upstream="SchedulingBasic/5000Nodes_10000Pods, exact (peak RSS at 10,000 pods)",
        ),
    )
}

_PROTOCOL = (
    "SchedulingBasic/500Nodes",
    "SchedulingBasic/5000Nodes_5000Pods",
    "SchedulingNodeAffinity/5000Nodes",
    "SchedulingPodAntiAffinity/500Nodes",
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
    "TopologySpreading/5000Nodes_2000Pods",
    "Unschedulable/500Nodes/10Init/1kPods",
    "SchedulingWithMixedChurn/1000Nodes",
)

SUITES: dict[str, tuple[str, ...]] = {
    "quick": ("SchedulingBasic/500Nodes", "SchedulingPodAntiAffinity/500Nodes"),
    "full": _PROTOCOL,
    "backlog": ("BacklogDrain/5000Nodes_10000Pods",),
    "backlog-smoke": ("BacklogDrain/500Nodes_1000Pods",),
    "first-decision": ("FirstDecision/500Nodes_1Pod",),
    "scale": (
        "SchedulingBasic/10000Nodes_5000Pods",
        "TopologySpreading/10000Nodes_2000Pods",
        "SchedulingBasic/5000Nodes_10000Pods",
    ),
    # Everything issue 13 asks for, in one session: `make bench-speed`.
    "speed": (
        *_PROTOCOL,
        "BacklogDrain/5000Nodes_10000Pods",
        "SchedulingBasic/10000Nodes_5000Pods",
        "TopologySpreading/10000Nodes_2000Pods",
        "SchedulingBasic/5000Nodes_10000Pods",
    ),
}
