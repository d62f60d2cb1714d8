"""Queueing hints: which assigned-pod and node changes may help a pod InterPodAffinity rejected.

As upstream, the rejected pod's terms are matched with empty namespace labels here
(its namespaceSelector is not resolved against the namespace list for hints).
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.framework.events import QueueingHint
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod, PodAffinityTerm

_NO_NAMESPACE_LABELS: Mapping[str, str] = {}


def _matches_all(terms: tuple[PodAffinityTerm, ...], pod: Pod) -> bool:
    return bool(terms) and all(
        term.matches(pod.namespace, pod.labels, _NO_NAMESPACE_LABELS) for term in terms
    )


def _matches_any(terms: tuple[PodAffinityTerm, ...], pod: Pod) -> bool:
    return any(term.matches(pod.namespace, pod.labels, _NO_NAMESPACE_LABELS) for term in terms)


def _is_unplaced(pod: Pod | None) -> bool:
    return pod is not None and not pod.node_name and not pod.nominated_node_name


def after_assigned_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """An assigned pod was added, relabelled or deleted."""
    original = old if isinstance(old, Pod) else None
    modified = new if isinstance(new, Pod) else None
    if original is None and modified is None:
        return QueueingHint.QUEUE  # not a pod: let the queue retry rather than guess
    if _is_unplaced(modified) or _is_unplaced(original):
        return QueueingHint.SKIP
    affinity = pod.required_affinity
    anti_affinity = pod.required_anti_affinity
    if original is not None and modified is not None:
        if not _matches_all(affinity, original) and _matches_all(affinity, modified):
            return QueueingHint.QUEUE
        if _matches_any(anti_affinity, original) and not _matches_any(anti_affinity, modified):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if modified is not None:
        return QueueingHint.QUEUE if _matches_all(affinity, modified) else QueueingHint.SKIP
    assert original is not None
    if _matches_any(anti_affinity, original):
        return QueueingHint.QUEUE
    if _matches_any(original.required_anti_affinity, pod):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def after_target_pod_label_update(pod: Pod, old: object, new: object) -> QueueingHint:
    """The rejected pod's own labels changed: an existing pod's anti-affinity may no longer apply."""
    return QueueingHint.QUEUE


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node was added or its labels changed: it may have joined (or left) a topology domain."""
    original = old if isinstance(old, Node) else None
    modified = new if isinstance(new, Node) else None
    if modified is None:
        return QueueingHint.QUEUE
    for term in pod.required_affinity:
        key = term.topology_key
        if original is None:
            if key in modified.labels:
                return QueueingHint.QUEUE
            continue
        if key in modified.labels and original.labels.get(key) != modified.labels[key]:
            # Gained the key, or moved to another domain of it.
            return QueueingHint.QUEUE
    for term in pod.required_anti_affinity:
        if original is None:
            return QueueingHint.QUEUE
        key = term.topology_key
        if key in original.labels and original.labels.get(key) != modified.labels.get(key):
            # Lost the key, or moved to another domain of it.
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
