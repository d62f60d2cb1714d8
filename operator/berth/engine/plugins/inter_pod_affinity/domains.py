"""Per-slot pod counts folded into per-topology-domain totals, the shape every affinity check reads.

A topology domain is one value of a topology key. Counting per domain is one
`np.bincount` over the node table; looking a node's domain up is one gather.
The filter only asks which domains hold a counted pod at all (`Occupancy`); for
counts the cluster keeps up to date that answer is folded once and then followed,
each decision patching just the few slots whose count moved since.
"""

from __future__ import annotations

import weakref
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


def fold_by_domain(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> DomainTotals:
    """Sum `per_slot` over the nodes sharing each value of `key` (nodes without it count nowhere)."""
    column = cluster.label_column(key)
    width = len(column.vocabulary)
    # Shift ids by one so that MISSING lands in bucket 0, which is then dropped.
    sums = np.bincount(column.values + 1, weights=per_slot, minlength=width + 1)
    per_value = np.zeros(width + 1, dtype=np.int64)
    per_value[:width] = np.rint(sums[1 : width + 1])
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


@dataclass(slots=True)
class _Followed:
    """One tracked per-slot array folded over one key, and the slot counts that fold saw."""

    source: NDArray[np.int64]  # held, so that its id cannot be reused while cached
    node_writes: int
    seen: NDArray[np.int64]
    per_value: NDArray[np.int64]
    occupancy: Occupancy


class _FollowedFolds:
    """Occupancy of the cluster's own count arrays, kept current from the slots that changed."""

    _MAX_ENTRIES = 256
    # Beyond this many changed slots one fold is cheaper than patching slot by slot.
    _MAX_PATCHED = 64

    def __init__(self) -> None:
        self._entries: dict[tuple[str, int], _Followed] = {}

    def occupancy(self, cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> Occupancy:
        entry = self._entries.get((key, id(per_slot)))
        column = cluster.label_column(key).values
        if (
            entry is not None
            and entry.source is per_slot
            and entry.node_writes == cluster.node_writes
            and entry.occupancy.column is column
        ):
            changed = (per_slot != entry.seen).nonzero()[0]
            if changed.size <= self._MAX_PATCHED:
                if changed.size:
                    entry.occupancy = self._patch(entry, column, changed.tolist())
                return entry.occupancy
        if len(self._entries) >= self._MAX_ENTRIES:
            self._entries.clear()
        totals = fold_by_domain(cluster, key, per_slot)
        occupancy = Occupancy.of(totals)
        self._entries[(key, id(per_slot))] = _Followed(
            per_slot, cluster.node_writes, per_slot.copy(), totals.per_value, occupancy
        )
        return occupancy

    @staticmethod
    def _patch(entry: _Followed, column: NDArray[np.int32], changed: list[int]) -> Occupancy:
        # Scalar steps: for a handful of slots they beat array operations by far.
        source, seen, per_value = entry.source, entry.seen, entry.per_value
        occupied = entry.occupancy.occupied
        count = entry.occupancy.count
        for slot in changed:
            now = int(source[slot])
            delta = now - int(seen[slot])
            seen[slot] = now
            value = int(column[slot])
            if value == MISSING:
                continue
            total = int(per_value[value]) + delta
            per_value[value] = total
            if bool(occupied[value]) != (total > 0):
                occupied[value] = total > 0
                count += 1 if total > 0 else -1
        return Occupancy(entry.occupancy.key, column, occupied, count)


_FOLLOWED: weakref.WeakKeyDictionary[ClusterState, _FollowedFolds] = weakref.WeakKeyDictionary()


def tracked_occupancy(cluster: ClusterState, key: str, per_slot: NDArray[np.int64]) -> Occupancy:
    """Occupied domains for an array the cluster maintains (`matching_pod_counts`, `existing_terms`).

    Such an array changes in place as pods come and go, so the previous fold is
    brought up to date from the slots that differ instead of being redone. The
    result's `occupied` is updated in place by later calls: read it before the
    cluster changes.
    """
    folds = _FOLLOWED.get(cluster)
    if folds is None:
        folds = _FOLLOWED[cluster] = _FollowedFolds()
    return folds.occupancy(cluster, key, per_slot)


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
