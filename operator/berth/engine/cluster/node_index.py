"""Per-node facts derived from `Node` objects, refreshed only for the slots whose node changed.

`ClusterState.node_versions` moves whenever a slot's node is written or removed;
an index here remembers the versions it last saw and re-derives just those
slots, so a decision over thousands of nodes never walks the Node objects.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster.per_cluster import PerCluster
from berth.engine.cluster.state import ClusterState, NodeSlots
from berth.engine.model.node import Taint

__all__ = ["GroupAnswers", "SlotChanges", "TaintGroups", "taint_groups"]

TaintSet = tuple[Taint, ...]
_NO_SLOTS: NodeSlots = np.zeros(0, dtype=np.intp)
_MAX_MEMOS = 1024


class SlotChanges:
    """Which slots' nodes were written or removed since the last call."""

    def __init__(self) -> None:
        self._seen = np.zeros(0, dtype=np.int64)
        self._writes_seen = -1

    def since_last(self, cluster: ClusterState) -> NodeSlots:
        versions = cluster.node_versions
        if cluster.node_writes == self._writes_seen and versions.size == self._seen.size:
            return _NO_SLOTS
        self._writes_seen = cluster.node_writes
        if self._seen.size != versions.size:
            seen = np.zeros(versions.size, dtype=np.int64)
            kept = min(seen.size, self._seen.size)
            seen[:kept] = self._seen[:kept]
            self._seen = seen
        changed = np.flatnonzero(versions != self._seen).astype(np.intp)
        self._seen[changed] = versions[changed]
        return changed

    def forget(self) -> None:
        """Report every slot as changed next time."""
        self._seen = np.zeros(0, dtype=np.int64)
        self._writes_seen = -1


@dataclass(frozen=True, slots=True)
class GroupAnswers:
    """One answer per taint group, and whether any of them is non-zero."""

    values: NDArray[np.int64]
    any: bool  # false: every node answers 0, no per-slot lookup needed


class TaintGroups:
    """Every slot's taint list as a small integer; nodes with identical taints share one group.

    Many nodes carry the same few taint sets (none, control-plane, a GPU pool...), so a
    plugin judges each distinct set once (`per_group`) and indexes the answer by slot.
    Group 0 is "no taints" (also used for empty slots).
    """

    def __init__(self) -> None:
        self._changes = SlotChanges()
        self.of_slot = np.zeros(0, dtype=np.intp)
        self.taint_sets: list[TaintSet] = [()]
        self._ids: dict[TaintSet, int] = {(): 0}
        self._memos: dict[Hashable, GroupAnswers] = {}

    def refresh(self, cluster: ClusterState) -> NDArray[np.intp]:
        """Bring the slot -> group array up to date with `cluster`; returns it."""
        if len(self.taint_sets) > 2 * cluster.node_count + 64:
            self._reset()  # taint sets no node uses any more have piled up
        changed = self._changes.since_last(cluster)
        if self.of_slot.size != cluster.node_versions.size:
            grown = np.zeros(cluster.node_versions.size, dtype=np.intp)
            kept = min(grown.size, self.of_slot.size)
            grown[:kept] = self.of_slot[:kept]
            self.of_slot = grown
        live = cluster.live
        for slot in changed.tolist():
            taints = cluster.node_at(slot).taints if live[slot] else ()
            self.of_slot[slot] = self._intern(taints)
        return self.of_slot

    def per_group(self, key: Hashable, judge: Callable[[TaintSet], int]) -> GroupAnswers:
        """`judge` applied to every taint set, memoised under `key` (which must name everything
        `judge` depends on, e.g. the pod's tolerations)."""
        memo = self._memos.get(key)
        known = 0 if memo is None else memo.values.size
        if memo is not None and known == len(self.taint_sets):
            return memo
        fresh = np.fromiter(
            (judge(taints) for taints in self.taint_sets[known:]),
            dtype=np.int64,
            count=len(self.taint_sets) - known,
        )
        values = fresh if memo is None else np.concatenate([memo.values, fresh])
        memo = GroupAnswers(values, bool(values.any()))
        if len(self._memos) >= _MAX_MEMOS:
            self._memos.clear()
        self._memos[key] = memo
        return memo

    def _intern(self, taints: TaintSet) -> int:
        group = self._ids.get(taints)
        if group is None:
            group = len(self.taint_sets)
            self._ids[taints] = group
            self.taint_sets.append(taints)
        return group

    def _reset(self) -> None:
        self.taint_sets = [()]
        self._ids = {(): 0}
        self._memos.clear()
        self._changes.forget()
        self.of_slot = np.zeros(0, dtype=np.intp)


_TAINT_GROUPS = PerCluster(TaintGroups)


def taint_groups(cluster: ClusterState) -> TaintGroups:
    """The (shared, refreshed) taint groups of `cluster`."""
    groups = _TAINT_GROUPS.of(cluster)
    groups.refresh(cluster)
    return groups
