"""Which claims the test volume provisioner takes, and the volume it makes for each."""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane.provisioning import (
    PROVISIONED_BY,
    SELECTED_NODE,
    STORAGE_PROVISIONER,
    ProvisioningError,
    claim_wants_volume,
    provisioned_volume,
)

DRIVER = "csi.example.com"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def make_claim(**changes: Any) -> dict[str, Any]:
    claim: dict[str, Any] = {
        "metadata": {
            "name": "data",
            "namespace": "ns",
            "uid": "1234",
            "resourceVersion": "7",
            "annotations": {STORAGE_PROVISIONER: DRIVER, SELECTED_NODE: "node-1"},
        },
        "spec": {
            "storageClassName": "fast",
            "accessModes": ["ReadWriteOncePod"],
            "resources": {"requests": {"storage": "5Gi"}},
        },
        "status": {"phase": "Pending"},
    }
    for path, value in changes.items():
        section, _, key = path.partition("__")
        if value is None:
            claim[section].pop(key, None)
        else:
            claim[section][key] = value
    return claim


def make_class(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "fast"}, "provisioner": DRIVER, **fields}


NODE = {"metadata": {"name": "node-1", "labels": {ZONE: "zone-b", REGION: "r1", "other": "x"}}}


def make_csi_node(*keys: str, driver: str = DRIVER) -> dict[str, Any]:
    return {"spec": {"drivers": [{"name": driver, "nodeID": "n1", "topologyKeys": list(keys)}]}}


def volume(
    claim: dict[str, Any] | None = None,
    storage_class: dict[str, Any] | None = None,
    *,
    csi_node: dict[str, Any] | None = None,
    topology: bool = True,
) -> dict[str, Any]:
    return provisioned_volume(
        claim or make_claim(),
        storage_class or make_class(),
        node=NODE,
        csi_node=csi_node if csi_node is not None else make_csi_node(ZONE, REGION),
        topology=topology,
        identity="1-2-" + DRIVER,
    )


def affinity(pv: dict[str, Any]) -> list[tuple[str, str]]:
    (term,) = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return [(expression["key"], *expression["values"]) for expression in term["matchExpressions"]]


@pytest.mark.parametrize(
    ("changes", "wanted"),
    [
        ({}, True),
        ({"spec__volumeName": "pv-1"}, False),
        ({"status__phase": "Bound"}, False),
        ({"metadata__deletionTimestamp": "2026-01-01T00:00:00Z"}, False),
        ({"metadata__annotations": {STORAGE_PROVISIONER: DRIVER}}, False),
        ({"metadata__annotations": {STORAGE_PROVISIONER: "other", SELECTED_NODE: "n"}}, False),
        (
            {
                "metadata__annotations": {
                    "volume.beta.kubernetes.io/storage-provisioner": DRIVER,
                    SELECTED_NODE: "n",
                }
            },
            True,
        ),
    ],
    ids=[
        "handed-over-with-node",
        "already-has-volume",
        "bound",
        "being-deleted",
        "immediate-no-selected-node",
        "other-provisioner",
        "beta-annotation",
    ],
)
def test_claims_taken_only_when_handed_to_us_with_a_selected_node(
    changes: dict[str, Any], wanted: bool
) -> None:
    assert claim_wants_volume(make_claim(**changes), DRIVER) is wanted


def test_volume_copies_the_claim_and_class_and_points_back_at_the_claim() -> None:
    pv = volume(storage_class=make_class(reclaimPolicy="Retain", mountOptions=["noatime"]))
    assert pv["metadata"] == {"name": "pvc-1234", "annotations": {PROVISIONED_BY: DRIVER}}
    spec = pv["spec"]
    assert spec["capacity"] == {"storage": "5Gi"}
    assert spec["accessModes"] == ["ReadWriteOncePod"]
    assert spec["volumeMode"] == "Filesystem"
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["mountOptions"] == ["noatime"]
    assert spec["storageClassName"] == "fast"
    assert spec["claimRef"] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": "ns",
        "name": "data",
        "uid": "1234",
        "resourceVersion": "7",
    }
    assert spec["csi"]["driver"] == DRIVER


def test_reclaim_policy_defaults_to_delete_and_fstype_comes_from_the_class() -> None:
    parameters = {"csi.storage.k8s.io/fstype": "xfs"}
    pv = volume(storage_class=make_class(parameters=parameters))
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert pv["spec"]["csi"]["fsType"] == "xfs"
    block = volume(make_claim(spec__volumeMode="Block"), make_class(parameters=parameters))
    assert block["spec"]["volumeMode"] == "Block"
    assert "fsType" not in block["spec"]["csi"]


def test_without_allowed_topologies_the_volume_follows_the_csinode_keys() -> None:
    assert affinity(volume()) == [(REGION, "r1"), (ZONE, "zone-b")]
    assert affinity(volume(csi_node=make_csi_node(ZONE))) == [(ZONE, "zone-b")]


def test_with_allowed_topologies_the_first_allowed_segment_of_the_node_is_used() -> None:
    allowed = [
        {"matchLabelExpressions": [{"key": ZONE, "values": ["zone-c", "zone-b", "zone-a"]}]},
    ]
    pv = volume(storage_class=make_class(allowedTopologies=allowed))
    assert affinity(pv) == [(ZONE, "zone-b")]


def test_a_node_outside_the_allowed_topologies_is_refused() -> None:
    allowed = [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a"]}]}]
    with pytest.raises(ProvisioningError, match=r"claim ns/data: .* allowedTopologies"):
        volume(storage_class=make_class(allowedTopologies=allowed))


@pytest.mark.parametrize(
    "csi_node",
    [{"spec": {"drivers": []}}, make_csi_node(ZONE, driver="other"), make_csi_node()],
    ids=["no-drivers", "other-driver", "no-topology-keys"],
)
def test_a_node_whose_csinode_lacks_the_drivers_topology_is_refused(
    csi_node: dict[str, Any],
) -> None:
    with pytest.raises(ProvisioningError, match="no topology key found for node node-1"):
        volume(csi_node=csi_node)


def test_a_node_missing_a_registered_topology_label_is_refused() -> None:
    with pytest.raises(
        ProvisioningError, match=r"node node-1 lacks the topology labels \['rack'\]"
    ):
        volume(csi_node=make_csi_node(ZONE, "rack"))


def test_a_driver_without_topology_gives_volumes_no_node_affinity() -> None:
    assert "nodeAffinity" not in volume(csi_node={}, topology=False)["spec"]


def test_a_claim_without_a_size_is_refused_naming_the_field() -> None:
    claim = make_claim(spec__resources={})
    with pytest.raises(ProvisioningError, match=r"ns/data: spec.resources.requests.storage"):
        volume(claim)
