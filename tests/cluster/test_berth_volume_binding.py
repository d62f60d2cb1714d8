"""VolumeBinding against the reference kube-scheduler, on one control plane with the real PV
controller (kube-controller-manager) and the test provisioner.

Each scheduler gets its own claims (a claim is bound once): where a pod fits, both must
place it in the same place (or the same tie set) and see its claims bound; where it
fits nowhere, both must give the very same FailedScheduling text. Node `i` of a group is
in zone ("zone-a", "zone-b", "zone-c")[i % 3].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.objects import unique_name
from berth.controlplane.provisioner import VolumeProvisioner
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    SCHEDULER,
    both_unschedulable,
    create,
    make_nodes,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)
from tests.cluster.storage import (
    ZONE_LABEL,
    CsiNodeDriver,
    capacity_body,
    claim_body,
    class_body,
    create_storage,
    csi_driver_body,
    csi_node_body,
    local_volume_body,
    pod_volume,
    wait_claims_bound,
    zone_volume_body,
)

pytestmark = pytest.mark.cluster

ZONES = ("zone-a", "zone-b", "zone-c")
SCHEDULERS = {"ours": SCHEDULER, "theirs": DEFAULT_SCHEDULER}


def _nodes(plane: LocalControlPlane, count: int = 3) -> tuple[str, list[str]]:
    group = make_nodes(plane, count)
    return group, [f"{group}-n-{index:05d}" for index in range(count)]


def _claims_per_scheduler(
    plane: LocalControlPlane, namespace: str, make: Callable[[str], Mapping[str, Any]]
) -> dict[str, str]:
    """One claim per scheduler, made by `make(who)`; who -> claim name."""
    claims = {}
    for who in SCHEDULERS:
        body = make(who)
        create_storage(plane, body, namespace=namespace)
        claims[who] = body["metadata"]["name"]
    return claims


def _place_each(
    plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    group: str,
    claims: Mapping[str, str],
) -> dict[str, str]:
    """Berth's pod then kube-scheduler's, each using its own claim; who -> node."""
    wait_berth_sees_all_nodes(plane, berth)
    placed = {}
    for who, scheduler in SCHEDULERS.items():
        create(
            plane,
            namespace,
            pod_body(who, group, scheduler=scheduler, volumes=[pod_volume(claims[who])]),
        )
        placed[who] = wait_bound(plane, namespace, [who], timeout=90)[who]
    return placed


def test_wait_for_first_consumer_claims_are_provisioned_within_allowed_topologies(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    volume_provisioner: VolumeProvisioner,
    namespace: str,
) -> None:
    group, nodes = _nodes(control_plane)
    create_storage(control_plane, *(csi_node_body(node) for node in nodes))
    (storage_class,) = create_storage(
        control_plane, class_body(allowed_topologies={ZONE_LABEL: ["zone-b", "zone-c"]})
    )
    claims = _claims_per_scheduler(
        control_plane, namespace, lambda who: claim_body(class_name=storage_class, size="2Gi")
    )
    placed = _place_each(control_plane, berth, namespace, group, claims)
    allowed = {nodes[1], nodes[2]}  # the same tie set: nothing else tells them apart
    assert placed["ours"] in allowed
    assert placed["theirs"] in allowed
    wait_claims_bound(control_plane, namespace, list(claims.values()))


def test_local_volumes_send_the_pod_to_their_node(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, nodes = _nodes(control_plane)
    classes = {}
    for who in SCHEDULERS:
        (classes[who],) = create_storage(
            control_plane, class_body(provisioner="kubernetes.io/no-provisioner")
        )
        # A small volume on node 1 and a big one on node 2: the claim fits both, and the
        # capacity score prefers the node where it uses the smaller share.
        create_storage(
            control_plane,
            local_volume_body(nodes[1], class_name=classes[who], size="2Gi"),
            local_volume_body(nodes[2], class_name=classes[who], size="8Gi"),
        )
    claims = _claims_per_scheduler(
        control_plane, namespace, lambda who: claim_body(class_name=classes[who], size="1Gi")
    )
    placed = _place_each(control_plane, berth, namespace, group, claims)
    assert placed == {"ours": nodes[2], "theirs": nodes[2]}
    wait_claims_bound(control_plane, namespace, list(claims.values()))


def test_a_claim_bound_to_a_volume_in_zone_b_takes_the_pod_to_zone_b(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, nodes = _nodes(control_plane, 6)
    (storage_class,) = create_storage(
        control_plane,
        class_body(provisioner="kubernetes.io/no-provisioner", binding_mode="Immediate"),
    )
    claims = {}
    for who in SCHEDULERS:
        volume = zone_volume_body("zone-b", class_name=storage_class, size="1Gi")
        create_storage(control_plane, volume)
        body = claim_body(class_name=storage_class, volume_name=volume["metadata"]["name"])
        create_storage(control_plane, body, namespace=namespace)
        claims[who] = body["metadata"]["name"]
    wait_claims_bound(control_plane, namespace, list(claims.values()))
    placed = _place_each(control_plane, berth, namespace, group, claims)
    zone_b = {node for index, node in enumerate(nodes) if ZONES[index % 3] == "zone-b"}
    assert placed["ours"] in zone_b
    assert placed["theirs"] in zone_b


def test_an_unbound_immediate_claim_message_equals_kube_schedulers(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, _nodes_made = _nodes(control_plane)
    (storage_class,) = create_storage(
        control_plane,
        class_body(provisioner=f"{unique_name('nobody')}.example.com", binding_mode="Immediate"),
    )
    claim = claim_body(class_name=storage_class)
    create_storage(control_plane, claim, namespace=namespace)
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(claim["metadata"]["name"])]
    )
    assert "pod has unbound immediate PersistentVolumeClaims" in message


def test_a_missing_claim_message_equals_kube_schedulers(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, _nodes_made = _nodes(control_plane)
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume("nowhere-to-be-found")]
    )
    assert 'persistentvolumeclaim "nowhere-to-be-found" not found' in message


def _capacity_class(
    plane: LocalControlPlane, nodes: list[str], sizes: dict[str, str]
) -> tuple[str, str]:
    """A provisioner of its own, tracking capacity: `sizes` free per zone. (driver, class)"""
    driver = f"{unique_name('cap')}.csi.test.berth.dev"
    create_storage(
        plane,
        csi_driver_body(name=driver, storage_capacity=True),
        *(csi_node_body(node, (CsiNodeDriver(name=driver),)) for node in nodes),
    )
    (storage_class,) = create_storage(plane, class_body(provisioner=driver))
    create_storage(
        plane,
        *(
            capacity_body(class_name=storage_class, capacity=size, topology={ZONE_LABEL: zone})
            for zone, size in sizes.items()
        ),
        namespace="kube-system",
    )
    return driver, storage_class


def test_provisioning_avoids_the_zone_whose_capacity_is_too_small(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, nodes = _nodes(control_plane)
    driver, storage_class = _capacity_class(
        control_plane, nodes, {"zone-a": "1Gi", "zone-b": "100Gi", "zone-c": "10Gi"}
    )
    claims = _claims_per_scheduler(
        control_plane, namespace, lambda who: claim_body(class_name=storage_class, size="5Gi")
    )
    with VolumeProvisioner(control_plane.admin_kubeconfig, provisioner=driver):
        placed = _place_each(control_plane, berth, namespace, group, claims)
        # Zone b has the most room left: the capacity score (5% used there) picks it.
        assert placed == {"ours": nodes[1], "theirs": nodes[1]}
        wait_claims_bound(control_plane, namespace, list(claims.values()))


def test_not_enough_capacity_anywhere_message_equals_kube_schedulers(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    group, nodes = _nodes(control_plane)
    _driver, storage_class = _capacity_class(
        control_plane, nodes, {"zone-a": "1Gi", "zone-b": "2Gi", "zone-c": "3Gi"}
    )
    claim = claim_body(class_name=storage_class, size="5Gi")
    create_storage(control_plane, claim, namespace=namespace)
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(claim["metadata"]["name"])]
    )
    assert "node(s) did not have enough free storage" in message


def test_any_pre_filter_rejection_ends_with_the_dynamic_resources_error(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    """Not a volume case, the same mechanism: NodeAffinity's PreFilter rejects the pod before
    DynamicResources' PreFilter runs, and its PostFilter's failed read ends the message."""
    group, nodes = _nodes(control_plane, 2)
    fields = [
        {"key": "metadata.name", "operator": "In", "values": [nodes[0]]},
        {"key": "metadata.name", "operator": "In", "values": [nodes[1]]},
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": fields}]
            }
        }
    }
    message = both_unschedulable(control_plane, berth, namespace, group, affinity=affinity)
    assert message.endswith("pod affinity terms conflict. not found")


def test_a_pod_waiting_for_its_claim_is_scheduled_once_the_claim_is_created(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    volume_provisioner: VolumeProvisioner,
    namespace: str,
) -> None:
    """The claim's creation is an event VolumeBinding registered: it requeues the pod."""
    group, nodes = _nodes(control_plane)
    create_storage(control_plane, *(csi_node_body(node) for node in nodes))
    (storage_class,) = create_storage(
        control_plane, class_body(allowed_topologies={ZONE_LABEL: ["zone-c"]})
    )
    wait_berth_sees_all_nodes(control_plane, berth)
    claim = claim_body(class_name=storage_class)
    claim_name = claim["metadata"]["name"]
    create(control_plane, namespace, pod_body("waiting", group, volumes=[pod_volume(claim_name)]))
    message = wait_unschedulable(control_plane, namespace, "waiting")
    assert f'persistentvolumeclaim "{claim_name}" not found' in message
    create_storage(control_plane, claim, namespace=namespace)
    assert wait_bound(control_plane, namespace, ["waiting"], timeout=90)["waiting"] == nodes[2]
    wait_claims_bound(control_plane, namespace, [claim_name])


def _in_tree_claim_on_migrated_nodes(
    plane: LocalControlPlane,
    namespace: str,
    nodes: list[str],
    *,
    plugin: str,
    source: Mapping[str, Any],
    affinity: bool,
) -> str:
    """CSINodes for `nodes` listing `plugin` as migrated, and a claim bound to an in-tree PV
    in zone-b (its zone label, and with `affinity` the matching node affinity) with the
    in-tree `source` ({kind: fields}); returns the claim's name."""
    migrated = []
    for node in nodes:
        body = csi_node_body(node, ())
        body["metadata"]["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": plugin}
        migrated.append(body)
    create_storage(plane, *migrated)
    (storage_class,) = create_storage(
        plane, class_body(provisioner="kubernetes.io/no-provisioner", binding_mode="Immediate")
    )
    volume = zone_volume_body("zone-b", class_name=storage_class, affinity=affinity)
    volume["spec"].pop("csi")
    volume["spec"].update(source)
    create_storage(plane, volume)
    claim = claim_body(class_name=storage_class, volume_name=volume["metadata"]["name"])
    create_storage(plane, claim, namespace=namespace)
    wait_claims_bound(plane, namespace, [claim["metadata"]["name"]])
    return str(claim["metadata"]["name"])


def test_an_in_tree_volume_is_judged_by_its_csi_topology_as_kube_scheduler_does(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    """A GCE PD in zone-b, on nodes whose CSINodes list the GCE PD plugin as migrated: its
    zone affinity becomes `topology.gke.io/zone`, which no node carries, so the zone-b
    nodes fail it too and the pod fits nowhere, with the same message from both."""
    group, nodes = _nodes(control_plane)
    claim = _in_tree_claim_on_migrated_nodes(
        control_plane,
        namespace,
        nodes,
        plugin="kubernetes.io/gce-pd",
        source={"gcePersistentDisk": {"pdName": unique_name("pd")}},
        affinity=True,
    )
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(claim)]
    )
    assert "3 node(s) didn't match PersistentVolume's node affinity" in message


_BLOB = "https://account.blob.core.windows.net/vhds/disk.vhd"  # the API's form for these kinds


def test_a_volume_the_translator_refuses_is_the_same_scheduling_error(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
) -> None:
    """A dedicated (not managed) Azure disk on a node that migrated the Azure Disk plugin:
    csi-translation-lib refuses it, and VolumeBinding's Filter fails with its error."""
    group, nodes = _nodes(control_plane, 1)
    claim = _in_tree_claim_on_migrated_nodes(
        control_plane,
        namespace,
        nodes,
        plugin="kubernetes.io/azure-disk",
        source={"azureDisk": {"diskName": "d", "diskURI": _BLOB, "kind": "Dedicated"}},
        affinity=False,
    )
    message = both_unschedulable(
        control_plane, berth, namespace, group, volumes=[pod_volume(claim)]
    )
    assert "could not translate pv: kind(Dedicated) is not supported in csi migration" in message
