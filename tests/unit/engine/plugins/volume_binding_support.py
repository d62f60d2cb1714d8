"""Raw storage objects for the VolumeBinding tests, and a cycle over nodes that holds them."""

from __future__ import annotations

from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity
from berth.engine.model.node import Node
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim, StorageClass

Raw = dict[str, Any]

WFFC = "WaitForFirstConsumer"
DRIVER = "csi.example.com"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"

_PARSERS = {
    "PersistentVolume": PersistentVolume.from_dict,
    "PersistentVolumeClaim": PersistentVolumeClaim.from_dict,
    "StorageClass": StorageClass.from_dict,
    "CSIDriver": CSIDriver.from_dict,
    "CSINode": CSINode.from_dict,
    "CSIStorageCapacity": CSIStorageCapacity.from_dict,
}


def storage_class(
    name: str,
    *,
    mode: str = WFFC,
    provisioner: str = DRIVER,
    zones: tuple[str, ...] | None = None,
) -> Raw:
    raw: Raw = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "resourceVersion": "1"},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones is not None:
        raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": list(zones)}]}
        ]
    return raw


def claim(
    name: str,
    *,
    size: str = "1Gi",
    class_name: str | None = "wffc",
    volume_name: str = "",
    bound: bool = False,
    selected_node: str | None = None,
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    selector: Raw | None = None,
    phase: str = "Pending",
    deleting: bool = False,
    owner_uid: str | None = None,
    namespace: str = "default",
    version: str = "10",
) -> Raw:
    annotations: dict[str, str] = {}
    if bound:
        annotations[BIND_COMPLETED] = "yes"
    if selected_node is not None:
        annotations[SELECTED_NODE] = selected_node
    metadata: Raw = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{namespace}-{name}",
        "resourceVersion": version,
        "annotations": annotations,
    }
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner_uid is not None:
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid, "controller": True}
        ]
    spec: Raw = {"accessModes": list(access_modes), "resources": {"requests": {"storage": size}}}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": "Bound" if bound else phase},
    }


def volume(
    name: str,
    *,
    size: str = "1Gi",
    class_name: str = "wffc",
    zone: str | None = None,
    host: str | None = None,
    claim_ref: tuple[str, str] | None = None,
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    phase: str = "Available",
    labels: dict[str, str] | None = None,
    terms: list[Raw] | None = None,
    version: str = "5",
) -> Raw:
    spec: Raw = {
        "capacity": {"storage": size},
        "accessModes": list(access_modes),
        "storageClassName": class_name,
        "csi": {"driver": DRIVER, "volumeHandle": name},
    }
    if terms is None:
        terms = []
        if zone is not None:
            terms.append(
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}
            )
        if host is not None:
            terms.append(
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}
            )
    if terms:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    if claim_ref is not None:
        namespace, claim_name = claim_ref
        spec["claimRef"] = {"namespace": namespace, "name": claim_name}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "resourceVersion": version, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def driver(name: str = DRIVER, *, capacity: bool = True) -> Raw:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"storageCapacity": capacity},
    }


def capacity(
    name: str,
    *,
    zone: str,
    capacity: str | None,
    maximum: str | None = None,
    class_name: str = "wffc",
) -> Raw:
    raw: Raw = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system", "resourceVersion": "1"},
        "storageClassName": class_name,
        "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": zone}},
    }
    if capacity is not None:
        raw["capacity"] = capacity
    if maximum is not None:
        raw["maximumVolumeSize"] = maximum
    return raw


def node(name: str, zone: str) -> Raw:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name},
        },
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def cluster_with(nodes: list[Raw], objects: list[Raw]) -> ClusterState:
    cluster = ClusterState(capacity=4)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    for raw in objects:
        cluster.storage.upsert(_PARSERS[raw["kind"]](raw))
    return cluster


def cycle_with(nodes: list[Raw], objects: list[Raw]) -> CycleState:
    return CycleState(cluster_with(nodes, objects))
