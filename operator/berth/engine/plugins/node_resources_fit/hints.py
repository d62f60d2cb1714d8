"""Queueing hints: whether a cluster event can help a pod that NodeResourcesFit rejected."""

from __future__ import annotations

from berth.engine.framework.events import QueueingHint
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource
from berth.engine.plugins.node_resources_fit.fit_requests import checked_requests


def fits_empty_node(pod: Pod, node: Node) -> bool:
    """Would `pod` fit `node` if nothing ran there? Ignored-resource args do not apply here."""
    if node.allocatable.get(PODS, 0) < 1:
        return False
    return all(
        amount <= node.allocatable.get(name, 0) for name, amount in checked_requests(pod.requests)
    )


def requested_resources_increased(pod: Pod, old: Node, new: Node) -> bool:
    """Did the node's allowed pod count, or its allocatable of anything the pod requests, grow?"""
    if new.allocatable.get(PODS, 0) > old.allocatable.get(PODS, 0):
        return True
    return any(
        new.allocatable.get(name, 0) > old.allocatable.get(name, 0)
        for name, _ in checked_requests(pod.requests)
    )


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Node added or its allocatable changed: queue only if the pod fits it and, on update, something grew."""
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        return QueueingHint.QUEUE  # a hint that cannot judge counts as Queue
    if not fits_empty_node(pod, new):
        return QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    if not requested_resources_increased(pod, old, new):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


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
