"""Matching pods per topology value over the nodes that count, followed from decision to decision.

A hard constraint needs, per value of its topology key, how many matching pods
sit on the nodes that count and which values have such a node at all. The pods
per slot are the cluster's own arrays, changed in place as pods come and go, so
when the nodes that count are simply those carrying every constraint's key the
per-value totals are folded once and then patched from the slots whose count
moved since; only node writes (or many changes at once) cost a fresh fold.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState
from berth.engine.cluster.state import MISSING
from berth.engine.model.pod import TopologySpreadConstraint
from berth.engine.plugins.pod_topology_spread.counting import Counts, Mask, has_all_keys


@dataclass(frozen=True, slots=True)
class ValueCounts:
    """Per value id of one topology key: matching pods on counted nodes, and which have one."""

    per_value: Counts
    domains: Mask  # the value of at least one counted node
    domain_count: int


def count_values(cluster: ClusterState, key: str, pods: Counts, counted: Mask) -> ValueCounts:
    """`pods` summed per value of `key` over the `counted` slots (which all carry the key)."""
    column = cluster.label_column(key)
    size = len(column.vocabulary)
    value_ids = column.values[counted]
    per_value = np.bincount(value_ids, weights=pods[counted], minlength=size).astype(np.int64)
    domains = np.bincount(value_ids, minlength=size) > 0
    return ValueCounts(per_value, domains, int(np.count_nonzero(domains)))


@dataclass(slots=True)
class _Followed:
    source: Counts  # held, so that its id cannot be reused while cached
    node_writes: int
    values: NDArray[np.int32]  # value id per counted slot, MISSING elsewhere
    seen: Counts
    counts: ValueCounts


class _FollowedCounts:
    _MAX_ENTRIES = 256
    # Beyond this many changed slots one fold is cheaper than patching slot by slot.
    _MAX_PATCHED = 64

    def __init__(self) -> None:
        self._entries: dict[tuple[str, frozenset[str], int], _Followed] = {}

    def value_counts(
        self,
        cluster: ClusterState,
        constraint: TopologySpreadConstraint,
        constraints: Sequence[TopologySpreadConstraint],
        pods: Counts,
    ) -> ValueCounts:
        key = constraint.topology_key
        cache_key = (key, frozenset(c.topology_key for c in constraints), id(pods))
        entry = self._entries.get(cache_key)
        if entry is not None and entry.source is pods and entry.node_writes == cluster.node_writes:
            changed = (pods != entry.seen).nonzero()[0]
            if changed.size <= self._MAX_PATCHED:
                self._patch(entry, changed.tolist())
                return entry.counts
        if len(self._entries) >= self._MAX_ENTRIES:
            self._entries.clear()
        counted = has_all_keys(cluster, constraints)
        values = np.where(counted, cluster.label_column(key).values, np.int32(MISSING))
        counts = count_values(cluster, key, pods, counted)
        self._entries[cache_key] = _Followed(pods, cluster.node_writes, values, pods.copy(), counts)
        return counts

    @staticmethod
    def _patch(entry: _Followed, changed: list[int]) -> None:
        # Scalar steps: for a handful of slots they beat array operations by far.
        source, seen, values = entry.source, entry.seen, entry.values
        per_value = entry.counts.per_value
        for slot in changed:
            now = int(source[slot])
            value = int(values[slot])
            if value != MISSING:
                per_value[value] += now - int(seen[slot])
            seen[slot] = now


_FOLLOWED: weakref.WeakKeyDictionary[ClusterState, _FollowedCounts] = weakref.WeakKeyDictionary()


def followed_value_counts(
    cluster: ClusterState,
    constraint: TopologySpreadConstraint,
    constraints: Sequence[TopologySpreadConstraint],
    pods: Counts,
) -> ValueCounts:
    """`count_values` over the nodes carrying every key of `constraints`, for a tracked `pods`.

    `pods` must be an array the cluster maintains (`matching_pod_counts`). The
    result's `per_value` is updated in place by later calls: read it before the
    cluster changes.
    """
    followed = _FOLLOWED.get(cluster)
    if followed is None:
        followed = _FOLLOWED[cluster] = _FollowedCounts()
    return followed.value_counts(cluster, constraint, constraints, pods)
