"""A min-heap addressable by key (pod UID): push, remove and update in O(log n).

Removal is lazy: a removed entry stays in the list, marked dead, until it reaches the top or the
dead outnumber the living and the list is rebuilt.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class _Entry(Generic[V]):
    __slots__ = ("alive", "order", "uid", "value")

    def __init__(self, order: tuple[Any, ...], uid: str, value: V) -> None:
        self.order = order
        self.uid = uid
        self.value = value
        self.alive = True

    def __lt__(self, other: _Entry[V]) -> bool:
        return self.order < other.order


class KeyedHeap(Generic[V]):
    def __init__(self) -> None:
        self._heap: list[_Entry[V]] = []
        self._live: dict[str, _Entry[V]] = {}
        self._ties = itertools.count()

    def push(self, uid: str, order: tuple[Any, ...], value: V) -> None:
        """Add `value` under `uid`, replacing any earlier entry; smaller `order` pops first."""
        self.remove(uid)
        # The counter keeps equal orders first-in first-out and never compares values.
        entry = _Entry((*order, next(self._ties)), uid, value)
        self._live[uid] = entry
        heapq.heappush(self._heap, entry)

    def remove(self, uid: str) -> V | None:
        entry = self._live.pop(uid, None)
        if entry is None:
            return None
        entry.alive = False
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._live):
            self._heap = [e for e in self._heap if e.alive]
            heapq.heapify(self._heap)
        return entry.value

    def peek(self) -> V | None:
        self._drop_dead_top()
        return self._heap[0].value if self._heap else None

    def pop(self) -> V | None:
        self._drop_dead_top()
        if not self._heap:
            return None
        entry = heapq.heappop(self._heap)
        del self._live[entry.uid]
        return entry.value

    def get(self, uid: str) -> V | None:
        entry = self._live.get(uid)
        return entry.value if entry is not None else None

    def clear(self) -> None:
        self._heap.clear()
        self._live.clear()

    def values(self) -> Iterator[V]:
        return (entry.value for entry in self._live.values())

    def __contains__(self, uid: object) -> bool:
        return uid in self._live

    def __len__(self) -> int:
        return len(self._live)

    def _drop_dead_top(self) -> None:
        while self._heap and not self._heap[0].alive:
            heapq.heappop(self._heap)
