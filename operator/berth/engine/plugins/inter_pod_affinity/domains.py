"""Per-slot pod counts folded into per-topology-domain totals, the shape every affinity check reads.

A topology domain is one value of a topology key. Counting per domain is one
`np.bincount` over the node table; looking a node's domain up is one gather.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.model.pod import PodAffinityTerm


@dataclass(frozen=True, slots=True)
class DomainTotals:
    """Totals per value of `key`: a node's domain total is `per_value[column[slot]]`."""

    key: str
    column: NDArray[np.int32]  # value id per slot, negative when the node lacks the key
    per_value: NDArray[np.int64]

    def has_key(self, slots: NodeSlots) -> NDArray[np.bool_]:
        return self.column[slots] >= 0

    def at(self, slots: NodeSlots) -> NDArray[np.int64]:
        """The total of each slot's domain; 0 for nodes without the key."""
        ids = self.column[slots]
        present = ids >= 0
        totals = np.zeros(len(slots), dtype=np.int64)
        totals[present] = self.per_value[ids[present]]
        return totals


def fold_by_domain(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> DomainTotals:
    """Sum `per_slot` over the nodes sharing each value of `key` (nodes without it count nowhere)."""
    column = cluster.label_column(key)
    values = column.values
    present = values >= 0
    sums = np.bincount(values[present], weights=per_slot[present], minlength=len(column.vocabulary))
    return DomainTotals(key, values, np.rint(sums).astype(np.int64))


def on_keyed_nodes(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> bool:
    """True when some node carrying label `key` has a non-zero entry in `per_slot`."""
    present = cluster.label_column(key).values >= 0
    return bool(per_slot[present].any())


def pods_matching_all(
    cluster: ClusterState, terms: tuple[PodAffinityTerm, ...]
) -> NDArray[np.int64]:
    """Pods per slot matching every term (a nil selector in any term matches no pod)."""
    clauses: list[PodClause] = []
    for term in terms:
        clause = PodClause.of_term(term)
        if clause is None:
            return np.zeros_like(cluster.pod_count)
        clauses.append(clause)
    return cluster.matching_pod_counts(PodQuery(tuple(clauses)))
