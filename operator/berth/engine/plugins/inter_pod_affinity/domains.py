"""Per-slot pod counts folded into per-topology-domain totals, the shape every affinity check reads.

A topology domain is one value of a topology key. Counting per domain is one
`np.bincount` over the node table; looking a node's domain up is one gather.
The filter only asks which domains hold a counted pod at all (`Occupancy`); for
counts the cluster keeps up to date that answer is folded once and then followed,
each decision patching just the few slots whose count moved since.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.cluster.state import MISSING
from berth.engine.cluster.value_totals import followed_totals, sum_per_value
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


def fold_by_domain(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> DomainTotals:
    """Sum `per_slot` over the nodes sharing each value of `key` (nodes without it count nowhere)."""
    column = cluster.label_column(key)
    per_value = sum_per_value(column.values, per_slot, len(column.vocabulary))
    return DomainTotals(key, column.values, per_value)


@dataclass(frozen=True, slots=True)
class Occupancy:
    """Which values of `key` have a non-zero total: the domains holding a counted pod."""

    key: str
    column: NDArray[np.int32]  # value id per slot, MISSING when the node lacks the key
    # Per value id, plus a trailing False that nodes without the key (MISSING) read.
    occupied: NDArray[np.bool_]
    count: int  # how many domains are occupied

    @classmethod
    def of(cls, totals: DomainTotals) -> Occupancy:
        occupied = totals.per_value > 0
        return cls(totals.key, totals.column, occupied, int(np.count_nonzero(occupied)))

    def union(self, other: Occupancy) -> Occupancy:
        """Domains occupied in either (same key and column)."""
        occupied = self.occupied | other.occupied
        return Occupancy(self.key, self.column, occupied, int(np.count_nonzero(occupied)))


def tracked_occupancy(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> Occupancy:
    """Occupied domains for an array the cluster maintains (`matching_pod_counts`, `existing_terms`).

    Followed across decisions (`berth.engine.cluster.value_totals`): the result's
    `occupied` is updated in place by later calls, so read it before the cluster changes.
    """
    totals = followed_totals(cluster, key, per_slot)
    column = cluster.label_column(key).values
    return Occupancy(key, column, totals.occupied, totals.occupied_count)


def on_keyed_nodes(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> bool:
    """True when some node carrying label `key` has a non-zero entry in `per_slot`."""
    present = cluster.label_column(key).values != MISSING
    return bool(np.logical_and(per_slot, present).any())


def pods_matching_all(
    cluster: ClusterState, terms: tuple[PodAffinityTerm, ...]
) -> NDArray[np.int64] | None:
    """Pods per slot matching every term (the cluster's tracked array); None when a nil selector
    in some term makes it match no pod."""
    clauses: list[PodClause] = []
    for term in terms:
        clause = PodClause.of_term(term)
        if clause is None:
            return None
        clauses.append(clause)
    return cluster.matching_pod_counts(PodQuery(tuple(clauses)))
