"""Nodes whose resource rows are identical share a state id, so per-node answers that depend
only on those rows (and on the pod) are worked out once per state, not once per node.

A fleet of identical machines running replicas of the same workloads has few distinct
states (empty, one replica, two...), and a state, once seen, keeps its answers across
decisions. ClusterState assigns the ids as it changes a node's rows; readers memoise
per state with `StateMemo`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
from numpy.typing import NDArray

_MAX_MEMOS = 64


class StateMemo:
    """One int64 answer per resource state, filled in on first use."""

    def __init__(self, size: int) -> None:
        self.values = np.zeros(size, dtype=np.int64)
        self.known = np.zeros(size, dtype=bool)

    def ensure(self, size: int) -> None:
        if self.known.size < size:
            grown = max(size, 2 * self.known.size)
            values = np.zeros(grown, dtype=np.int64)
            values[: self.values.size] = self.values
            known = np.zeros(grown, dtype=bool)
            known[: self.known.size] = self.known
            self.values, self.known = values, known


class ResourceStates:
    """State id per slot; ids are interned from the bytes of the slot's resource rows."""

    def __init__(self, capacity: int) -> None:
        self.of_slot: NDArray[np.intp] = np.zeros(capacity, dtype=np.intp)
        self._ids: dict[bytes, int] = {}
        self._memos: dict[Hashable, StateMemo] = {}

    @property
    def count(self) -> int:
        return len(self._ids)

    def assign(self, slot: int, rows: bytes) -> None:
        state = self._ids.get(rows)
        if state is None:
            state = self._ids[rows] = len(self._ids)
        self.of_slot[slot] = state

    def needs_reset(self) -> bool:
        """States no node is in any more have piled up (every change can mint one)."""
        return len(self._ids) > 4 * self.of_slot.size + 1024

    def reset(self) -> None:
        """Forget every id (and every memo keyed by them); the owner re-assigns all slots."""
        self._ids = {}
        self._memos = {}

    def grow(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=np.intp)
        grown[: self.of_slot.size] = self.of_slot
        self.of_slot = grown

    def per_state(
        self,
        slots: NDArray[np.intp],
        key: Hashable,
        compute: Callable[[NDArray[np.intp]], NDArray[np.int64]],
    ) -> NDArray[np.int64]:
        """`compute(slots)`, calling it only for one slot of each state not yet answered under `key`.

        `key` must name everything the answer depends on besides the resource rows
        (the plugin, its configuration, the pod's requests).
        """
        states = self.of_slot.take(slots)
        memo = self._memos.get(key)
        if memo is None:
            if len(self._memos) >= _MAX_MEMOS:
                self._memos.clear()
            memo = self._memos[key] = StateMemo(len(self._ids))
        memo.ensure(len(self._ids))
        known = memo.known.take(states)
        if not known.all():
            positions = (~known).nonzero()[0]
            todo, first = np.unique(states.take(positions), return_index=True)
            memo.values[todo] = compute(slots.take(positions.take(first)))
            memo.known[todo] = True
        answers: NDArray[np.int64] = memo.values.take(states)
        return answers
