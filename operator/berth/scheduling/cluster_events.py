"""Which cluster event an object change is, in the vocabulary plugins register for."""

from __future__ import annotations

from berth.engine.framework.events import Action, ClusterEvent, Resource
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

NODE_ADD = ClusterEvent(Resource.NODE, Action.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(Resource.NODE, Action.DELETE, "NodeDelete")
ASSIGNED_POD_ADD = ClusterEvent(Resource.ASSIGNED_POD, Action.ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE, "AssignedPodDelete")


def node_update_event(old: Node, new: Node) -> ClusterEvent | None:
    """The node-update flavours that changed, or None when nothing a plugin reads did."""
    action = Action(0)
    if old.allocatable != new.allocatable:
        action |= Action.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= Action.UPDATE_NODE_LABEL
    if old.taints != new.taints:
        action |= Action.UPDATE_NODE_TAINT
    if old.unschedulable != new.unschedulable:
        action |= Action.UPDATE_NODE_UNSCHEDULABLE
    if old.images != new.images:
        action |= Action.UPDATE_NODE_ANNOTATION
    if old.declared_features != new.declared_features:
        action |= Action.UPDATE_NODE_DECLARED_FEATURE
    if not action:
        return None
    return ClusterEvent(Resource.NODE, action, "NodeUpdate")


def assigned_pod_update_event(old: Pod, new: Pod) -> ClusterEvent | None:
    action = Action(0)
    if old.labels != new.labels:
        action |= Action.UPDATE_POD_LABEL
    if any(new.requests.get(name, 0) < amount for name, amount in old.requests.items()):
        action |= Action.UPDATE_POD_SCALE_DOWN
    if old.node_name != new.node_name:
        return ASSIGNED_POD_ADD
    if not action:
        return None
    return ClusterEvent(Resource.ASSIGNED_POD, action, "AssignedPodUpdate")


_ACTION_LABELS = {Action.ADD: "Add", Action.UPDATE: "Update", Action.DELETE: "Delete"}

# kube-scheduler names the resources of non-core kinds with their API group, and so labels
# their events (metrics' `event`): "storage.k8s.io/CSINodeAdd".
_GROUP_OF = {
    "StorageClass": "storage.k8s.io",
    "CSINode": "storage.k8s.io",
    "CSIDriver": "storage.k8s.io",
    "CSIStorageCapacity": "storage.k8s.io",
    "VolumeAttachment": "storage.k8s.io",
    "DeviceClass": "resource.k8s.io",
    "ResourceClaim": "resource.k8s.io",
    "ResourceSlice": "resource.k8s.io",
}


def watched_event(kind: str, action: Action) -> ClusterEvent:
    """The event for an added, updated or deleted storage or DRA object of `kind` (its API
    kind name).

    Like kube-scheduler's generic handlers for these kinds, an update is plain `Update`
    (every update flavour), so a registration for any update of the kind matches it.
    """
    group = _GROUP_OF.get(kind)
    resource = f"{group}/{kind}" if group else kind
    return ClusterEvent(Resource(kind), action, f"{resource}{_ACTION_LABELS[action]}")
