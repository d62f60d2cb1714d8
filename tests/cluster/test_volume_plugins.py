"""VolumeRestrictions, NodeVolumeLimits and VolumeZone side by side with kube-scheduler.

Each scene is built from real storage objects on the shared control plane (its
kube-controller-manager binds the pre-bound claims) before any pod that uses them, then
the same pod spec goes to Berth and to kube-scheduler (`schedulerName:
default-scheduler`). A pod that fits nowhere must get the very same PodScheduled=False
message and FailedScheduling note from both; a pod that fits must land on the same node
(kube-scheduler's pod comes second and mounts the same claim, which the first one's
placement does not change for it).
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.processes import ManagedProcess
from tests.cluster.helpers import (
    both_unschedulable,
    create,
    make_nodes,
    place_in_turn,
    pod_body,
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
    """One claim pre-bound to each volume (no class, the volume's access modes), created and
    bound; their names."""
    create_storage(plane, *volumes)
    claims = [
        claim_body(
            class_name="",
            volume_name=volume["metadata"]["name"],
            access_modes=volume["spec"]["accessModes"],
        )
        for volume in volumes
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


# ---------------------------------------------------------------------- VolumeRestrictions


def test_a_read_write_once_pod_claim_in_use_refuses_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)
    (solo,) = _bound_claims(control_plane, namespace, [_csi_volume(("ReadWriteOncePod",))])
    holder = pod_body("holder", None, nodeName=_node_names(group, 2)[0], volumes=[pod_volume(solo)])
    create(control_plane, namespace, holder)

    message = both_unschedulable(control_plane, berth, namespace, group, volumes=[pod_volume(solo)])
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
    (wanted,) = _bound_claims(control_plane, namespace, [_csi_volume()])

    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(wanted)]
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
    (wanted,) = _bound_claims(control_plane, namespace, [_csi_volume()])

    placed = place_in_turn(control_plane, berth, namespace, group, volumes=[pod_volume(wanted)])
    assert placed == (roomy, roomy)


# ---------------------------------------------------------------------- VolumeZone


def _zonal_claim(plane: LocalControlPlane, namespace: str, zone: str) -> str:
    """A claim bound to a CSI volume labelled with `zone` but without node affinity, so that
    only VolumeZone (not VolumeBinding) ties it to the zone."""
    volume = zone_volume_body(zone, class_name="", affinity=False)
    (claim,) = _bound_claims(plane, namespace, [volume])
    return claim


def test_volume_zone_labels_steer_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 3)  # zone-a, zone-b, zone-c
    wanted = _zonal_claim(control_plane, namespace, "zone-b")
    placed = place_in_turn(control_plane, berth, namespace, group, volumes=[pod_volume(wanted)])
    assert placed[0] == placed[1]
    assert _zone_of(control_plane, placed[0]) == "zone-b"


def test_a_volume_in_no_nodes_zone_refuses_the_pod_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: ManagedProcess,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2)  # zone-a, zone-b
    wanted = _zonal_claim(control_plane, namespace, "zone-z")
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(wanted)]
    )
    assert "2 node(s) had no available volume zone" in message


def _zone_of(plane: LocalControlPlane, name: str) -> str:
    node = plane.request("GET", f"/api/v1/nodes/{name}")
    return str(node["metadata"]["labels"].get(ZONE_LABEL, ""))
