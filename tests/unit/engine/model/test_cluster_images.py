"""The cluster's image records follow kube-scheduler's cache, change by change.

backend/cache addNodeImageStates/removeNodeImageStates: an image name keeps the size
the first node reported while any node lists it, is forgotten when the last one goes,
and a node's update forgets its old list before recording the new one.
"""

from __future__ import annotations

import pytest

from berth.engine.cluster import ClusterState
from berth.engine.model.node import Node
from tests.builders import make_node

MIB = 1024 * 1024


def _node(name: str, size: int, *names: str) -> Node:
    builder = make_node(name)
    if names:
        builder.image(size, *names)
    return builder.build()


def _record(cluster: ClusterState, image: str) -> tuple[int, list[str]] | None:
    record = cluster.images.get(image)
    if record is None:
        return None
    return record.size, sorted(cluster.node_at(slot).name for slot in record.slots)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [("add", "a", 100), ("add", "b", 200)], (100 * MIB, ["a", "b"]), id="first-size-wins"
        ),
        pytest.param(
            [("add", "a", 100), ("add", "b", 200), ("remove", "a", 0)],
            (100 * MIB, ["b"]),
            id="size-outlives-its-reporter",
        ),
        pytest.param(
            [("add", "a", 100), ("remove", "a", 0), ("add", "a", 300)],
            (300 * MIB, ["a"]),
            id="forgotten-with-its-last-node",
        ),
        pytest.param(
            [("add", "a", 100), ("add", "a", 300)], (300 * MIB, ["a"]), id="update-of-sole-holder"
        ),
        pytest.param(
            [("add", "a", 100), ("add", "b", 100), ("add", "a", 300)],
            (100 * MIB, ["a", "b"]),
            id="update-while-another-holds-it",
        ),
        pytest.param(
            [("add", "a", 100), ("add", "b", 100), ("remove", "b", 0), ("add", "a", 300)],
            (300 * MIB, ["a"]),
            id="holder-gone-then-update",
        ),
        pytest.param([("add", "a", 100), ("add", "a", -1)], None, id="update-that-drops-the-image"),
    ],
)
def test_image_records_follow_node_changes(
    steps: list[tuple[str, str, int]], expected: tuple[int, list[str]] | None
) -> None:
    cluster = ClusterState(capacity=1)
    for action, name, size in steps:
        if action == "remove":
            cluster.remove_node(name)
        elif size < 0:
            cluster.upsert_node(_node(name, 0))
        else:
            cluster.upsert_node(_node(name, size * MIB, "nginx:1.25"))
    assert _record(cluster, "nginx:1.25") == expected


def test_every_name_of_an_image_is_recorded_once_per_node() -> None:
    cluster = ClusterState()
    cluster.upsert_node(_node("a", 5 * MIB, "redis:7", "docker.io/library/redis:7", "redis:7"))
    cluster.upsert_node(_node("b", 5 * MIB, "redis:7"))
    assert _record(cluster, "redis:7") == (5 * MIB, ["a", "b"])
    assert _record(cluster, "docker.io/library/redis:7") == (5 * MIB, ["a"])
    cluster.remove_node("a")
    assert _record(cluster, "docker.io/library/redis:7") is None
    holders = cluster.images.holders("redis:7", cluster.node_versions.size)
    assert holders.tolist().count(True) == 1
    assert bool(holders[cluster.slot_of("b")])
