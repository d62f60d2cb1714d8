"""Queueing hints: whether a cluster event can help a pod that NodeResourcesFit rejected.

`served` maps the extended resources DeviceClasses serve: a node without such a resource
in its allocatable leaves it to DRA, so the pod is never short of it there.
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.extended_resources import implicit_resource_name
from berth.engine.framework.events import QueueingHint
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource
from berth.engine.plugins.node_resources_fit.fit_requests import checked_requests

_SERVED_BY_NONE: Mapping[str, DeviceClass] = {}


def left_to_dra(name: str, node: Node, served: Mapping[str, DeviceClass]) -> bool:
    return name in served and node.allocatable.get(name, 0) <= 0


def fits_empty_node(
    pod: Pod, node: Node, *, served: Mapping[str, DeviceClass] = _SERVED_BY_NONE
) -> bool:
    """Would `pod` fit `node` if nothing ran there? Ignored-resource args do not apply here."""
    if node.allocatable.get(PODS, 0) < 1:
        return False
    return all(
        amount <= node.allocatable.get(name, 0) or left_to_dra(name, node, served)
        for name, amount in checked_requests(pod.requests)
    )


def requested_resources_increased(
    pod: Pod, old: Node, new: Node, *, served: Mapping[str, DeviceClass] = _SERVED_BY_NONE
) -> bool:
    """Did the node's allowed pod count, or its allocatable of anything the pod requests, grow
    (or does the node leave one of them to DRA)?"""
    if new.allocatable.get(PODS, 0) > old.allocatable.get(PODS, 0):
        return True
    return any(
        new.allocatable.get(name, 0) > old.allocatable.get(name, 0)
        or (is_scalar_resource(name) and left_to_dra(name, new, served))
        for name, _ in checked_requests(pod.requests)
    )


def after_node_change(
    pod: Pod, old: object, new: object, *, served: Mapping[str, DeviceClass] = _SERVED_BY_NONE
) -> QueueingHint:
    """Node added or its allocatable changed: queue only if the pod fits it and, on update, something grew."""
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        return QueueingHint.QUEUE  # a hint that cannot judge counts as Queue
    if not fits_empty_node(pod, new, served=served):
        return QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    if not requested_resources_increased(pod, old, new, served=served):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def after_device_class_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A class added or changed may now serve an extended resource the pod asks for."""
    if not isinstance(new, DeviceClass):
        return QueueingHint.QUEUE
    if isinstance(old, DeviceClass):
        if old.extended_resource_name == new.extended_resource_name:
            return QueueingHint.SKIP
    elif implicit_resource_name(new.name) in pod.requests:
        return QueueingHint.QUEUE
    if new.extended_resource_name is not None and new.extended_resource_name in pod.requests:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def after_assigned_pod_delete(pod: Pod, old: object, new: object) -> QueueingHint:
    """Any deleted pod that was bound (or nominated somewhere) may have freed room."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def relevant_resources_decreased(pod: Pod, old: Pod, new: Pod) -> bool:
    """Did a bound pod shrink a request of a resource the rejected pod asks for?"""
    if not new.node_name:
        return False
    for name, amount in pod.requests.items():
        if amount == 0:
            continue
        tracked = name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)
        if tracked and old.requests.get(name, 0) > new.requests.get(name, 0):
            return True
    return False


def after_assigned_pod_scale_down(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, Pod) or not isinstance(new, Pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if relevant_resources_decreased(pod, old, new) else QueueingHint.SKIP


def after_own_scale_down(pod: Pod, old: object, new: object) -> QueueingHint:
    """The rejected pod itself asked for less: always worth a retry (kube-scheduler's TargetPod event)."""
    if isinstance(new, Pod) and new.uid != pod.uid:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE
