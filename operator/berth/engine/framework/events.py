"""Cluster events a plugin cares about, and queueing hints that decide whether one can help
a rejected pod."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, Flag, auto

from berth.engine.model.pod import Pod


class Resource(Enum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    TARGET_POD = "TargetPod"  # the rejected pod itself was updated
    NODE = "Node"
    NAMESPACE = "Namespace"
    SERVICE = "Service"
    # The storage kinds the volume plugins read; values are the API kind names.
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    # The DRA kinds DynamicResources reads.
    RESOURCE_CLAIM = "ResourceClaim"
    DEVICE_CLASS = "DeviceClass"
    RESOURCE_SLICE = "ResourceSlice"
    WILDCARD = "*"


class Action(Flag):
    ADD = auto()
    DELETE = auto()
    UPDATE_NODE_ALLOCATABLE = auto()
    UPDATE_NODE_LABEL = auto()
    UPDATE_NODE_TAINT = auto()
    UPDATE_NODE_CONDITION = auto()
    UPDATE_NODE_ANNOTATION = auto()
    UPDATE_NODE_UNSCHEDULABLE = auto()
    UPDATE_NODE_DECLARED_FEATURE = auto()
    UPDATE_POD_LABEL = auto()
    UPDATE_POD_SCALE_DOWN = auto()
    UPDATE_POD_TOLERATIONS = auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = auto()
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = auto()
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_UNSCHEDULABLE
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: Resource
    action: Action
    label: str = ""

    def matches(self, other: ClusterEvent) -> bool:
        """True when `other` (a happening) is covered by this registration."""
        resource_ok = (
            self.resource is Resource.WILDCARD
            or self.resource is other.resource
            or (
                self.resource is Resource.POD
                and other.resource
                in (Resource.ASSIGNED_POD, Resource.UNSCHEDULED_POD, Resource.TARGET_POD)
            )
        )
        return resource_ok and bool(self.action & other.action)


class QueueingHint(Enum):
    SKIP = "QueueSkip"
    QUEUE = "Queue"


QueueingHintFn = Callable[[Pod, object, object], QueueingHint]
"""(rejected pod, old object or None, new object or None) -> whether the event may help it."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None  # None: always requeue


UNSCHEDULABLE_TIMEOUT = ClusterEvent(Resource.WILDCARD, Action.ALL, "UnschedulableTimeout")
