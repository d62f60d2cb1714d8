"""Fluent builders for the raw storage objects tests feed the engine.

make_pv("pv1").capacity("10Gi").storage_class("fast").node_affinity("zone", "a").obj()
make_pvc("data").request("5Gi").storage_class("fast").bound_to("pv1").build()
make_class("fast").wait_for_first_consumer().allowed_zones("topology.kubernetes.io/zone", "a")
make_csi_node("n1").driver("ebs.csi.aws.com", count=2).build()
make_capacity("cap1", "fast").topology(zone="a").capacity("100Gi").build()

Each builder's `obj()` is the API dict, `build()` the parsed value. Resource versions
start at "1"; `version(...)` sets another.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, Generic, TypeVar

from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from tests.builders import set_path

_uids = itertools.count(1)

B = TypeVar("B", bound="_Builder[Any]")
T = TypeVar("T")


class _Builder(Generic[T]):
    api_version = "v1"
    kind = ""

    def __init__(self, name: str, namespace: str | None = None) -> None:
        metadata: dict[str, Any] = {
            "name": name,
            "uid": f"{self.kind.lower()}-uid-{next(_uids)}",
            "resourceVersion": "1",
        }
        if namespace is not None:
            metadata["namespace"] = namespace
        self._raw: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": metadata,
        }

    @property
    def _metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = self._raw["metadata"]
        return metadata

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._raw.setdefault("spec", {})
        return spec

    def version(self: B, resource_version: str) -> B:
        self._metadata["resourceVersion"] = resource_version
        return self

    def uid(self: B, uid: str) -> B:
        self._metadata["uid"] = uid
        return self

    def labels(self: B, **labels: str) -> B:
        self._metadata.setdefault("labels", {}).update(labels)
        return self

    def label(self: B, key: str, value: str) -> B:
        self._metadata.setdefault("labels", {})[key] = value
        return self

    def annotation(self: B, key: str, value: str) -> B:
        self._metadata.setdefault("annotations", {})[key] = value
        return self

    def deleting(self: B) -> B:
        self._metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def set(self: B, path: str, value: Any) -> B:
        """Escape hatch: set a dotted path, e.g. set("spec.volumeMode", "Block")."""
        set_path(self._raw, path, value)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def build(self) -> T:
        raise NotImplementedError


def _node_selector_term(key: str, values: tuple[str, ...], operator: str) -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return {"matchExpressions": [expression]}


class PersistentVolumeBuilder(_Builder[PersistentVolume]):
    kind = "PersistentVolume"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._raw["spec"] = {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": f"/data/{name}"},
        }
        self._raw["status"] = {"phase": "Available"}

    def capacity(self, storage: str) -> PersistentVolumeBuilder:
        self._spec["capacity"] = {"storage": storage}
        return self

    def access_modes(self, *modes: str) -> PersistentVolumeBuilder:
        self._spec["accessModes"] = list(modes)
        return self

    def storage_class(self, name: str) -> PersistentVolumeBuilder:
        self._spec["storageClassName"] = name
        return self

    def block(self) -> PersistentVolumeBuilder:
        self._spec["volumeMode"] = "Block"
        return self

    def node_affinity(
        self, key: str, *values: str, operator: str = "In"
    ) -> PersistentVolumeBuilder:
        """Add a required node-affinity term (terms are ORed)."""
        required = self._spec.setdefault("nodeAffinity", {}).setdefault(
            "required", {"nodeSelectorTerms": []}
        )
        required["nodeSelectorTerms"].append(_node_selector_term(key, values, operator))
        return self

    def claim_ref(self, namespace: str, name: str, uid: str = "") -> PersistentVolumeBuilder:
        ref = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
        if uid:
            ref["uid"] = uid
        self._spec["claimRef"] = ref
        return self

    def phase(self, phase: str) -> PersistentVolumeBuilder:
        self._raw["status"] = {"phase": phase}
        return self

    def source(self, kind: str, **fields: Any) -> PersistentVolumeBuilder:
        """Replace the volume source, e.g. source("csi", driver="d", volumeHandle="h")."""
        for known in ("hostPath", "csi", "local", "gcePersistentDisk", "awsElasticBlockStore"):
            self._spec.pop(known, None)
        self._spec[kind] = fields
        return self

    def csi(self, driver: str, handle: str) -> PersistentVolumeBuilder:
        return self.source("csi", driver=driver, volumeHandle=handle)

    def build(self) -> PersistentVolume:
        return PersistentVolume.from_dict(self.obj())


class PersistentVolumeClaimBuilder(_Builder[PersistentVolumeClaim]):
    kind = "PersistentVolumeClaim"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self._raw["spec"] = {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        }
        self._raw["status"] = {"phase": "Pending"}

    def request(self, storage: str) -> PersistentVolumeClaimBuilder:
        self._spec["resources"] = {"requests": {"storage": storage}}
        return self

    def access_modes(self, *modes: str) -> PersistentVolumeClaimBuilder:
        self._spec["accessModes"] = list(modes)
        return self

    def storage_class(self, name: str) -> PersistentVolumeClaimBuilder:
        self._spec["storageClassName"] = name
        return self

    def block(self) -> PersistentVolumeClaimBuilder:
        self._spec["volumeMode"] = "Block"
        return self

    def selector(self, **match_labels: str) -> PersistentVolumeClaimBuilder:
        self._spec["selector"] = {"matchLabels": match_labels}
        return self

    def volume_name(self, pv_name: str) -> PersistentVolumeClaimBuilder:
        self._spec["volumeName"] = pv_name
        return self

    def bound_to(self, pv_name: str) -> PersistentVolumeClaimBuilder:
        """Bound by the PV controller: volumeName, bind-completed, phase Bound."""
        self._spec["volumeName"] = pv_name
        self.annotation("pv.kubernetes.io/bind-completed", "yes")
        self._raw["status"] = {"phase": "Bound"}
        return self

    def selected_node(self, node_name: str) -> PersistentVolumeClaimBuilder:
        return self.annotation("volume.kubernetes.io/selected-node", node_name)

    def owned_by_pod(self, pod_name: str, pod_uid: str) -> PersistentVolumeClaimBuilder:
        """Controlled by a pod, as a generic ephemeral volume's claim is."""
        self._metadata["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod_name,
                "uid": pod_uid,
                "controller": True,
            }
        ]
        return self

    def build(self) -> PersistentVolumeClaim:
        return PersistentVolumeClaim.from_dict(self.obj())


class StorageClassBuilder(_Builder[StorageClass]):
    api_version = "storage.k8s.io/v1"
    kind = "StorageClass"

    def __init__(self, name: str, provisioner: str = "kubernetes.io/no-provisioner") -> None:
        super().__init__(name)
        self._raw["provisioner"] = provisioner
        self._raw["volumeBindingMode"] = "Immediate"

    def provisioner(self, name: str) -> StorageClassBuilder:
        self._raw["provisioner"] = name
        return self

    def wait_for_first_consumer(self) -> StorageClassBuilder:
        self._raw["volumeBindingMode"] = "WaitForFirstConsumer"
        return self

    def allowed_topology(self, key: str, *values: str) -> StorageClassBuilder:
        """Add one `allowedTopologies` term with one expression (terms are ORed)."""
        self._raw.setdefault("allowedTopologies", []).append(
            {"matchLabelExpressions": [{"key": key, "values": list(values)}]}
        )
        return self

    def build(self) -> StorageClass:
        return StorageClass.from_dict(self.obj())


class CSINodeBuilder(_Builder[CSINode]):
    api_version = "storage.k8s.io/v1"
    kind = "CSINode"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._raw["spec"] = {"drivers": []}

    def driver(
        self,
        name: str,
        *,
        count: int | None = None,
        node_id: str = "",
        topology_keys: tuple[str, ...] = (),
    ) -> CSINodeBuilder:
        entry: dict[str, Any] = {"name": name, "nodeID": node_id or self._metadata["name"]}
        if topology_keys:
            entry["topologyKeys"] = list(topology_keys)
        if count is not None:
            entry["allocatable"] = {"count": count}
        self._spec["drivers"].append(entry)
        return self

    def build(self) -> CSINode:
        return CSINode.from_dict(self.obj())


class CSIDriverBuilder(_Builder[CSIDriver]):
    api_version = "storage.k8s.io/v1"
    kind = "CSIDriver"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._raw["spec"] = {}

    def storage_capacity(self, value: bool = True) -> CSIDriverBuilder:
        self._spec["storageCapacity"] = value
        return self

    def attach_required(self, value: bool) -> CSIDriverBuilder:
        self._spec["attachRequired"] = value
        return self

    def build(self) -> CSIDriver:
        return CSIDriver.from_dict(self.obj())


class CSIStorageCapacityBuilder(_Builder[CSIStorageCapacity]):
    api_version = "storage.k8s.io/v1"
    kind = "CSIStorageCapacity"

    def __init__(self, name: str, storage_class: str, namespace: str = "kube-system") -> None:
        super().__init__(name, namespace)
        self._raw["storageClassName"] = storage_class

    def topology(self, **match_labels: str) -> CSIStorageCapacityBuilder:
        self._raw["nodeTopology"] = {"matchLabels": match_labels}
        return self

    def topology_label(self, key: str, value: str) -> CSIStorageCapacityBuilder:
        self._raw.setdefault("nodeTopology", {}).setdefault("matchLabels", {})[key] = value
        return self

    def capacity(self, amount: str) -> CSIStorageCapacityBuilder:
        self._raw["capacity"] = amount
        return self

    def maximum_volume_size(self, amount: str) -> CSIStorageCapacityBuilder:
        self._raw["maximumVolumeSize"] = amount
        return self

    def build(self) -> CSIStorageCapacity:
        return CSIStorageCapacity.from_dict(self.obj())


class VolumeAttachmentBuilder(_Builder[VolumeAttachment]):
    api_version = "storage.k8s.io/v1"
    kind = "VolumeAttachment"

    def __init__(self, name: str, *, attacher: str, node: str, pv: str | None) -> None:
        super().__init__(name)
        source: dict[str, Any] = {} if pv is None else {"persistentVolumeName": pv}
        self._raw["spec"] = {"attacher": attacher, "nodeName": node, "source": source}
        self._raw["status"] = {"attached": True}

    def build(self) -> VolumeAttachment:
        return VolumeAttachment.from_dict(self.obj())


def make_pv(name: str) -> PersistentVolumeBuilder:
    return PersistentVolumeBuilder(name)


def make_pvc(name: str, namespace: str = "default") -> PersistentVolumeClaimBuilder:
    return PersistentVolumeClaimBuilder(name, namespace)


def make_class(name: str, provisioner: str = "kubernetes.io/no-provisioner") -> StorageClassBuilder:
    return StorageClassBuilder(name, provisioner)


def make_csi_node(name: str) -> CSINodeBuilder:
    return CSINodeBuilder(name)


def make_csi_driver(name: str) -> CSIDriverBuilder:
    return CSIDriverBuilder(name)


def make_capacity(
    name: str, storage_class: str, namespace: str = "kube-system"
) -> CSIStorageCapacityBuilder:
    return CSIStorageCapacityBuilder(name, storage_class, namespace)


def make_attachment(
    name: str, *, attacher: str, node: str, pv: str | None
) -> VolumeAttachmentBuilder:
    return VolumeAttachmentBuilder(name, attacher=attacher, node=node, pv=pv)
