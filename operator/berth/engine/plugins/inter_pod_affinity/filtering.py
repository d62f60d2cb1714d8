"""InterPodAffinity's PreFilter and Filter: required pod affinity, anti-affinity and its symmetry.

PreFilter folds the pods that matter into totals per topology domain, once per
pod; Filter then judges every candidate node with a few array gathers. Three
checks run in kube-scheduler's order and a node reports the first it fails:

1. the incoming pod's required affinity (some pod matching *all* its terms in
   the node's domain of every term, or the "first pod" exception);
2. the incoming pod's required anti-affinity (no pod matching a term in the
   node's domain of that term);
3. existing pods' required anti-affinity against the incoming pod (symmetry).

Nodes without a term's topology key never conflict for anti-affinity, and never
satisfy affinity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery, TermRole
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts, combine_first_failure
from berth.engine.model.pod import Pod, PodAffinityTerm
from berth.engine.plugins.inter_pod_affinity.domains import (
    DomainTotals,
    fold_by_domain,
    pods_matching_all,
)

REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)


@dataclass(frozen=True, slots=True)
class FilterState:
    """What PreFilter learnt about one pod, read back by Filter in the same cycle."""

    # One entry per distinct topology key of the required affinity terms; totals of
    # pods matching all the terms. Empty when the pod has no required affinity.
    affinity: tuple[DomainTotals, ...]
    # No matching pod on any node carrying one of the keys, and the pod matches its own
    # terms: nodes with every key pass ("first pod" of a self-affine group).
    first_pod_passes: bool
    # One entry per required anti-affinity term with a matching pod somewhere.
    anti_affinity: tuple[DomainTotals, ...]
    # One entry per topology key of existing pods' required anti-affinity terms
    # that match the incoming pod, with how many such terms sit in each domain.
    existing_anti_affinity: tuple[DomainTotals, ...]


def matches_all_terms(
    terms: tuple[PodAffinityTerm, ...], pod: Pod, namespace_labels: Mapping[str, str]
) -> bool:
    """True when `terms` is non-empty and `pod` matches every one (affinity's "all terms" rule)."""
    return bool(terms) and all(
        term.matches(pod.namespace, pod.labels, namespace_labels) for term in terms
    )


def _affinity_totals(cluster: ClusterState, pod: Pod) -> tuple[tuple[DomainTotals, ...], bool]:
    terms = pod.required_affinity
    if not terms:
        return (), False
    per_slot = pods_matching_all(cluster, terms)
    keys = list(dict.fromkeys(term.topology_key for term in terms))
    totals = tuple(fold_by_domain(cluster, key, per_slot) for key in keys)
    nothing_counted = not any(entry.any_domain for entry in totals)
    first_pod = nothing_counted and matches_all_terms(
        terms, pod, cluster.namespace_labels(pod.namespace)
    )
    return totals, first_pod


def _anti_affinity_totals(cluster: ClusterState, pod: Pod) -> tuple[DomainTotals, ...]:
    totals = []
    for term in pod.required_anti_affinity:
        clause = PodClause.of_term(term)
        if clause is None:
            continue
        per_slot = cluster.matching_pod_counts(PodQuery((clause,)))
        entry = fold_by_domain(cluster, term.topology_key, per_slot)
        if entry.any_domain:
            totals.append(entry)
    return tuple(totals)


def _existing_anti_affinity_totals(cluster: ClusterState, pod: Pod) -> tuple[DomainTotals, ...]:
    if cluster.pods_with_required_anti_affinity == 0:
        return ()
    namespace_labels = cluster.namespace_labels(pod.namespace)
    per_key: dict[str, NDArray[np.int64]] = {}
    for term_key, per_slot in cluster.existing_terms().items():
        if term_key.role != TermRole.REQUIRED_ANTI_AFFINITY:
            continue
        term = term_key.term
        if not term.matches(pod.namespace, pod.labels, namespace_labels):
            continue
        summed = per_key.get(term.topology_key)
        per_key[term.topology_key] = per_slot if summed is None else summed + per_slot
    folded = (fold_by_domain(cluster, key, per_slot) for key, per_slot in per_key.items())
    return tuple(entry for entry in folded if entry.any_domain)


def compute_filter_state(cluster: ClusterState, pod: Pod) -> FilterState:
    affinity, first_pod = _affinity_totals(cluster, pod)
    return FilterState(
        affinity=affinity,
        first_pod_passes=first_pod,
        anti_affinity=_anti_affinity_totals(cluster, pod),
        existing_anti_affinity=_existing_anti_affinity_totals(cluster, pod),
    )


def filter_can_skip(state: FilterState, pod: Pod) -> bool:
    """kube-scheduler's Skip: no own required terms and no existing term counted against the pod."""
    return not state.existing_anti_affinity and not pod.has_required_affinity_terms


def _fails_affinity(state: FilterState, slots: NodeSlots) -> NDArray[np.bool_]:
    if not state.affinity:
        return np.zeros(len(slots), dtype=bool)
    every_key = np.ones(len(slots), dtype=bool)
    pods_everywhere = np.ones(len(slots), dtype=bool)
    for totals in state.affinity:
        every_key &= totals.has_key(slots)
        pods_everywhere &= totals.at(slots) > 0
    passes = every_key & (pods_everywhere | state.first_pod_passes)
    return ~passes


def _in_counted_domain(totals: tuple[DomainTotals, ...], slots: NodeSlots) -> NDArray[np.bool_]:
    hit = np.zeros(len(slots), dtype=bool)
    for entry in totals:
        hit |= entry.at(slots) > 0
    return hit


def judge_nodes(state: FilterState, slots: NodeSlots) -> Verdicts:
    return combine_first_failure(
        [
            (
                _fails_affinity(state, slots),
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                REASON_AFFINITY_RULES_NOT_MATCH,
            ),
            (
                _in_counted_domain(state.anti_affinity, slots),
                Code.UNSCHEDULABLE,
                REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
            ),
            (
                _in_counted_domain(state.existing_anti_affinity, slots),
                Code.UNSCHEDULABLE,
                REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
            ),
        ],
        len(slots),
    )
