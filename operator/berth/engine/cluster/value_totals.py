"""Per-slot counts summed per value of a node label, followed from decision to decision.

Affinity and spreading ask how many matching pods each topology domain (one value
of a label) holds. The per-slot counts they sum are arrays the cluster changes in
place as pods come and go (`matching_pod_counts`, `existing_terms`), so a sum is
folded over the node table once and then patched from the few slots whose count
moved since. Node writes (labels may have changed) or many changes at once cost a
fresh fold.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster.per_cluster import PerCluster
from berth.engine.cluster.state import MISSING, ClusterState

Counts = NDArray[np.int64]
Mask = NDArray[np.bool_]


@dataclass(slots=True)
class ValueTotals:
    """Per value id of one label: the summed counts over the counted nodes.

    Every array has one extra, last entry for what a node without the label
    (value id MISSING, -1) reads: total 0, not occupied, no domain. The arrays are
    patched in place by later calls: read them before the cluster changes.
    """

    per_value: Counts
    occupied: Mask  # per_value > 0
    occupied_count: int
    domains: Mask  # the value of at least one counted node
    domain_count: int


@dataclass(slots=True)
class _Followed:
    source: Counts  # held, so that its id cannot be reused while cached
    node_writes: int
    values: NDArray[np.int32]  # value id per counted slot, MISSING elsewhere
    seen: Counts
    totals: ValueTotals


def sum_per_value(values: NDArray[np.int32], per_slot: Counts, size: int) -> Counts:
    """`per_slot` summed per value id in `values` (`size` ids), plus a trailing 0 for MISSING."""
    # Shift ids by one so that MISSING lands in bucket 0, which is then dropped.
    sums = np.bincount(values + 1, weights=per_slot, minlength=size + 1)
    per_value = np.zeros(size + 1, dtype=np.int64)
    per_value[:size] = np.rint(sums[1 : size + 1])
    return per_value


def fold(values: NDArray[np.int32], per_slot: Counts, size: int) -> ValueTotals:
    """`sum_per_value`, with which values are occupied and which have a node at all."""
    per_value = sum_per_value(values, per_slot, size)
    domains = np.zeros(size + 1, dtype=bool)
    domains[:size] = np.bincount(values + 1, minlength=size + 1)[1 : size + 1] > 0
    occupied = per_value > 0
    return ValueTotals(
        per_value,
        occupied,
        int(np.count_nonzero(occupied)),
        domains,
        int(np.count_nonzero(domains)),
    )


class TotalsFollower:
    """The followed folds of one cluster."""

    _MAX_ENTRIES = 256
    # Beyond this many changed slots one fold is cheaper than patching slot by slot.
    _MAX_PATCHED = 64

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Hashable, int], _Followed] = {}

    def totals(
        self,
        cluster: ClusterState,
        key: str,
        per_slot: Counts,
        counted: Callable[[], Mask] | None,
        counted_as: Hashable,
    ) -> ValueTotals:
        cache_key = (key, counted_as, id(per_slot))
        entry = self._entries.get(cache_key)
        if (
            entry is not None
            and entry.source is per_slot
            and entry.node_writes == cluster.node_writes
        ):
            changed = (per_slot != entry.seen).nonzero()[0]
            if changed.size <= self._MAX_PATCHED:
                if changed.size:
                    self._patch(entry, changed.tolist())
                return entry.totals
        if len(self._entries) >= self._MAX_ENTRIES:
            self._entries.clear()
        column = cluster.label_column(key)
        values = column.values
        if counted is not None:
            values = np.where(counted(), values, np.int32(MISSING))
        totals = fold(values, per_slot, len(column.vocabulary))
        self._entries[cache_key] = _Followed(
            per_slot, cluster.node_writes, values, per_slot.copy(), totals
        )
        return totals

    @staticmethod
    def _patch(entry: _Followed, changed: list[int]) -> None:
        # Scalar steps: for a handful of slots they beat array operations by far.
        source, seen, values, totals = entry.source, entry.seen, entry.values, entry.totals
        per_value, occupied = totals.per_value, totals.occupied
        for slot in changed:
            now = int(source[slot])
            delta = now - int(seen[slot])
            seen[slot] = now
            value = int(values[slot])
            if value == MISSING:
                continue
            total = int(per_value[value]) + delta
            per_value[value] = total
            if bool(occupied[value]) != (total > 0):
                occupied[value] = total > 0
                totals.occupied_count += 1 if total > 0 else -1


_FOLLOWERS = PerCluster(TotalsFollower)


def followed_totals(
    cluster: ClusterState,
    key: str,
    per_slot: Counts,
    *,
    counted: Callable[[], Mask] | None = None,
    counted_as: Hashable = None,
) -> ValueTotals:
    """`per_slot` summed per value of label `key`, for an array the cluster maintains.

    Only slots in `counted()` count (default: every node carrying the key);
    `counted_as` must name what that mask depends on besides the nodes' labels.
    """
    return _FOLLOWERS.of(cluster).totals(cluster, key, per_slot, counted, counted_as)
