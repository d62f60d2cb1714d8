"""VolumeRestrictions, NodeVolumeLimits and VolumeZone side by side with kube-scheduler.

Each scene is built from real storage objects on the shared control plane (its
kube-controller-manager binds the pre-bound claims), then the same pod spec goes to
Berth and to kube-scheduler (`schedulerName: default-scheduler`), each with claims of
its own where using one would change the other's answer. A pod that fits nowhere must
get the very same PodScheduled=False message and FailedScheduling note from both; a
pod that fits must land on the same node.

Storage objects reach Berth on watches of their own, so a message is polled until
Berth's matches (or the deadline passes) rather than taken from its first attempt.
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.processes import ManagedProcess
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    events,
    get_pod,
    make_nodes,
    pod_body,
    poll,
    scheduled_condition,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)
from tests.cluster.storage import (
    ZONE_LABEL,
    CsiNodeDriver,
    claim_body,
    create_storage,
    csi_node_body,
    pod_volume,
    wait_claims_bound,
    zone_volume_body,
)

pytestmark = pytest.mark.cluster

DRIVER = "attach.test.berth.dev"


def _node_names(group: str, count: int) -> list[str]:
    return [f"{group}-n-{index:05d}" for index in range(count)]


def _bound_claims(
    plane: LocalControlPlane, namespace: str, volumes: list[dict[str, Any]]
) -> list[str]:
    """One claim pre-bound to each volume (no class), created and bound; their names."""
    create_storage(plane, *volumes)
    claims = [
        claim_body(class_name="", volume_name=volume["metadata"]["name"]) for volume in volumes
    ]
    names = create_storage(plane, *claims, namespace=namespace)
    wait_claims_bound(plane, namespace, names)
    return names


def _holders(plane: LocalControlPlane, namespace: str, nodes: list[str], claims: list[str]) -> None:
    """A pod already bound to each node, mounting the claim of the same index."""
    for index, (node, claim) in enumerate(zip(nodes, claims, strict=True)):
        holder = pod_body(f"holder-{index}", None, nodeName=node, volumes=[pod_volume(claim)])
        create(plane, namespace, holder)


def _csi_volume(access_modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict[str, Any]:
    """A CSI volume of `DRIVER` that any node may use (no zone label, no node affinity)."""
    volume = zone_volume_body(
        "unused", class_name="", driver=DRIVER, affinity=False, access_modes=access_modes
    )
    volume["metadata"]["labels"] = {}
    return volume


def _berth_message(plane: LocalControlPlane, namespace: str, name: str, expected: str) -> str:
    """Berth's PodScheduled=False message once it equals `expected` (the last one at the deadline)."""
    last: list[str] = []

    def probe() -> str | None:
        condition = scheduled_condition(get_pod(plane, namespace, name)) or {}
        message = str(condition.get("message") or "")
        last[:] = [message]
        return message if message == expected else None

    try:
        return poll(
            probe, timeout=30, description=f"{namespace}/{name} failing like kube-scheduler"
        )
    except AssertionError:
        return last[0] if last else ""


def _both_refused(
    plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    group: str,
    ours: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
) -> str:
    """Berth's pod with volumes `ours`, kube-scheduler's with `theirs`: one message for both."""
    wait_berth_sees_all_nodes(plane, berth)
    create(
        plane,
        namespace,
        pod_body("ours", group, volumes=ours),
        pod_body("theirs", group, scheduler=DEFAULT_SCHEDULER, volumes=theirs),
    )
    expected = wait_unschedulable(plane, namespace, "theirs")
    assert _berth_message(plane, namespace, "ours", expected) == expected

    def note(pod: str) -> str | None:
        found = [
            e["message"] for e in events(plane, namespace, name=pod, reason="FailedScheduling")
        ]
        return found[-1] if found and found[-1] == expected else None

    assert poll(lambda: note("ours"), timeout=30, description="Berth's FailedScheduling") == (
        expected
    )
    return expected


def _both_placed(
    plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    group: str,
    ours: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
) -> tuple[str, str]:
    wait_berth_sees_all_nodes(plane, berth)
    create(plane, namespace, pod_body("ours", group, volumes=ours))
    placed_ours = wait_bound(plane, namespace, ["ours"])["ours"]
    create(plane, namespace, pod_body("theirs", group, scheduler=DEFAULT_SCHEDULER, volumes=theirs))
    placed_theirs = wait_bound(plane, namespace, ["theirs"])["theirs"]
    return placed_ours, placed_theirs


# ---------------------------------------------------------------------- VolumeRestrictions


def test_a_read_write_once_pod_claim_in_use_refuses_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)
    volume = _csi_volume(("ReadWriteOncePod",))
    create_storage(control_plane, volume)
    claim = claim_body(
        class_name="", volume_name=volume["metadata"]["name"], access_modes=("ReadWriteOncePod",)
    )
    (solo,) = create_storage(control_plane, claim, namespace=namespace)
    wait_claims_bound(control_plane, namespace, [solo])
    holder = pod_body("holder", None, nodeName=_node_names(group, 2)[0], volumes=[pod_volume(solo)])
    create(control_plane, namespace, holder)

    message = _both_refused(
        control_plane, berth, namespace, group, [pod_volume(solo)], [pod_volume(solo)]
    )
    assert (
        "2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod" in message
    )


# ---------------------------------------------------------------------- NodeVolumeLimits


def test_nodes_at_their_csi_attach_limit_refuse_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)
    nodes = _node_names(group, 2)
    driver = CsiNodeDriver(name=DRIVER, allocatable=1)
    create_storage(control_plane, *(csi_node_body(node, [driver]) for node in nodes))
    held = _bound_claims(control_plane, namespace, [_csi_volume(), _csi_volume()])
    _holders(control_plane, namespace, nodes, held)
    ours, theirs = _bound_claims(control_plane, namespace, [_csi_volume(), _csi_volume()])

    message = _both_refused(
        control_plane, berth, namespace, group, [pod_volume(ours)], [pod_volume(theirs)]
    )
    assert "2 node(s) exceed max volume count" in message


def test_the_node_with_attach_room_is_chosen_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)
    full, roomy = _node_names(group, 2)
    create_storage(
        control_plane,
        csi_node_body(full, [CsiNodeDriver(name=DRIVER, allocatable=1)]),
        csi_node_body(roomy, [CsiNodeDriver(name=DRIVER, allocatable=3)]),
    )
    held = _bound_claims(control_plane, namespace, [_csi_volume(), _csi_volume()])
    _holders(control_plane, namespace, [full, roomy], held)
    ours, theirs = _bound_claims(control_plane, namespace, [_csi_volume(), _csi_volume()])

    placed = _both_placed(
        control_plane, berth, namespace, group, [pod_volume(ours)], [pod_volume(theirs)]
    )
    assert placed == (roomy, roomy)


# ---------------------------------------------------------------------- VolumeZone


def _zonal_claims(plane: LocalControlPlane, namespace: str, zone: str, count: int) -> list[str]:
    """Claims bound to CSI volumes labelled with `zone` but without node affinity, so that
    only VolumeZone (not VolumeBinding) ties them to the zone."""
    volumes = [zone_volume_body(zone, class_name="", affinity=False) for _ in range(count)]
    return _bound_claims(plane, namespace, volumes)


def test_volume_zone_labels_steer_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 3)  # zone-a, zone-b, zone-c
    ours, theirs = _zonal_claims(control_plane, namespace, "zone-b", 2)
    placed = _both_placed(
        control_plane, berth, namespace, group, [pod_volume(ours)], [pod_volume(theirs)]
    )
    assert placed[0] == placed[1]
    assert _zone_of(control_plane, placed[0]) == "zone-b"


def test_a_volume_in_no_nodes_zone_refuses_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)  # zone-a, zone-b
    ours, theirs = _zonal_claims(control_plane, namespace, "zone-z", 2)
    message = _both_refused(
        control_plane, berth, namespace, group, [pod_volume(ours)], [pod_volume(theirs)]
    )
    assert "2 node(s) had no available volume zone" in message


def _zone_of(plane: LocalControlPlane, name: str) -> str:
    node = plane.request("GET", f"/api/v1/nodes/{name}")
    return str(node["metadata"]["labels"].get(ZONE_LABEL, ""))
