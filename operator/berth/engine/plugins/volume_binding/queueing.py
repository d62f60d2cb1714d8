"""The cluster events that may let a pod VolumeBinding rejected be scheduled, with upstream's hints.

- A StorageClass created, or updated in its allowed topologies (its binding mode cannot change).
- A claim of the pod created or updated (in the pod's namespace, under a name it uses).
- Any PersistentVolume created or updated; any node created or relabelled (no hint).
- A CSINode created, or its migrated-plugins annotation changed (in-tree PV translation).
- A CSIDriver of one of the pod's in-line CSI volumes no longer publishing capacity.
- A CSIStorageCapacity created, or its volume limit grown.
"""

from __future__ import annotations

from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from berth.engine.model.volume_sources import CSISource

__all__ = ["events_to_register"]

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.SKIP


def _after_storage_class(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, StorageClass) or not isinstance(new, StorageClass):
        return QUEUE  # created (or not a class at all: let the pod try)
    return QUEUE if old.allowed_topologies != new.allowed_topologies else SKIP


def _after_claim(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, PersistentVolumeClaim):
        return QUEUE
    if new.namespace != pod.namespace:
        return SKIP
    return QUEUE if new.name in pod.claim_names else SKIP


def _after_csi_node(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QUEUE
    return QUEUE if old.migrated_plugins != new.migrated_plugins else SKIP


def _after_csi_driver(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, CSIDriver) or not isinstance(new, CSIDriver):
        return QUEUE
    for volume in pod.volumes:
        source = volume.source
        if not isinstance(source, CSISource) or source.driver != new.name:
            continue
        if old.storage_capacity and not new.storage_capacity:
            return QUEUE
    return SKIP


def _after_capacity(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, CSIStorageCapacity) or not isinstance(new, CSIStorageCapacity):
        return QUEUE
    grown = new.volume_limit
    before = old.volume_limit
    return QUEUE if grown is not None and (before is None or grown > before) else SKIP


def events_to_register() -> list[ClusterEventWithHint]:
    add_or_update = Action.ADD | Action.UPDATE
    return [
        ClusterEventWithHint(
            ClusterEvent(Resource.STORAGE_CLASS, add_or_update), _after_storage_class
        ),
        ClusterEventWithHint(
            ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, add_or_update), _after_claim
        ),
        ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME, add_or_update)),
        ClusterEventWithHint(ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL)),
        ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, add_or_update), _after_csi_node),
        ClusterEventWithHint(ClusterEvent(Resource.CSI_DRIVER, Action.UPDATE), _after_csi_driver),
        ClusterEventWithHint(
            ClusterEvent(Resource.CSI_STORAGE_CAPACITY, add_or_update), _after_capacity
        ),
    ]
