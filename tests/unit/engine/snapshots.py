"""Byte-exact snapshots of a ClusterState, for tests that check something leaves it untouched."""

from __future__ import annotations

import pickle

from berth.engine.cluster import ClusterState


def cluster_bytes(cluster: ClusterState) -> bytes:
    """The cluster pickled, its resource-state interning reduced to the per-slot ids.

    The interning (and the answers memoised per state) is a cache that only ever
    grows: a dry run may add states, but every slot must be back in its old one.
    """
    attributes = dict(vars(cluster))
    attributes["resource_states"] = cluster.resource_states.of_slot
    return pickle.dumps(attributes)
