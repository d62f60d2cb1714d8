"""Every default plugin, observed through real pods and nodes, against the reference kube-scheduler.

Where it makes sense the same pod spec is also given to the reference
kube-scheduler (`schedulerName: default-scheduler`) on the same node group: a
pod that fits nowhere must get the very same PodScheduled=False message from
both, and a pod that fits must land on the same kind of node. Pods that only
set the scene are created already bound (`spec.nodeName`), so neither
scheduler is involved in them.
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    GROUP_LABEL,
    SCHEDULER,
    both_unschedulable,
    create,
    events,
    get_pod,
    make_nodes,
    node_kind,
    patch,
    place_in_turn,
    pod_body,
    poll,
    scheduled_condition,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster

SMALL = {"cpu": "1", "memory": "1Gi", "pods": "110"}
BIG = {"cpu": "4", "memory": "16Gi", "pods": "110"}
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _node_names(group: str, kind: str, count: int) -> list[str]:
    return [f"{group}-{kind}-{index:05d}" for index in range(count)]


def _anti_affinity(label: str) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": label}}, "topologyKey": HOSTNAME}
            ]
        }
    }


# ---------------------------------------------------------------------- NodeResourcesFit


@pytest.mark.parametrize(
    ("request_", "allocatable", "crowd", "reason"),
    [
        ({"cpu": "2"}, SMALL, 0, "Insufficient cpu"),
        ({"cpu": "100m", "memory": "2Gi"}, SMALL, 0, "Insufficient memory"),
        ({"cpu": "100m"}, {**SMALL, "pods": "1"}, 1, "Too many pods"),
    ],
    ids=["cpu", "memory", "pod-count"],
)
def test_resources_fit_message_equals_kube_schedulers(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
    request_: dict[str, str],
    allocatable: dict[str, str],
    crowd: int,
    reason: str,
) -> None:
    group = make_nodes(control_plane, 2, allocatable=allocatable)
    for node in _node_names(group, "n", 2):
        for index in range(crowd):
            create(control_plane, namespace, pod_body(f"{node}-{index}", None, nodeName=node))
    message = both_unschedulable(control_plane, berth, namespace, group, **request_)
    assert f"2 {reason}" in message


def test_resources_fit_picks_the_node_with_room(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 2, kind="small", allocatable=SMALL)
    make_nodes(control_plane, 1, group=group, kind="big", allocatable=BIG)
    ours, theirs = place_in_turn(control_plane, berth, namespace, group, cpu="1500m")
    assert node_kind(ours, group) == node_kind(theirs, group) == "big"


# ---------------------------------------------------------------------- TaintToleration


def test_untolerated_no_schedule_taint_message_equals_kube_schedulers(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    taint = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
    group = make_nodes(control_plane, 2, taints=[taint])
    message = both_unschedulable(control_plane, berth, namespace, group)
    assert "2 node(s) had untolerated taint(s)" in message

    toleration = {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}
    create(control_plane, namespace, pod_body("tolerates", group, tolerations=[toleration]))
    assert wait_bound(control_plane, namespace, ["tolerates"])["tolerates"].startswith(group)


def test_prefer_no_schedule_taint_is_avoided_like_kube_scheduler(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    taint = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}
    group = make_nodes(control_plane, 2, kind="tainted", taints=[taint])
    make_nodes(control_plane, 1, group=group, kind="plain")
    ours, theirs = place_in_turn(control_plane, berth, namespace, group)
    assert node_kind(ours, group) == node_kind(theirs, group) == "plain"


# ---------------------------------------------------------------------- NodeAffinity


def _node_affinity(*, required: bool, value: str) -> dict[str, Any]:
    expression = {"key": "disk", "operator": "In", "values": [value]}
    if required:
        terms = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}
    preferred = [{"weight": 100, "preference": {"matchExpressions": [expression]}}]
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}


@pytest.mark.parametrize("required", [True, False], ids=["required", "preferred"])
def test_node_affinity_places_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
    required: bool,
) -> None:
    group = make_nodes(control_plane, 2, kind="hdd", labels={"disk": "hdd"})
    make_nodes(control_plane, 1, group=group, kind="ssd", labels={"disk": "ssd"})
    affinity = _node_affinity(required=required, value="ssd")
    ours, theirs = place_in_turn(control_plane, berth, namespace, group, affinity=affinity)
    assert node_kind(ours, group) == node_kind(theirs, group) == "ssd"


def test_required_node_affinity_message_equals_kube_schedulers(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 2, labels={"disk": "hdd"})
    affinity = _node_affinity(required=True, value="nvme")
    message = both_unschedulable(control_plane, berth, namespace, group, affinity=affinity)
    assert "node(s) didn't match Pod's node affinity/selector" in message


# ---------------------------------------------------------------------- NodePorts


def test_host_port_conflict(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    port = [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]
    group = make_nodes(control_plane, 2)
    first, second = _node_names(group, "n", 2)
    wait_berth_sees_all_nodes(control_plane, berth)
    create(control_plane, namespace, pod_body("holder-0", None, ports=port, nodeName=first))
    create(control_plane, namespace, pod_body("avoids", group, ports=port))
    assert wait_bound(control_plane, namespace, ["avoids"])["avoids"] == second

    # Both nodes now hold the port: the same pod fits nowhere, for either scheduler.
    message = both_unschedulable(control_plane, berth, namespace, group, ports=port)
    assert "2 node(s) didn't have free ports for the requested pod ports" in message


# ---------------------------------------------------------------------- InterPodAffinity


def test_pod_anti_affinity_spreads_over_hostnames(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 3)
    spec = {"labels": {"app": "web"}, "affinity": _anti_affinity("web")}
    replicas = [pod_body(f"web-{index}", group, **spec) for index in range(3)]
    wait_berth_sees_all_nodes(control_plane, berth)
    create(control_plane, namespace, *replicas)  # one burst: each decision must see the last
    placement = wait_bound(control_plane, namespace, [pod["metadata"]["name"] for pod in replicas])
    assert sorted(placement.values()) == _node_names(group, "n", 3)

    message = both_unschedulable(control_plane, berth, namespace, group, **spec)
    assert "3 node(s) didn't match pod anti-affinity rules" in message


def test_pod_affinity_follows_the_matching_pod(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 3)
    target = _node_names(group, "n", 3)[1]
    create(control_plane, namespace, pod_body("db", None, labels={"app": "db"}, nodeName=target))

    def affinity(app: str) -> dict[str, Any]:
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}
        return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}

    ours, theirs = place_in_turn(control_plane, berth, namespace, group, affinity=affinity("db"))
    assert ours == theirs == target

    message = both_unschedulable(
        control_plane, berth, namespace, group, name="lonely-", affinity=affinity("absent")
    )
    assert "3 node(s) didn't match pod affinity rules" in message


# ---------------------------------------------------------------------- PodTopologySpread


def _zone_spread(app: str) -> dict[str, Any]:
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
    }
    return {"labels": {"app": app}, "topologySpreadConstraints": [constraint]}


def test_topology_spread_over_zones(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 3, zones=("zone-a", "zone-b", "zone-c"), allocatable=BIG)
    pods = [pod_body(f"s-{index}", group, **_zone_spread("s")) for index in range(6)]
    # Seeing one zone only, every pod would fit it (skew is measured over known domains).
    wait_berth_sees_all_nodes(control_plane, berth)
    create(control_plane, namespace, *pods)
    placement = wait_bound(control_plane, namespace, [pod["metadata"]["name"] for pod in pods])
    per_node = sorted(list(placement.values()).count(node) for node in set(placement.values()))
    assert per_node == [2, 2, 2]


def test_topology_spread_message_equals_kube_schedulers(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 1, kind="a", zones=("zone-a",))
    taint = {"key": "closed", "value": "yes", "effect": "NoSchedule"}
    make_nodes(control_plane, 1, group=group, kind="b", zones=("zone-b",), taints=[taint])
    crowded = f"{group}-a-00000"
    for index in range(2):
        create(
            control_plane,
            namespace,
            pod_body(f"there-{index}", None, labels={"app": "s"}, nodeName=crowded),
        )
    # zone-a would be 3 against zone-b's 0 (a tainted node still counts as a domain).
    message = both_unschedulable(control_plane, berth, namespace, group, **_zone_spread("s"))
    assert "1 node(s) didn't match pod topology spread constraints" in message
    assert "node(s) had untolerated taint(s)" in message


# ---------------------------------------------------------------------- NodeUnschedulable


def test_cordoned_nodes_message_and_uncordon(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 2, unschedulable=True)
    message = both_unschedulable(control_plane, berth, namespace, group)
    assert "2 node(s) were unschedulable" in message

    uncordoned = _node_names(group, "n", 2)[0]
    patch(control_plane, f"/api/v1/nodes/{uncordoned}", {"spec": {"unschedulable": False}})
    # The node update requeues the pod long before the 5-minute flush.
    placement = wait_bound(control_plane, namespace, ["ours", "theirs"], timeout=30)
    assert placement == {"ours": uncordoned, "theirs": uncordoned}


# ---------------------------------------------------------------------- SchedulingGates


def test_gated_pod_waits_until_its_gate_is_removed(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 1)
    gates = [{"name": "example.com/quota"}]
    create(
        control_plane,
        namespace,
        pod_body("gated", group, schedulingGates=gates),
        pod_body("free", group),
    )
    wait_bound(control_plane, namespace, ["free"])
    gated = get_pod(control_plane, namespace, "gated")
    assert not gated["spec"].get("nodeName")
    condition = scheduled_condition(gated)
    assert condition is not None
    assert condition["reason"] == "SchedulingGated"  # the API server's, untouched by Berth
    assert not events(control_plane, namespace, name="gated", reason="FailedScheduling")

    patch(
        control_plane,
        f"/api/v1/namespaces/{namespace}/pods/gated",
        {"spec": {"schedulingGates": None}},
    )
    assert wait_bound(control_plane, namespace, ["gated"], timeout=30)["gated"].startswith(group)


# ---------------------------------------------------------------------- VolumeBinding


def test_pod_with_an_unbound_claim_gets_kube_schedulers_unschedulable_message(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    """A claim of no class is Immediate: VolumeBinding waits for the PV controller to bind it
    (see test_berth_volume_binding.py for the side-by-side cases)."""
    group = make_nodes(control_plane, 1)
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    volume = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    create(control_plane, namespace, claim, pod_body("claims", group, volumes=[volume]))
    message = wait_unschedulable(control_plane, namespace, "claims")
    assert "pod has unbound immediate PersistentVolumeClaims" in message
    condition = scheduled_condition(get_pod(control_plane, namespace, "claims"))
    assert condition is not None
    assert condition["reason"] == "Unschedulable"
    failures = events(control_plane, namespace, name="claims", reason="FailedScheduling")
    assert failures
    assert {event.get("reportingComponent") for event in failures} == {SCHEDULER}


# ---------------------------------------------------------------------- what Berth writes on pods


def test_nothing_but_the_binding_is_written_on_pods(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 1, allocatable=SMALL)
    create(control_plane, namespace, pod_body("fits", group), pod_body("never", group, cpu="2"))
    node = wait_bound(control_plane, namespace, ["fits"])["fits"]
    wait_unschedulable(control_plane, namespace, "never")
    for name in ("fits", "never"):
        metadata = get_pod(control_plane, namespace, name)["metadata"]
        assert not metadata.get("annotations"), f"{name}: Berth must not annotate pods"
        assert not metadata.get("finalizers"), f"{name}: Berth must not add finalizers"
    scheduled = poll(
        lambda: events(control_plane, namespace, name="fits", reason="Scheduled"),
        timeout=30,
        description="the Scheduled event",  # posted after the binding, asynchronously
    )
    assert [event["message"] for event in scheduled] == [
        f"Successfully assigned {namespace}/fits to {node}"
    ]
    assert scheduled[0]["reportingComponent"] == SCHEDULER
    assert get_pod(control_plane, namespace, "fits")["spec"]["nodeSelector"] == {GROUP_LABEL: group}
