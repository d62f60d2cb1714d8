"""Indexes derived from a ClusterState, kept beside it for exactly as long as it lives.

Plugins keep incremental indexes (taint groups, image holders, per-value totals)
that belong to one cluster. Holding them weakly keyed by the cluster lets the
cluster stay ignorant of who derives what from it, and lets tests and the
simulator build many short-lived clusters without the indexes outliving them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from berth.engine.cluster.state import ClusterState

T = TypeVar("T")


class PerCluster(Generic[T]):
    """One `factory()`-made object per cluster, made on first use."""

    __slots__ = ("_factory", "_made")

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._made: weakref.WeakKeyDictionary[ClusterState, T] = weakref.WeakKeyDictionary()

    def of(self, cluster: ClusterState) -> T:
        made = self._made.get(cluster)
        if made is None:
            made = self._made[cluster] = self._factory()
        return made
