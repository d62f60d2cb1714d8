"""The storage kinds Berth watches, lists and reads from files: where each lives in the API and how
it is parsed.

kube-scheduler's volume plugins read seven kinds through informers; Berth watches the same
seven (handlers.py), lists them when it starts leading (app.py) and when a snapshot of a
cluster is taken (cli/cluster_snapshot.py), and accepts them in offline input. One table
keeps those four places in step.
"""

from __future__ import annotations

from berth.engine.cluster.storage import StorageObject
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from berth.kube.watched_kinds import WatchedKind

StorageKind = WatchedKind[StorageObject]

__all__ = ["STORAGE_KINDS", "StorageKind", "storage_kind_named"]


_STORAGE = "storage.k8s.io"

STORAGE_KINDS: tuple[StorageKind, ...] = (
    WatchedKind(
        "PersistentVolumeClaim",
        "",
        "v1",
        "persistentvolumeclaims",
        namespaced=True,
        parse=PersistentVolumeClaim.from_dict,
    ),
    WatchedKind(
        "PersistentVolume",
        "",
        "v1",
        "persistentvolumes",
        namespaced=False,
        parse=PersistentVolume.from_dict,
    ),
    WatchedKind(
        "StorageClass",
        _STORAGE,
        "v1",
        "storageclasses",
        namespaced=False,
        parse=StorageClass.from_dict,
    ),
    WatchedKind("CSINode", _STORAGE, "v1", "csinodes", namespaced=False, parse=CSINode.from_dict),
    WatchedKind(
        "CSIDriver", _STORAGE, "v1", "csidrivers", namespaced=False, parse=CSIDriver.from_dict
    ),
    WatchedKind(
        "CSIStorageCapacity",
        _STORAGE,
        "v1",
        "csistoragecapacities",
        namespaced=True,
        parse=CSIStorageCapacity.from_dict,
    ),
    WatchedKind(
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
