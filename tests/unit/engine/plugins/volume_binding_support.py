"""A cycle over zoned nodes holding storage objects, for the VolumeBinding tests."""

from __future__ import annotations

from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.cluster.storage import StorageObject
from berth.engine.framework.cycle_state import CycleState
from berth.engine.model.node import Node
from tests.builders import make_node

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
DRIVER = "csi.example.com"


def zoned_node(name: str, zone: str) -> dict[str, Any]:
    return make_node(name).label(ZONE, zone).label(HOSTNAME, name).obj()


def cluster_with(nodes: list[dict[str, Any]], objects: list[Any]) -> ClusterState:
    """`nodes` (raw) and `objects` (builders or parsed storage objects) in one cluster."""
    cluster = ClusterState(capacity=4)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    for item in objects:
        parsed: StorageObject = item.build() if hasattr(item, "build") else item
        cluster.storage.upsert(parsed)
    return cluster


def cycle_with(nodes: list[dict[str, Any]], objects: list[Any]) -> CycleState:
    return CycleState(cluster_with(nodes, objects))
