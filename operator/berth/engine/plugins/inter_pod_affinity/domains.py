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
from berth.engine.cluster.state import MISSING
from berth.engine.model.pod import PodAffinityTerm


@dataclass(frozen=True, slots=True)
class DomainTotals:
    """Totals per value of `key`: a node's domain total is `per_value[column[slot]]`.

    `per_value` has one extra, last entry that is always 0: a node without the key
    has value id `MISSING` (-1), which numpy reads as that last entry.
    """

    key: str
    column: NDArray[np.int32]  # value id per slot, MISSING when the node lacks the key
    per_value: NDArray[np.int64]

    def has_key(self, slots: NodeSlots) -> NDArray[np.bool_]:
        present: NDArray[np.bool_] = self.column[slots] != MISSING
        return present

    def at(self, slots: NodeSlots) -> NDArray[np.int64]:
        """The total of each slot's domain; 0 for nodes without the key."""
        totals: NDArray[np.int64] = self.per_value[self.column[slots]]
        return totals

    @property
    def any_domain(self) -> bool:
        """True when some domain has a non-zero total."""
        return bool(self.per_value.any())


def fold_by_domain(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> DomainTotals:
    """Sum `per_slot` over the nodes sharing each value of `key` (nodes without it count nowhere)."""
    column = cluster.label_column(key)
    width = len(column.vocabulary)
    # Shift ids by one so that MISSING lands in bucket 0, which is then dropped.
    sums = np.bincount(column.values + 1, weights=per_slot, minlength=width + 1)
    per_value = np.zeros(width + 1, dtype=np.int64)
    per_value[:width] = np.rint(sums[1 : width + 1])
    return DomainTotals(key, column.values, per_value)


def on_keyed_nodes(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> bool:
    """True when some node carrying label `key` has a non-zero entry in `per_slot`."""
    present = cluster.label_column(key).values != MISSING
    return bool(np.logical_and(per_slot, present).any())


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
