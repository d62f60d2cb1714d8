"""The storage kinds Berth watches, lists and reads from files: where each lives in the API and how
it is parsed.

kube-scheduler's volume plugins read seven kinds through informers; Berth watches the same
seven (handlers.py), lists them when it starts leading (app.py) and when a snapshot of a
cluster is taken (cli/cluster_snapshot.py), and accepts them in offline input. One table
keeps those four places in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.cluster.storage import StorageObject
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass

__all__ = ["STORAGE_KINDS", "StorageKind", "storage_kind_named"]


@dataclass(frozen=True, slots=True)
class StorageKind:
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    parse: Callable[[Mapping[str, Any]], StorageObject]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_path(self) -> str:
        """The cluster-wide collection's path, e.g. /apis/storage.k8s.io/v1/csinodes."""
        prefix = f"/apis/{self.group}" if self.group else "/api"
        return f"{prefix}/{self.version}/{self.plural}"

    def key_of(self, raw: Mapping[str, Any]) -> str | None:
        """The cache key (`namespace/name` or `name`) of a raw object; None if it has no name."""
        metadata = raw.get("metadata")
        if not isinstance(metadata, Mapping):
            return None
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            return None
        if not self.namespaced:
            return name
        namespace = metadata.get("namespace")
        return f"{namespace if isinstance(namespace, str) and namespace else 'default'}/{name}"


_STORAGE = "storage.k8s.io"

STORAGE_KINDS = (
    StorageKind(
        "PersistentVolumeClaim",
        "",
        "v1",
        "persistentvolumeclaims",
        namespaced=True,
        parse=PersistentVolumeClaim.from_dict,
    ),
    StorageKind(
        "PersistentVolume",
        "",
        "v1",
        "persistentvolumes",
        namespaced=False,
        parse=PersistentVolume.from_dict,
    ),
    StorageKind(
        "StorageClass",
        _STORAGE,
        "v1",
        "storageclasses",
        namespaced=False,
        parse=StorageClass.from_dict,
    ),
    StorageKind("CSINode", _STORAGE, "v1", "csinodes", namespaced=False, parse=CSINode.from_dict),
    StorageKind(
        "CSIDriver", _STORAGE, "v1", "csidrivers", namespaced=False, parse=CSIDriver.from_dict
    ),
    StorageKind(
        "CSIStorageCapacity",
        _STORAGE,
        "v1",
        "csistoragecapacities",
        namespaced=True,
        parse=CSIStorageCapacity.from_dict,
    ),
    StorageKind(
        "VolumeAttachment",
        _STORAGE,
        "v1",
        "volumeattachments",
        namespaced=False,
        parse=VolumeAttachment.from_dict,
    ),
)

_BY_KIND = {kind.kind: kind for kind in STORAGE_KINDS}


def storage_kind_named(kind: str) -> StorageKind | None:
    """The storage kind with this API kind name (e.g. "PersistentVolumeClaim"), if it is one."""
    return _BY_KIND.get(kind)
