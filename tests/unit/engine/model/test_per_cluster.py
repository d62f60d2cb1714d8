"""Derived per-cluster indexes: one per cluster, gone with it."""

from __future__ import annotations

import gc
import weakref

from berth.engine.cluster import ClusterState
from berth.engine.cluster.per_cluster import PerCluster


class _Index:
    pass


def test_one_object_per_cluster_made_on_first_use() -> None:
    made: list[_Index] = []

    def factory() -> _Index:
        made.append(_Index())
        return made[-1]

    indexes = PerCluster(factory)
    first, second = ClusterState(), ClusterState()
    assert made == []
    assert indexes.of(first) is indexes.of(first)
    assert indexes.of(second) is not indexes.of(first)
    assert len(made) == 2


def test_the_index_does_not_outlive_its_cluster() -> None:
    indexes = PerCluster(_Index)
    cluster = ClusterState()
    index = weakref.ref(indexes.of(cluster))
    del cluster
    gc.collect()
    assert index() is None
