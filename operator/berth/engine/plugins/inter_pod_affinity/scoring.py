"""InterPodAffinity's PreScore, Score and NormalizeScore: points per topology domain.

Every (term, existing pod) match puts points on the domain of the existing pod's
node: the incoming pod's preferred affinity (+weight) and anti-affinity (-weight)
matched by existing pods, and existing pods' required affinity
(+hardPodAffinityWeight), preferred affinity (+weight) and preferred
anti-affinity (-weight) matched by the incoming pod. A node's raw score is the
sum of the points of its domains; normalisation is min-max over the scored nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery, TermRole
from berth.engine.framework.interfaces import MAX_NODE_SCORE, Scores
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity.domains import (
    DomainTotals,
    fold_by_domain,
    on_keyed_nodes,
)


@dataclass(frozen=True, slots=True)
class ScoreState:
    """Points per domain, one entry per topology key that received any."""

    points: tuple[DomainTotals, ...]


@dataclass(slots=True)
class _PointsByKey:
    """Per-slot points per topology key, and per-slot match counts to tell "no match" from "sums to 0"."""

    points: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    matches: dict[str, NDArray[np.int64]] = field(default_factory=dict)

    def add(self, key: str, per_slot: NDArray[np.int64], weight: int) -> None:
        if key in self.points:
            self.points[key] = self.points[key] + weight * per_slot
            self.matches[key] = self.matches[key] + per_slot
        else:
            self.points[key] = weight * per_slot
            self.matches[key] = per_slot


_EXISTING_TERM_SIGNS = {
    TermRole.PREFERRED_AFFINITY: 1,
    TermRole.PREFERRED_ANTI_AFFINITY: -1,
}


def has_preferred_terms(pod: Pod) -> bool:
    return bool(pod.preferred_affinity or pod.preferred_anti_affinity)


def compute_score_state(
    cluster: ClusterState, pod: Pod, *, hard_pod_affinity_weight: int
) -> ScoreState:
    """The domains' points; `ScoreState.points` is empty when no term matched anywhere (Skip)."""
    collected = _PointsByKey()
    for weighted_terms, sign in ((pod.preferred_affinity, 1), (pod.preferred_anti_affinity, -1)):
        for weighted in weighted_terms:
            clause = PodClause.of_term(weighted.term)
            if clause is None:
                continue
            per_slot = cluster.matching_pod_counts(PodQuery((clause,)))
            collected.add(weighted.term.topology_key, per_slot, sign * weighted.weight)

    namespace_labels = cluster.namespace_labels(pod.namespace)
    for term_key, per_slot in cluster.existing_terms().items():
        if term_key.role == TermRole.REQUIRED_AFFINITY:
            if hard_pod_affinity_weight <= 0:
                continue
            weight = hard_pod_affinity_weight
        elif term_key.role in _EXISTING_TERM_SIGNS:
            weight = _EXISTING_TERM_SIGNS[term_key.role] * term_key.weight
        else:
            continue
        term = term_key.term
        if term.matches(pod.namespace, pod.labels, namespace_labels):
            collected.add(term.topology_key, per_slot, weight)

    return ScoreState(
        tuple(
            fold_by_domain(cluster, key, per_slot)
            for key, per_slot in collected.points.items()
            if on_keyed_nodes(cluster, key, collected.matches[key])
        )
    )


def raw_scores(state: ScoreState, slots: NodeSlots) -> Scores:
    scores = np.zeros(len(slots), dtype=np.int64)
    for totals in state.points:
        scores += totals.at(slots)
    return scores


def normalize_min_max(scores: Scores) -> Scores:
    """`int(100 * (s - min) / (max - min))` in float64 as kube-scheduler does; all 0 when flat."""
    if scores.size == 0:
        return scores
    lowest = int(scores.min())
    spread = int(scores.max()) - lowest
    if spread <= 0:
        return np.zeros_like(scores)
    fractions = (scores - lowest).astype(np.float64) / np.float64(spread)
    return (np.float64(MAX_NODE_SCORE) * fractions).astype(np.int64)
