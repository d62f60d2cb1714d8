"""InterPodAffinity's PreFilter and Filter: required pod affinity, anti-affinity and its symmetry.

PreFilter works out which topology domains hold the pods that matter, once per
pod; Filter then judges every candidate node with a few array gathers. Three
checks run in kube-scheduler's order and a node reports the first it fails:

1. the incoming pod's required affinity (some pod matching *all* its terms in
   the node's domain of every term, or the "first pod" exception);
2. the incoming pod's required anti-affinity (no pod matching a term in the
   node's domain of that term);
3. existing pods' required anti-affinity against the incoming pod (symmetry).

Nodes without a term's topology key never conflict for anti-affinity, and never
satisfy affinity.

All three checks only look at a node's domain of each topology key, so PreFilter
turns them into one table per key giving, per domain, the checks it fails; Filter
gathers those tables and reports the earliest failed check per node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery, TermRole
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod, PodAffinityTerm
from berth.engine.plugins.inter_pod_affinity.domains import (
    Occupancy,
    fold_by_domain,
    pods_matching_all,
    tracked_occupancy,
)

REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)


# A node's failed checks as a bit set; the bits need not follow kube-scheduler's order
# since the tables below decode the set into its first failed check. The symmetry
# check is bit 0 so that the common "existing anti-affinity only" table is a copy.
_EXISTING_ANTI_AFFINITY_BIT, _ANTI_AFFINITY_BIT, _AFFINITY_BIT = 0, 1, 2
_REASONS = (
    REASON_AFFINITY_RULES_NOT_MATCH,
    REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)


def _first_failed(failed: int) -> tuple[int, int]:
    """Code and reason bit (into `_REASONS`) of the first check in the bit set `failed`."""
    if failed >> _AFFINITY_BIT & 1:
        return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 1
    if failed >> _ANTI_AFFINITY_BIT & 1:
        return Code.UNSCHEDULABLE, 2
    if failed >> _EXISTING_ANTI_AFFINITY_BIT & 1:
        return Code.UNSCHEDULABLE, 4
    return 0, 0


_CODE_OF_FAILED = np.array([_first_failed(failed)[0] for failed in range(8)], dtype=np.int8)
_REASON_BITS_OF_FAILED = np.array([_first_failed(failed)[1] for failed in range(8)], np.uint64)


@dataclass(frozen=True, slots=True)
class FailedChecks:
    """Per value id of one topology key, the checks a node in that domain fails (a bit set)."""

    column: NDArray[np.int32]  # value id per slot, MISSING when the node lacks the key
    # One entry per value id plus a trailing one, which nodes without the key read.
    failed: NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class FilterState:
    """What PreFilter learnt about one pod, read back by Filter in the same cycle."""

    # One entry per topology key on which some node can fail; none means every node passes.
    checks: tuple[FailedChecks, ...]
    # Some existing pod's required anti-affinity term matches the pod in some domain.
    existing_anti_affinity: bool


def matches_all_terms(
    terms: tuple[PodAffinityTerm, ...], pod: Pod, namespace_labels: Mapping[str, str]
) -> bool:
    """True when `terms` is non-empty and `pod` matches every one (affinity's "all terms" rule)."""
    return bool(terms) and all(
        term.matches(pod.namespace, pod.labels, namespace_labels) for term in terms
    )


def _affinity_occupancy(cluster: ClusterState, pod: Pod) -> tuple[list[Occupancy], bool]:
    terms = pod.required_affinity
    if not terms:
        return [], False
    per_slot = pods_matching_all(cluster, terms)
    keys = list(dict.fromkeys(term.topology_key for term in terms))
    if per_slot is None:
        nothing = np.zeros_like(cluster.pod_count)
        occupancy = [Occupancy.of(fold_by_domain(cluster, key, nothing)) for key in keys]
    else:
        occupancy = [tracked_occupancy(cluster, key, per_slot) for key in keys]
    nothing_counted = not any(entry.count for entry in occupancy)
    first_pod = nothing_counted and matches_all_terms(
        terms, pod, cluster.namespace_labels(pod.namespace)
    )
    return occupancy, first_pod


def _anti_affinity_occupancy(cluster: ClusterState, pod: Pod) -> list[Occupancy]:
    occupancy = []
    for term in pod.required_anti_affinity:
        clause = PodClause.of_term(term)
        if clause is None:
            continue
        per_slot = cluster.matching_pod_counts(PodQuery((clause,)))
        occupancy.append(tracked_occupancy(cluster, term.topology_key, per_slot))
    return occupancy


def _existing_anti_affinity_occupancy(cluster: ClusterState, pod: Pod) -> list[Occupancy]:
    if cluster.pods_with_required_anti_affinity == 0:
        return []
    namespace_labels = cluster.namespace_labels(pod.namespace)
    per_key: dict[str, Occupancy] = {}
    for term_key, per_slot in cluster.existing_terms().items():
        if term_key.role != TermRole.REQUIRED_ANTI_AFFINITY:
            continue
        term = term_key.term
        if not term.matches(pod.namespace, pod.labels, namespace_labels):
            continue
        entry = tracked_occupancy(cluster, term.topology_key, per_slot)
        merged = per_key.get(term.topology_key)
        per_key[term.topology_key] = entry if merged is None else merged.union(entry)
    return list(per_key.values())


class _FailedChecksByKey:
    def __init__(self) -> None:
        self._by_key: dict[str, FailedChecks] = {}

    def mark(self, occupancy: Occupancy, failing: NDArray[np.bool_], bit: int) -> None:
        # A shift rather than a masked write, which is slow on scattered masks.
        failed: NDArray[np.uint8] = failing.view(np.uint8) << np.uint8(bit)
        entry = self._by_key.get(occupancy.key)
        if entry is None:
            self._by_key[occupancy.key] = FailedChecks(occupancy.column, failed)
        else:
            np.bitwise_or(entry.failed, failed, out=entry.failed)

    def tables(self) -> tuple[FailedChecks, ...]:
        return tuple(self._by_key.values())


def compute_filter_state(cluster: ClusterState, pod: Pod) -> FilterState:
    failed = _FailedChecksByKey()
    affinity, first_pod = _affinity_occupancy(cluster, pod)
    for occupancy in affinity:
        # A node needs the key, and a matching pod in its domain unless it is the first pod.
        satisfied = occupancy.occupied | first_pod
        satisfied[-1] = False  # what nodes without the key read
        failed.mark(occupancy, ~satisfied, _AFFINITY_BIT)
    for occupancy in _anti_affinity_occupancy(cluster, pod):
        if occupancy.count:
            failed.mark(occupancy, occupancy.occupied, _ANTI_AFFINITY_BIT)
    existing = [entry for entry in _existing_anti_affinity_occupancy(cluster, pod) if entry.count]
    for occupancy in existing:
        failed.mark(occupancy, occupancy.occupied, _EXISTING_ANTI_AFFINITY_BIT)
    return FilterState(failed.tables(), existing_anti_affinity=bool(existing))


def filter_can_skip(state: FilterState, pod: Pod) -> bool:
    """kube-scheduler's Skip: no own required terms and no existing term counted against the pod."""
    return not state.existing_anti_affinity and not pod.has_required_affinity_terms


def judge_nodes(state: FilterState, slots: NodeSlots) -> Verdicts:
    if not state.checks:
        return accept_all(len(slots))
    first, *others = state.checks
    failed = first.failed[first.column[slots]]
    for entry in others:
        failed |= entry.failed[entry.column[slots]]
    return Verdicts(_CODE_OF_FAILED[failed], _REASON_BITS_OF_FAILED[failed], _REASONS)
