"""The storage objects the volume plugins read, kept beside the nodes and pods of a `ClusterState`.

kube-scheduler's volume plugins read PersistentVolumes, PersistentVolumeClaims,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments from
informer listers. Berth keeps them here, fed by the watches (or by the simulator's input),
with the lookups the plugins make indexed: volumes by storage class, capacities by class,
attachments by node. Volumes and claims sit in assume stores, so that VolumeBinding's
Reserve can make the next decision see bindings the API has not reported yet.

Every change bumps `generation`, so a plugin can keep what it derives from these objects
for as long as nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from berth.engine.cluster.storage_assume import AssumeStore, Versioned
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass

__all__ = ["StorageObject", "StorageObjects", "StorageStore", "storage_kind"]

T = TypeVar("T", bound=Versioned)


class StorageStore(Generic[T]):
    """Objects of one kind by key, optionally indexed by one string property."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._objects: dict[str, T] = {}

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, key: str) -> bool:
        return key in self._objects

    def get(self, key: str) -> T | None:
        return self._objects.get(key)

    def values(self) -> Iterable[T]:
        return self._objects.values()

    def keys(self) -> Iterable[str]:
        return self._objects.keys()

    def upsert(self, obj: T) -> T | None:
        previous = self._objects.get(obj.key)
        self._objects[obj.key] = obj
        return previous

    def remove(self, key: str) -> T | None:
        return self._objects.pop(key, None)


class _Index:
    """Keys grouped by one string property of their object, in arrival order."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[str, None]] = {}

    def move(self, key: str, old: str | None, new: str | None) -> None:
        if old == new:
            return
        if old is not None:
            group = self._groups.get(old)
            if group is not None:
                group.pop(key, None)
                if not group:
                    del self._groups[old]
        if new is not None:
            self._groups.setdefault(new, {})[key] = None

    def keys_of(self, value: str) -> Iterable[str]:
        return self._groups.get(value, {}).keys()


def _held(keys: Iterable[str], get: Callable[[str], T | None]) -> list[T]:
    """The objects at `keys` (an index's group), in the index's order."""
    return [obj for key in keys if (obj := get(key)) is not None]


class StorageObjects:
    """Every storage object the scheduler reads, with the lookups the volume plugins make."""

    def __init__(self) -> None:
        self.generation = 0
        self.volumes: AssumeStore[PersistentVolume] = AssumeStore("PersistentVolume")
        self.claims: AssumeStore[PersistentVolumeClaim] = AssumeStore("PersistentVolumeClaim")
        self.classes: StorageStore[StorageClass] = StorageStore("StorageClass")
        self.csi_nodes: StorageStore[CSINode] = StorageStore("CSINode")
        self.csi_drivers: StorageStore[CSIDriver] = StorageStore("CSIDriver")
        self.capacities: StorageStore[CSIStorageCapacity] = StorageStore("CSIStorageCapacity")
        self.attachments: StorageStore[VolumeAttachment] = StorageStore("VolumeAttachment")
        self._volumes_by_class = _Index()
        self._capacities_by_class = _Index()
        self._attachments_by_node = _Index()

    # ------------------------------------------------------------------ lookups

    def volume(self, name: str) -> PersistentVolume | None:
        """A PersistentVolume by name, as assumed (or as the API has it)."""
        return self.volumes.get(name)

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A PersistentVolumeClaim, as assumed (or as the API has it)."""
        return self.claims.get(f"{namespace}/{name}")

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, node_name: str) -> CSINode | None:
        return self.csi_nodes.get(node_name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def volumes_of_class(self, class_name: str) -> list[PersistentVolume]:
        """Volumes whose class (beta annotation first) is `class_name`, assumed versions included.

        Indexed by the API's version of each volume, as upstream's PV assume cache does;
        an assumption never changes a volume's class.
        """
        return _held(self._volumes_by_class.keys_of(class_name), self.volumes.get)

    def capacities_of_class(self, class_name: str) -> list[CSIStorageCapacity]:
        return _held(self._capacities_by_class.keys_of(class_name), self.capacities.get)

    def attachments_on(self, node_name: str) -> list[VolumeAttachment]:
        return _held(self._attachments_by_node.keys_of(node_name), self.attachments.get)

    # ------------------------------------------------------------------ changes (watch, simulator)

    def upsert_volume(self, volume: PersistentVolume) -> PersistentVolume | None:
        previous = self.volumes.upsert(volume)
        self._volumes_by_class.move(
            volume.key, None if previous is None else previous.storage_class, volume.storage_class
        )
        self.generation += 1
        return previous

    def remove_volume(self, name: str) -> PersistentVolume | None:
        previous = self.volumes.remove(name)
        if previous is not None:
            self._volumes_by_class.move(name, previous.storage_class, None)
            self.generation += 1
        return previous

    def upsert_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim | None:
        previous = self.claims.upsert(claim)
        self.generation += 1
        return previous

    def remove_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        previous = self.claims.remove(f"{namespace}/{name}")
        if previous is not None:
            self.generation += 1
        return previous

    def upsert_class(self, storage_class: StorageClass) -> StorageClass | None:
        self.generation += 1
        return self.classes.upsert(storage_class)

    def remove_class(self, name: str) -> StorageClass | None:
        return self._removed(self.classes.remove(name))

    def upsert_csi_node(self, csi_node: CSINode) -> CSINode | None:
        self.generation += 1
        return self.csi_nodes.upsert(csi_node)

    def remove_csi_node(self, name: str) -> CSINode | None:
        return self._removed(self.csi_nodes.remove(name))

    def upsert_csi_driver(self, driver: CSIDriver) -> CSIDriver | None:
        self.generation += 1
        return self.csi_drivers.upsert(driver)

    def remove_csi_driver(self, name: str) -> CSIDriver | None:
        return self._removed(self.csi_drivers.remove(name))

    def upsert_capacity(self, capacity: CSIStorageCapacity) -> CSIStorageCapacity | None:
        previous = self.capacities.upsert(capacity)
        self._capacities_by_class.move(
            capacity.key,
            None if previous is None else previous.storage_class_name,
            capacity.storage_class_name,
        )
        self.generation += 1
        return previous

    def remove_capacity(self, namespace: str, name: str) -> CSIStorageCapacity | None:
        key = f"{namespace}/{name}"
        previous = self.capacities.remove(key)
        if previous is not None:
            self._capacities_by_class.move(key, previous.storage_class_name, None)
        return self._removed(previous)

    def upsert_attachment(self, attachment: VolumeAttachment) -> VolumeAttachment | None:
        previous = self.attachments.upsert(attachment)
        self._attachments_by_node.move(
            attachment.key, None if previous is None else previous.node_name, attachment.node_name
        )
        self.generation += 1
        return previous

    def remove_attachment(self, name: str) -> VolumeAttachment | None:
        previous = self.attachments.remove(name)
        if previous is not None:
            self._attachments_by_node.move(name, previous.node_name, None)
        return self._removed(previous)

    def _removed(self, previous: T | None) -> T | None:
        if previous is not None:
            self.generation += 1
        return previous

    # ------------------------------------------------------------------ assumptions (VolumeBinding)

    def assume_volume(self, volume: PersistentVolume) -> None:
        """Readers see `volume` (e.g. with a claimRef) until the API reports a newer version.

        Raises `AssumeConflictError` if the cache holds no volume of that name or another
        version of it.
        """
        self.volumes.assume(volume)
        self.generation += 1

    def assume_claim(self, claim: PersistentVolumeClaim) -> None:
        """Readers see `claim` (e.g. with a selected node) until the API reports a newer version."""
        self.claims.assume(claim)
        self.generation += 1

    def restore_volume(self, name: str) -> None:
        """Drop the assumption about a volume (Unreserve, failed binding)."""
        if self.volumes.is_assumed(name):
            self.volumes.restore(name)
            self.generation += 1

    def restore_claim(self, namespace: str, name: str) -> None:
        key = f"{namespace}/{name}"
        if self.claims.is_assumed(key):
            self.claims.restore(key)
            self.generation += 1

    # ------------------------------------------------------------------ any kind (intake, re-lists)

    def upsert(self, obj: StorageObject) -> StorageObject | None:
        """Add or replace any storage object; returns the previous (API) version."""
        if isinstance(obj, PersistentVolume):
            return self.upsert_volume(obj)
        if isinstance(obj, PersistentVolumeClaim):
            return self.upsert_claim(obj)
        if isinstance(obj, StorageClass):
            return self.upsert_class(obj)
        if isinstance(obj, CSINode):
            return self.upsert_csi_node(obj)
        if isinstance(obj, CSIDriver):
            return self.upsert_csi_driver(obj)
        if isinstance(obj, CSIStorageCapacity):
            return self.upsert_capacity(obj)
        return self.upsert_attachment(obj)

    def remove(self, kind: str, key: str) -> StorageObject | None:
        """Remove the object of `kind` (an API kind name) with `key`; returns what was held."""
        namespace, _, name = key.partition("/")
        if kind == "PersistentVolumeClaim":
            return self.remove_claim(namespace, name)
        if kind == "CSIStorageCapacity":
            return self.remove_capacity(namespace, name)
        removers = {
            "PersistentVolume": self.remove_volume,
            "StorageClass": self.remove_class,
            "CSINode": self.remove_csi_node,
            "CSIDriver": self.remove_csi_driver,
            "VolumeAttachment": self.remove_attachment,
        }
        remover = removers.get(kind)
        if remover is None:
            raise ValueError(f"not a storage kind: {kind!r}")
        removed: StorageObject | None = remover(key)
        return removed

    def held(self, kind: str) -> dict[str, StorageObject]:
        """The API's version of every object of `kind`, by key (what a re-list compares with)."""
        stores: dict[str, Iterable[StorageObject]] = {
            "PersistentVolume": self.volumes.api_values(),
            "PersistentVolumeClaim": self.claims.api_values(),
            "StorageClass": self.classes.values(),
            "CSINode": self.csi_nodes.values(),
            "CSIDriver": self.csi_drivers.values(),
            "CSIStorageCapacity": self.capacities.values(),
            "VolumeAttachment": self.attachments.values(),
        }
        objects = stores.get(kind)
        if objects is None:
            raise ValueError(f"not a storage kind: {kind!r}")
        return {obj.key: obj for obj in objects}


StorageObject = (
    PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | VolumeAttachment
)
"""Any of the storage kinds the scheduler reads."""

_KIND_OF: dict[type, str] = {
    PersistentVolume: "PersistentVolume",
    PersistentVolumeClaim: "PersistentVolumeClaim",
    StorageClass: "StorageClass",
    CSINode: "CSINode",
    CSIDriver: "CSIDriver",
    CSIStorageCapacity: "CSIStorageCapacity",
    VolumeAttachment: "VolumeAttachment",
}


def storage_kind(obj: StorageObject) -> str:
    """The API kind name of a storage object."""
    return _KIND_OF[type(obj)]
