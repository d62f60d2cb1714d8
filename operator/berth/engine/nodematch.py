"""A pod's node requirements evaluated over many node rows at once.

Several plugins ask the same questions about every node: does it satisfy the
pod's `nodeSelector` and required node affinity (NodeAffinity, and
PodTopologySpread's `nodeAffinityPolicy`), and does it carry a taint the pod
does not tolerate (TaintToleration, and `nodeTaintsPolicy`). Plugins may not
import each other, so the one implementation of each lives here, as pure
functions over `ClusterState` rows.

Node selector requirements work through the cluster's label columns: In/NotIn
compare value ids, Exists/DoesNotExist test for `MISSING`, Gt/Lt read the int64
meaning of each distinct label value (kept per column as its vocabulary grows),
and `metadata.name` fields compare slot numbers. Taints are judged once per
distinct taint set (`TaintGroups`).

The volume plugins ask the same kind of question about storage: which nodes a
PersistentVolume's node affinity, a StorageClass's `allowedTopologies` or a
CSIStorageCapacity's `nodeTopology` reach; those masks are built here too, from the
same label columns.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.node_index import TaintSet, taint_groups
from berth.engine.cluster.per_cluster import PerCluster
from berth.engine.cluster.state import MISSING, LabelColumn
from berth.engine.model.labels import (
    FieldRequirement,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    Requirement,
    parse_go_int64,
)
from berth.engine.model.node import Node, Taint, TaintEffect
from berth.engine.model.pod import Pod, PreferredNodeTerm, Toleration, tolerates_taint
from berth.engine.model.storage_class import TopologySelectorTerm

__all__ = [
    "first_untolerated_taint",
    "label_selector_mask",
    "matches_required_node_affinity",
    "node_label_selector_mask",
    "node_selector_mask",
    "pod_has_node_requirements",
    "pod_matches_node",
    "preferred_weights",
    "term_mask",
    "topology_terms_mask",
    "untolerated_taint_mask",
    "volume_node_affinity_mask",
]

Mask = NDArray[np.bool_]

NO_SCHEDULE_EFFECTS = frozenset((TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE))
"""The taint effects that keep a pod off a node (PreferNoSchedule only scores)."""


# ---------------------------------------------------------------------- node selectors


class _IntegerLabels:
    """The int64 meaning of each value in one label column's vocabulary (kept as it grows)."""

    def __init__(self) -> None:
        self.numbers = np.zeros(0, dtype=np.int64)
        self.valid = np.zeros(0, dtype=bool)

    def update(self, column: LabelColumn) -> None:
        known = self.numbers.size
        if known == len(column.vocabulary):
            return
        parsed = [parse_go_int64(value) for value in column.vocabulary[known:]]
        self.numbers = np.concatenate(
            [self.numbers, np.asarray([p or 0 for p in parsed], dtype=np.int64)]
        )
        self.valid = np.concatenate([self.valid, np.asarray([p is not None for p in parsed])])


_INTEGER_LABELS: PerCluster[dict[str, _IntegerLabels]] = PerCluster(dict)


def _integer_labels(cluster: ClusterState, key: str, column: LabelColumn) -> _IntegerLabels:
    per_key = _INTEGER_LABELS.of(cluster)
    numbers = per_key.get(key)
    if numbers is None:
        numbers = per_key[key] = _IntegerLabels()
    numbers.update(column)
    return numbers


def _one_of(values: NDArray[np.int32] | NodeSlots, wanted: list[int]) -> Mask:
    """Per entry: the value is one of `wanted` (no `isin` for the usual zero or one)."""
    if not wanted:
        return np.zeros(values.size, dtype=bool)
    if len(wanted) == 1:
        return np.equal(values, wanted[0])
    return np.isin(values, np.asarray(wanted, dtype=values.dtype))


def _requirement_mask(cluster: ClusterState, requirement: Requirement, slots: NodeSlots) -> Mask:
    column = cluster.label_column(requirement.key)
    values = column.values[slots]
    operator = requirement.operator
    if operator is Operator.EXISTS:
        return np.not_equal(values, MISSING)
    if operator is Operator.DOES_NOT_EXIST:
        return np.equal(values, MISSING)
    if operator in (Operator.IN, Operator.NOT_IN):
        inside = _one_of(values, [column.ids[v] for v in requirement.values if v in column.ids])
        return inside if operator is Operator.IN else ~inside
    # Gt / Lt (apimachinery's Requirement.Matches): both the label value and the single
    # requirement value are parsed as Go int64; a missing or unparsable label never matches.
    (raw_bound,) = requirement.values
    bound = parse_go_int64(raw_bound)
    if bound is None:
        return np.zeros(slots.size, dtype=bool)
    integers = _integer_labels(cluster, requirement.key, column)
    if operator is Operator.GT:
        by_value = integers.valid & (integers.numbers > bound)
    else:
        by_value = integers.valid & (integers.numbers < bound)
    # One extra False at the end: value id MISSING (-1) indexes it.
    lookup = np.append(by_value, False)
    return lookup[values]


def _field_mask(cluster: ClusterState, requirement: FieldRequirement, slots: NodeSlots) -> Mask:
    named = [cluster.slot_of(name) for name in requirement.values]
    inside = _one_of(slots, [slot for slot in named if slot is not None])
    return inside if requirement.operator is Operator.IN else ~inside


def term_mask(
    cluster: ClusterState, term: NodeSelectorTerm, slots: NodeSlots, *, with_fields: bool = True
) -> Mask:
    """Nodes matching every expression and field of `term`; an empty or invalid term matches none.

    (kube-scheduler ignores a term's parse error: the term simply never matches.)
    `with_fields=False` judges nodes by their labels alone, `matchFields` passing, as a
    PersistentVolume's node affinity is judged.
    """
    if not term.valid or term.is_empty:
        return np.zeros(slots.size, dtype=bool)
    result: Mask = np.ones(slots.size, dtype=bool)
    for requirement in term.expressions:
        result &= _requirement_mask(cluster, requirement, slots)
    for field_requirement in term.fields if with_fields else ():
        result &= _field_mask(cluster, field_requirement, slots)
    return result


def node_selector_mask(
    cluster: ClusterState, selector: NodeSelector, slots: NodeSlots, *, with_fields: bool = True
) -> Mask:
    """Nodes matching some term of `selector` (terms are ORed; no terms matches no node)."""
    result = np.zeros(slots.size, dtype=bool)
    for term in selector.terms:
        result |= term_mask(cluster, term, slots, with_fields=with_fields)
    return result


def label_selector_mask(cluster: ClusterState, labels: Mapping[str, str], slots: NodeSlots) -> Mask:
    """Nodes carrying every label of a `nodeSelector` map with exactly that value."""
    result = np.ones(slots.size, dtype=bool)
    for key, value in labels.items():
        column = cluster.label_column(key)
        wanted = column.ids.get(value)
        if wanted is None:
            return np.zeros(slots.size, dtype=bool)
        result &= column.values[slots] == wanted
    return result


# ---------------------------------------------------------------------- storage topology


class _VolumeAffinities:
    """Each volume node affinity's mask over every slot, until a node is written.

    Looked up first by the selector object's identity (the same parsed volume is asked
    about by pod after pod, and hashing a nested selector costs more than the lookup),
    then by value; `by_identity` holds the selector too, so that its id is not reused.
    """

    def __init__(self) -> None:
        self.node_writes = -1
        self.masks: dict[NodeSelector, Mask] = {}
        self.by_identity: dict[int, tuple[NodeSelector, Mask]] = {}


_VOLUME_AFFINITIES: PerCluster[_VolumeAffinities] = PerCluster(_VolumeAffinities)
_MAX_VOLUME_AFFINITIES = 4096


def volume_node_affinity_mask(
    cluster: ClusterState, affinity: NodeSelector | None, slots: NodeSlots
) -> Mask:
    """Per slot: a volume with this `spec.nodeAffinity.required` is reachable from the node.

    Judged as upstream's `CheckNodeAffinity` judges it (labels only; see
    `PersistentVolume.node_affinity_matches`). Many pods ask about the same few volumes
    (local PVs), so each affinity's answer over all slots is kept until a node changes.
    """
    if affinity is None:
        return np.ones(slots.size, dtype=bool)
    memo = _VOLUME_AFFINITIES.of(cluster)
    if (
        memo.node_writes != cluster.node_writes
        or len(memo.masks) >= _MAX_VOLUME_AFFINITIES
        or len(memo.by_identity) >= _MAX_VOLUME_AFFINITIES
    ):
        memo.node_writes = cluster.node_writes
        memo.masks = {}
        memo.by_identity = {}
    known = memo.by_identity.get(id(affinity))
    if known is not None and known[0] is affinity and known[1].size == cluster.live.size:
        every = known[1]
    else:
        found = memo.masks.get(affinity)
        if found is None or found.size != cluster.live.size:
            all_slots = np.arange(cluster.live.size, dtype=np.intp)
            found = memo.masks[affinity] = node_selector_mask(
                cluster, affinity, all_slots, with_fields=False
            )
        every = found
        memo.by_identity[id(affinity)] = (affinity, every)
    picked: Mask = every[slots]
    return picked


def node_label_selector_mask(
    cluster: ClusterState, selector: LabelSelector | None, slots: NodeSlots
) -> Mask:
    """Per slot: the node's labels match a label selector (a CSIStorageCapacity's
    `nodeTopology`); a nil selector matches no node, an empty one every node."""
    if selector is None:
        return np.zeros(slots.size, dtype=bool)
    result = np.ones(slots.size, dtype=bool)
    for requirement in selector.requirements:
        result &= _requirement_mask(cluster, requirement, slots)
    return result


def topology_terms_mask(
    cluster: ClusterState, terms: tuple[TopologySelectorTerm, ...], slots: NodeSlots
) -> Mask:
    """Per slot: the node matches a StorageClass's `allowedTopologies` (no terms: every node)."""
    if not terms:
        return np.ones(slots.size, dtype=bool)
    result = np.zeros(slots.size, dtype=bool)
    for term in terms:
        if not term.valid:
            continue
        matched = np.ones(slots.size, dtype=bool)
        for key, values in term.expressions:
            matched &= _requirement_mask(cluster, Requirement(key, Operator.IN, values), slots)
        result |= matched
    return result


def pod_has_node_requirements(pod: Pod) -> bool:
    """True when `nodeSelector` or required node affinity could reject some node."""
    return bool(pod.node_selector) or pod.required_node_affinity is not None


def pod_matches_node(pod: Pod, node: Node) -> bool:
    """`nodeSelector` AND required node affinity, for one node (the per-row reference)."""
    if any(node.labels.get(key) != value for key, value in pod.node_selector.items()):
        return False
    required = pod.required_node_affinity
    return required is None or required.matches(node.labels, node.name)


def matches_required_node_affinity(cluster: ClusterState, pod: Pod, slots: NodeSlots) -> Mask:
    """Per slot: the node satisfies the pod's `nodeSelector` AND its required node affinity."""
    result = label_selector_mask(cluster, pod.node_selector, slots)
    if pod.required_node_affinity is not None:
        result &= node_selector_mask(cluster, pod.required_node_affinity, slots)
    return result


def preferred_weights(
    cluster: ClusterState, terms: tuple[PreferredNodeTerm, ...], slots: NodeSlots
) -> NDArray[np.int64]:
    """Per node, the summed weight of the preferred terms it matches."""
    total = np.zeros(slots.size, dtype=np.int64)
    for preferred in terms:
        total += np.where(term_mask(cluster, preferred.term, slots), preferred.weight, 0)
    return total


# ---------------------------------------------------------------------- taints


def first_untolerated_taint(taints: TaintSet, tolerations: tuple[Toleration, ...]) -> Taint | None:
    """The first NoSchedule/NoExecute taint that no toleration tolerates."""
    for taint in taints:
        if taint.effect in NO_SCHEDULE_EFFECTS and not tolerates_taint(tolerations, taint):
            return taint
    return None


def untolerated_taint_mask(
    cluster: ClusterState, tolerations: tuple[Toleration, ...], slots: NodeSlots
) -> Mask | None:
    """Per slot: the node has a NoSchedule/NoExecute taint `tolerations` do not tolerate.

    None when no node in the cluster has one (the common case, answered without a
    per-slot array). Nodes sharing the same taints are judged once, and the judgement
    is kept for the next pod with the same tolerations.
    """
    groups = taint_groups(cluster)
    untolerated = groups.per_group(
        ("untolerated", tolerations),
        lambda taints: int(first_untolerated_taint(taints, tolerations) is not None),
    )
    if not untolerated.any:
        return None
    rejected: Mask = (untolerated.values != 0)[groups.of_slot[slots]]
    return rejected
