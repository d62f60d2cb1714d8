"""Storage objects for cluster tests: classes, volumes, claims, CSI nodes/drivers, capacities.

Volume tests compare Berth with kube-scheduler on the same control plane, so
both must see the same, realistic storage objects: this module builds them
(as plain API bodies, so a test can still edit one before creating it),
creates them, and waits for kube-controller-manager's PV controller to bind
claims. Dynamic provisioning needs the `volume_provisioner` fixture
(conftest.py): it serves StorageClasses whose provisioner is `PROVISIONER`.

Cluster-scoped objects (classes, volumes, CSIDrivers) get fresh names, so
tests never see each other's; CSINodes are named after their node, which
tests already make unique.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.controlplane import LocalControlPlane
from berth.controlplane.objects import unique_name
from tests.cluster.helpers import poll

__all__ = [
    "PROVISIONER",
    "ZONE_LABEL",
    "CsiNodeDriver",
    "capacity_body",
    "claim_body",
    "claim_volume",
    "class_body",
    "create_storage",
    "csi_driver_body",
    "csi_node_body",
    "get_claim",
    "get_volume",
    "local_volume_body",
    "pod_volume",
    "wait_claims_bound",
    "zone_volume_body",
]

# The provisioner (and CSI driver) name the `volume_provisioner` fixture serves.
PROVISIONER = "csi.test.berth.dev"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"

JsonObject = dict[str, Any]

_PATHS = {
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
    "PersistentVolumeClaim": "/api/v1/namespaces/{namespace}/persistentvolumeclaims",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/namespaces/{namespace}/csistoragecapacities",
}


def create_storage(
    plane: LocalControlPlane, *bodies: Mapping[str, Any], namespace: str | None = None
) -> list[str]:
    """POST each body (by its `kind`) in order; namespaced kinds need `namespace`. Returns names."""
    names = []
    for body in bodies:
        path = _PATHS[body["kind"]]
        if "{namespace}" in path:
            if namespace is None:
                raise ValueError(f"{body['kind']} {body['metadata']['name']} needs a namespace")
            path = path.format(namespace=namespace)
        created = plane.request("POST", path, dict(body))
        names.append(created["metadata"]["name"])
    return names


# -- classes, volumes, claims -------------------------------------------------------------


def class_body(
    *,
    name: str | None = None,
    provisioner: str = PROVISIONER,
    binding_mode: str = "WaitForFirstConsumer",
    allowed_topologies: Mapping[str, Sequence[str]] | None = None,
    reclaim_policy: str = "Delete",
    parameters: Mapping[str, str] | None = None,
) -> JsonObject:
    """A StorageClass; `allowed_topologies` is one term: label -> allowed values."""
    body: JsonObject = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name or unique_name("class")},
        "provisioner": provisioner,
        "volumeBindingMode": binding_mode,
        "reclaimPolicy": reclaim_policy,
    }
    if allowed_topologies:
        expressions = [
            {"key": label, "values": list(values)} for label, values in allowed_topologies.items()
        ]
        body["allowedTopologies"] = [{"matchLabelExpressions": expressions}]
    if parameters:
        body["parameters"] = dict(parameters)
    return body


def _volume_body(
    *,
    name: str | None,
    class_name: str,
    size: str,
    access_modes: Sequence[str],
    volume_mode: str,
    labels: Mapping[str, str],
    node_affinity: Mapping[str, Sequence[str]] | None,
    source: JsonObject,
) -> JsonObject:
    spec: JsonObject = {
        "capacity": {"storage": size},
        "accessModes": list(access_modes),
        "volumeMode": volume_mode,
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": class_name,
        **source,
    }
    if node_affinity:
        expressions = [
            {"key": label, "operator": "In", "values": list(values)}
            for label, values in node_affinity.items()
        ]
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name or unique_name("pv"), "labels": dict(labels)},
        "spec": spec,
    }


def local_volume_body(
    node: str,
    *,
    class_name: str,
    size: str = "1Gi",
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str = "Filesystem",
    name: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> JsonObject:
    """A local PV reachable only from `node` (node affinity on its hostname label)."""
    volume_name = name or unique_name("pv")
    return _volume_body(
        name=volume_name,
        class_name=class_name,
        size=size,
        access_modes=access_modes,
        volume_mode=volume_mode,
        labels=labels or {},
        node_affinity={HOSTNAME_LABEL: [node]},
        source={"local": {"path": f"/mnt/disks/{volume_name}"}},
    )


def zone_volume_body(
    zone: str,
    *,
    class_name: str,
    size: str = "1Gi",
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str = "Filesystem",
    name: str | None = None,
    driver: str = PROVISIONER,
    affinity: bool = True,
) -> JsonObject:
    """A CSI PV in `zone`: the zone label (what VolumeZone reads) and, with `affinity`, a
    matching node affinity (what VolumeBinding reads), as a zonal cloud disk has."""
    volume_name = name or unique_name("pv")
    return _volume_body(
        name=volume_name,
        class_name=class_name,
        size=size,
        access_modes=access_modes,
        volume_mode=volume_mode,
        labels={ZONE_LABEL: zone},
        node_affinity={ZONE_LABEL: [zone]} if affinity else None,
        source={"csi": {"driver": driver, "volumeHandle": volume_name}},
    )


def claim_body(
    *,
    class_name: str,
    name: str | None = None,
    size: str = "1Gi",
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str = "Filesystem",
    volume_name: str | None = None,
    selector: Mapping[str, str] | None = None,
) -> JsonObject:
    """A PersistentVolumeClaim; `volume_name` pre-binds it to that PV."""
    spec: JsonObject = {
        "storageClassName": class_name,
        "accessModes": list(access_modes),
        "volumeMode": volume_mode,
        "resources": {"requests": {"storage": size}},
    }
    if volume_name:
        spec["volumeName"] = volume_name
    if selector:
        spec["selector"] = {"matchLabels": dict(selector)}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name or unique_name("claim")},
        "spec": spec,
    }


def pod_volume(claim: str, *, name: str | None = None) -> JsonObject:
    """A pod `volumes` entry using claim `claim` (for helpers.pod_body(volumes=[...]))."""
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


# -- CSI nodes, drivers, capacities -------------------------------------------------------


@dataclass(frozen=True)
class CsiNodeDriver:
    """One driver registered on a node: its topology keys and how many volumes it may attach."""

    name: str = PROVISIONER
    topology_keys: Sequence[str] = (ZONE_LABEL,)
    allocatable: int | None = None
    node_id: str = ""


def csi_node_body(node: str, drivers: Iterable[CsiNodeDriver] = (CsiNodeDriver(),)) -> JsonObject:
    """The CSINode a kubelet would register for `node` with these drivers."""
    entries = []
    for driver in drivers:
        entry: JsonObject = {
            "name": driver.name,
            "nodeID": driver.node_id or node,
            "topologyKeys": list(driver.topology_keys),
        }
        if driver.allocatable is not None:
            entry["allocatable"] = {"count": driver.allocatable}
        entries.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": entries},
    }


def csi_driver_body(
    *,
    name: str | None = None,
    attach_required: bool = True,
    storage_capacity: bool = False,
) -> JsonObject:
    """A CSIDriver; `storage_capacity` makes schedulers check CSIStorageCapacity objects."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name or unique_name("driver")},
        "spec": {"attachRequired": attach_required, "storageCapacity": storage_capacity},
    }


def capacity_body(
    *,
    class_name: str,
    capacity: str,
    topology: Mapping[str, str],
    maximum_volume_size: str | None = None,
    name: str | None = None,
) -> JsonObject:
    """A CSIStorageCapacity: `capacity` free for `class_name` on nodes with `topology` labels."""
    body: JsonObject = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name or unique_name("capacity")},
        "storageClassName": class_name,
        "capacity": capacity,
        "nodeTopology": {"matchLabels": dict(topology)},
    }
    if maximum_volume_size is not None:
        body["maximumVolumeSize"] = maximum_volume_size
    return body


# -- reading and waiting ------------------------------------------------------------------


def get_claim(plane: LocalControlPlane, namespace: str, name: str) -> JsonObject:
    claim: JsonObject = plane.request(
        "GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
    )
    return claim


def get_volume(plane: LocalControlPlane, name: str) -> JsonObject:
    volume: JsonObject = plane.request("GET", f"/api/v1/persistentvolumes/{name}")
    return volume


def claim_volume(claim: Mapping[str, Any]) -> str | None:
    """The PV a claim is bound to, once the PV controller has bound it (phase Bound)."""
    if (claim.get("status") or {}).get("phase") != "Bound":
        return None
    name = (claim.get("spec") or {}).get("volumeName")
    return str(name) if name else None


def wait_claims_bound(
    plane: LocalControlPlane, namespace: str, names: Iterable[str], *, timeout: float = 60
) -> dict[str, str]:
    """Claim name -> PV name once kube-controller-manager has bound every named claim."""
    wanted = list(names)

    def probe() -> dict[str, str] | None:
        bound = {name: claim_volume(get_claim(plane, namespace, name)) for name in wanted}
        if all(bound.values()):
            return {name: str(volume) for name, volume in bound.items()}
        return None

    return poll(probe, timeout=timeout, description=f"claims {wanted} in {namespace} bound")
