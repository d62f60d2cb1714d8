"""Per-node building blocks shared by spread filtering and scoring: who counts, and where.

A node takes part in a constraint's counting when it carries the topology keys
and passes the constraint's inclusion policies (the pod's node affinity when
`nodeAffinityPolicy: Honor`, its tolerations when `nodeTaintsPolicy: Honor`).
Pods count when they are in the incoming pod's namespace, are not terminating
and match the constraint's selector.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.cluster.state import MISSING
from berth.engine.model.labels import LabelSelector
from berth.engine.model.pod import InclusionPolicy, Pod, TopologySpreadConstraint
from berth.engine.nodematch import (
    matches_required_node_affinity,
    pod_has_node_requirements,
    untolerated_taint_mask,
)

Mask = NDArray[np.bool_]
Counts = NDArray[np.int64]


def selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """A nil selector matches nothing; the empty selector matches everything."""
    return selector is not None and selector.matches(labels)


def tracked_matching_pods(
    cluster: ClusterState, selector: LabelSelector | None, namespace: str
) -> Counts | None:
    """Non-terminating pods in `namespace` matching `selector`, per slot: the cluster's own
    (maintained) array, or None when kube-scheduler counts nothing.

    kube-scheduler counts nothing for a nil or an empty selector (although the
    empty selector does match the incoming pod itself).
    """
    if selector is None or selector.is_empty:
        return None
    query = PodQuery((PodClause(selector, frozenset((namespace,))),), skip_terminating=True)
    return cluster.matching_pod_counts(query)


def matching_pods_per_slot(
    cluster: ClusterState, selector: LabelSelector | None, namespace: str
) -> Counts:
    """`tracked_matching_pods`, with zeros (all slots) when nothing counts."""
    pods = tracked_matching_pods(cluster, selector, namespace)
    return np.zeros(len(cluster.live), dtype=np.int64) if pods is None else pods


def has_all_keys(
    cluster: ClusterState,
    constraints: Sequence[TopologySpreadConstraint],
    slots: NodeSlots | None = None,
) -> Mask:
    """Per slot (every slot when `slots` is None): the node carries every constraint's topology key.

    Empty slots carry no labels, so they never qualify.
    """
    present: Mask | None = None
    for key in {c.topology_key for c in constraints}:
        values = cluster.label_column(key).values
        has = (values if slots is None else values[slots]) != MISSING
        present = has if present is None else present & has
    if present is None:
        size = len(cluster.live) if slots is None else len(slots)
        return np.ones(size, dtype=bool) if slots is not None else cluster.live.copy()
    return present


class NodeInclusion:
    """A pod's inclusion policies over every slot, each mask computed at most once.

    Masks are as long as the node table; empty slots are never included.
    """

    def __init__(self, cluster: ClusterState, pod: Pod) -> None:
        self._cluster = cluster
        self._pod = pod
        self._live: NodeSlots | None = None
        self._affinity: Mask | None = None
        self._tolerated: Mask | None = None

    def _scatter(self, judged: Mask) -> Mask:
        assert self._live is not None
        mask = np.zeros(len(self._cluster.live), dtype=bool)
        mask[self._live] = judged
        return mask

    def _live_slots(self) -> NodeSlots:
        if self._live is None:
            self._live = np.flatnonzero(self._cluster.live).astype(np.intp)
        return self._live

    def _affinity_mask(self) -> Mask:
        if self._affinity is None:
            live = self._live_slots()
            self._affinity = self._scatter(
                matches_required_node_affinity(self._cluster, self._pod, live)
            )
        return self._affinity

    def _tolerated_mask(self) -> Mask:
        if self._tolerated is None:
            live = self._live_slots()
            untolerated = untolerated_taint_mask(self._cluster, self._pod.tolerations, live)
            self._tolerated = (
                self._cluster.live.copy() if untolerated is None else self._scatter(~untolerated)
            )
        return self._tolerated

    def mask(self, constraint: TopologySpreadConstraint) -> Mask | None:
        """Which slots pass `constraint`'s policies; None when every node does."""
        result: Mask | None = None
        if constraint.node_affinity_policy is InclusionPolicy.HONOR and pod_has_node_requirements(
            self._pod
        ):
            result = self._affinity_mask()
        if constraint.node_taints_policy is InclusionPolicy.HONOR:
            tolerated = self._tolerated_mask()
            result = tolerated if result is None else result & tolerated
        return result
