"""The CSI objects the volume plugins read: CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment.

CSINode says which drivers run on a node and how many volumes each may attach there
(NodeVolumeLimits); CSIDriver whether a driver publishes storage capacity (VolumeBinding);
CSIStorageCapacity how much a class can still provision on which nodes (VolumeBinding);
VolumeAttachment which volumes are attached to a node already (NodeVolumeLimits).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.errors import FieldError
from berth.engine.model.labels import LabelSelector, parse_label_selector
from berth.engine.model.object_meta import HasMetadata, ObjectMeta, parse_object
from berth.engine.model.parsing import RawObject, as_bool, as_int, as_list, as_map, as_str
from berth.engine.model.storage import storage_bytes

__all__ = [
    "ANN_MIGRATED_PLUGINS",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
]

ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    topology_keys: tuple[str, ...]
    allocatable_count: int | None  # allocatable.count: how many volumes may attach; None: no limit


@dataclass(frozen=True, slots=True)
class CSINode(HasMetadata):
    metadata: ObjectMeta  # named after its Node
    drivers: tuple[CSINodeDriver, ...]

    @property
    def migrated_plugins(self) -> str:
        """The raw `storage.alpha.kubernetes.io/migrated-plugins` annotation ("" when absent)."""
        return self.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")

    def driver(self, name: str) -> CSINodeDriver | None:
        return next((driver for driver in self.drivers if driver.name == name), None)

    def volume_limits(self) -> dict[str, int]:
        """Per driver with an `allocatable.count`, that count (upstream `getVolumeLimits`)."""
        return {
            driver.name: driver.allocatable_count
            for driver in self.drivers
            if driver.allocatable_count is not None
        }

    @classmethod
    def from_dict(cls, raw: RawObject) -> CSINode:
        """Parse a storage.k8s.io/v1 CSINode; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="CSINode", namespaced=False, parse=_parse_csi_node)


def _parse_csi_node(metadata: ObjectMeta, raw: RawObject) -> CSINode:
    spec = as_map(raw.get("spec"), "spec")
    drivers = []
    for index, item in enumerate(as_list(spec.get("drivers"), "spec.drivers")):
        where = f"spec.drivers[{index}]"
        driver = as_map(item, where)
        name = as_str(driver.get("name"), f"{where}.name")
        if not name:
            raise FieldError(f"{where}.name", "must be set")
        allocatable = as_map(driver.get("allocatable"), f"{where}.allocatable")
        count = allocatable.get("count")
        drivers.append(
            CSINodeDriver(
                name=name,
                node_id=as_str(driver.get("nodeID"), f"{where}.nodeID"),
                topology_keys=tuple(
                    as_str(key, f"{where}.topologyKeys[{i}]")
                    for i, key in enumerate(
                        as_list(driver.get("topologyKeys"), f"{where}.topologyKeys")
                    )
                ),
                allocatable_count=None
                if count is None
                else as_int(count, f"{where}.allocatable.count", bits=32),
            )
        )
    return CSINode(metadata=metadata, drivers=tuple(drivers))


@dataclass(frozen=True, slots=True)
class CSIDriver(HasMetadata):
    metadata: ObjectMeta
    attach_required: bool  # API default: true
    storage_capacity: bool  # API default: false
    pod_info_on_mount: bool
    prevent_pod_scheduling_if_missing: bool

    @classmethod
    def from_dict(cls, raw: RawObject) -> CSIDriver:
        """Parse a storage.k8s.io/v1 CSIDriver; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="CSIDriver", namespaced=False, parse=_parse_csi_driver)


def _parse_csi_driver(metadata: ObjectMeta, raw: RawObject) -> CSIDriver:
    spec = as_map(raw.get("spec"), "spec")
    return CSIDriver(
        metadata=metadata,
        attach_required=as_bool(spec.get("attachRequired"), "spec.attachRequired", True),
        storage_capacity=as_bool(spec.get("storageCapacity"), "spec.storageCapacity"),
        pod_info_on_mount=as_bool(spec.get("podInfoOnMount"), "spec.podInfoOnMount"),
        prevent_pod_scheduling_if_missing=as_bool(
            spec.get("preventPodSchedulingIfMissing"), "spec.preventPodSchedulingIfMissing"
        ),
    )


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity(HasMetadata):
    metadata: ObjectMeta
    storage_class_name: str
    node_topology: LabelSelector | None  # None: reachable from no node
    capacity: int | None  # bytes; None when unset
    maximum_volume_size: int | None  # bytes; None when unset

    @property
    def volume_limit(self) -> int | None:
        """The largest volume it can provision: `maximumVolumeSize` if set (more precise), else `capacity`."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity

    def reaches(self, labels: Mapping[str, str]) -> bool:
        """A node with these labels can use this capacity (upstream `nodeHasAccess`)."""
        return self.node_topology is not None and self.node_topology.matches(labels)

    def fits(self, size: int) -> bool:
        """A volume of `size` bytes can be provisioned from it (upstream `capacitySufficient`)."""
        limit = self.volume_limit
        return limit is not None and limit >= size

    @classmethod
    def from_dict(cls, raw: RawObject) -> CSIStorageCapacity:
        """Parse a storage.k8s.io/v1 CSIStorageCapacity; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="CSIStorageCapacity", namespaced=True, parse=_parse_capacity)


def _parse_capacity(metadata: ObjectMeta, raw: RawObject) -> CSIStorageCapacity:
    return CSIStorageCapacity(
        metadata=metadata,
        storage_class_name=as_str(raw.get("storageClassName"), "storageClassName"),
        node_topology=parse_label_selector(raw.get("nodeTopology"), "nodeTopology"),
        capacity=storage_bytes(raw.get("capacity"), "capacity"),
        maximum_volume_size=storage_bytes(raw.get("maximumVolumeSize"), "maximumVolumeSize"),
    )


@dataclass(frozen=True, slots=True)
class VolumeAttachment(HasMetadata):
    metadata: ObjectMeta
    attacher: str  # the CSI driver that attaches
    node_name: str
    persistent_volume_name: str | None  # spec.source.persistentVolumeName; None for in-line
    attached: bool  # status.attached

    @classmethod
    def from_dict(cls, raw: RawObject) -> VolumeAttachment:
        """Parse a storage.k8s.io/v1 VolumeAttachment; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="VolumeAttachment", namespaced=False, parse=_parse_attachment)


def _parse_attachment(metadata: ObjectMeta, raw: RawObject) -> VolumeAttachment:
    spec = as_map(raw.get("spec"), "spec")
    status = as_map(raw.get("status"), "status")
    source = as_map(spec.get("source"), "spec.source")
    pv_name = source.get("persistentVolumeName")
    return VolumeAttachment(
        metadata=metadata,
        attacher=as_str(spec.get("attacher"), "spec.attacher"),
        node_name=as_str(spec.get("nodeName"), "spec.nodeName"),
        persistent_volume_name=None
        if pv_name is None
        else as_str(pv_name, "spec.source.persistentVolumeName"),
        attached=as_bool(status.get("attached"), "status.attached"),
    )
