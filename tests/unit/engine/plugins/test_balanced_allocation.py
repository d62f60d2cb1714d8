"""NodeResourcesBalancedAllocation: PreScore skip, balance maths, args."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.plugins.balanced_allocation import new_plugin
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.resource_cluster_strategies import (
    RESOURCE_NAMES,
    RandomCluster,
    random_clusters,
)
from tests.unit.engine.reference import balanced_allocation as reference


def cluster_of(nodes: Sequence[NodeBuilder], pods: Sequence[PodBuilder] = ()) -> ClusterState:
    cluster = ClusterState(capacity=2)
    for node in nodes:
        cluster.upsert_node(node.build())
    for pod in pods:
        cluster.add_pod(pod.build())
    return cluster


def node(**allocatable: str | int) -> NodeBuilder:
    return make_node("n1").capacity(**allocatable)


def on_node(pod: PodBuilder) -> PodBuilder:
    return pod.node("n1")


def resources(*names: str) -> dict[str, Any]:
    return {"resources": [{"name": name, "weight": 1} for name in names]}


SCORE_CASES: list[
    tuple[str, dict[str, Any] | None, NodeBuilder, list[PodBuilder], PodBuilder, int]
] = [
    (
        # without pod: 0.25, 0.125 -> std 0.0625 -> 93; with: 0.5, 0.5 -> 100; 50 + (50+100-93)/2 = 78
        "pod-evens-out-the-node",
        None,
        node(cpu="4", memory="8000", pods=10),
        [on_node(make_pod("a").req(cpu="1", memory="1000"))],
        make_pod("p").req(cpu="1", memory="3000"),
        78,
    ),
    (
        # with: 0.5, 0 -> std 0.25 -> 75; without: 100; 50 + (50+75-100)/2 = 62
        "pod-unbalances-an-empty-node",
        None,
        node(cpu="4", memory="4000", pods=10),
        [],
        make_pod("p").req(cpu="2"),
        62,
    ),
    (
        # cpu fraction 3.0 is capped at 1: std 0.5 -> 50; 50 + (50+50-100)/2 = 50
        "fraction-capped-at-one",
        None,
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="3"),
        50,
    ),
    (
        "single-resource-has-no-spread",
        resources("cpu"),
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="900m"),
        75,
    ),
    (
        # with: 0.3, 0.6, 0.9 -> population std 0.2449 -> 75; without 100; 50 + 25/2 = 62
        "three-resources-population-std",
        resources("cpu", "memory", "ephemeral-storage"),
        node(cpu="1", memory="1000", ephemeral_storage="1000", pods=10),
        [],
        make_pod("p").req(cpu="300m", memory="600", ephemeral_storage="900"),
        62,
    ),
    (
        # memory not allocatable on the node: only cpu takes part -> 75
        "resource-missing-on-node-left-out",
        None,
        node(cpu="1", pods=10),
        [],
        make_pod("p").req(cpu="500m", memory="100"),
        75,
    ),
    (
        # an unrequested scalar does not count, however busy the node's GPUs are
        "unrequested-scalar-left-out",
        resources("cpu", "memory", "example.com/gpu"),
        node(cpu="4", memory="8000", example_com__gpu=4, pods=10),
        [on_node(make_pod("a").req(cpu="1", memory="1000", example_com__gpu=3))],
        make_pod("p").req(cpu="1", memory="3000"),
        78,
    ),
    (
        # ephemeral storage takes part even unrequested: with 0.5, 0.5 -> 100; without 0, 0.5 -> 75
        "unrequested-ephemeral-storage-counts",
        resources("cpu", "ephemeral-storage"),
        node(cpu="1", memory="1000", ephemeral_storage="10", pods=10),
        [on_node(make_pod("a").req(cpu="0", ephemeral_storage="5"))],
        make_pod("p").req(cpu="500m"),
        87,
    ),
    (
        # actual requests: request-less pods on the node count as 0, not 100m/200Mi
        "actual-requests-not-nonzero-defaults",
        None,
        node(cpu="1", memory="1000", pods=10),
        [on_node(make_pod("a")), on_node(make_pod("b"))],
        make_pod("p").req(cpu="500m", memory="500"),
        75,
    ),
]


@pytest.mark.parametrize(
    ("args", "node_builder", "existing", "pod", "expected"),
    [case[1:] for case in SCORE_CASES],
    ids=[case[0] for case in SCORE_CASES],
)
def test_score(
    args: dict[str, Any] | None,
    node_builder: NodeBuilder,
    existing: list[PodBuilder],
    pod: PodBuilder,
    expected: int,
) -> None:
    cluster = cluster_of([node_builder], existing)
    plugin = new_plugin(args)
    state = CycleState(cluster)
    slots = np.asarray([0], dtype=np.intp)
    assert plugin.pre_score(state, pod.build(), slots).code is Code.SUCCESS
    assert plugin.score(state, pod.build(), slots).tolist() == [expected]


@pytest.mark.parametrize(
    ("args", "pod", "skips"),
    [
        (None, make_pod("p"), True),
        (None, make_pod("p").req(example_com__gpu=1), True),
        (None, make_pod("p").req(ephemeral_storage="1Gi"), True),
        (None, make_pod("p").req(memory="1"), False),
        (resources("example.com/gpu"), make_pod("p").req(example_com__gpu=1), False),
    ],
    ids=["no-requests", "only-unconfigured-gpu", "only-ephemeral", "memory", "configured-gpu"],
)
def test_pre_score_skips_best_effort_pods(
    args: dict[str, Any] | None, pod: PodBuilder, skips: bool
) -> None:
    cluster = cluster_of([node(cpu="1", memory="1000", pods=10)])
    status = new_plugin(args).pre_score(CycleState(cluster), pod.build(), np.asarray([0]))
    assert status.code is (Code.SKIP if skips else Code.SUCCESS)


def test_score_without_pre_score_is_zero_for_best_effort() -> None:
    cluster = cluster_of([node(cpu="1", memory="1000", pods=10)])
    scores = new_plugin(None).score(CycleState(cluster), make_pod("p").build(), np.asarray([0]))
    assert scores.tolist() == [0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (None, [("cpu", 1), ("memory", 1)]),
        ({"resources": []}, [("cpu", 1), ("memory", 1)]),
        (
            {"resources": [{"name": "cpu"}, {"name": "x.io/y", "weight": 0}]},
            [("cpu", 1), ("x.io/y", 1)],
        ),
        ({"kind": "NodeResourcesBalancedAllocationArgs"}, [("cpu", 1), ("memory", 1)]),
    ],
    ids=["none", "empty", "zero-and-missing-weights", "kind-allowed"],
)
def test_args_defaults(args: dict[str, Any] | None, expected: list[tuple[str, int]]) -> None:
    assert [(r.name, r.weight) for r in new_plugin(args).args.resources] == expected


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight"),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "resources[1].name"),
        ({"resource": []}, "resource"),
        ({"resources": "cpu"}, "resources"),
        ({"resources": [{"name": 3}]}, "resources[0].name"),
        ({"resources": [{"name": "cpu", "weigth": 1}]}, "resources[0].weigth"),
    ],
    ids=[
        "weight-not-one",
        "duplicate",
        "unknown-field",
        "not-a-list",
        "name-not-string",
        "typo-in-spec",
    ],
)
def test_bad_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as caught:
        new_plugin(args)
    assert caught.value.plugin == "NodeResourcesBalancedAllocation"
    assert caught.value.field == field


@settings(max_examples=150, deadline=None)
@given(
    world=random_clusters(),
    names=st.lists(st.sampled_from(RESOURCE_NAMES), unique=True, min_size=1, max_size=5),
)
def test_score_equals_the_reference(world: RandomCluster, names: list[str]) -> None:
    plugin = new_plugin(resources(*names))
    state = CycleState(world.cluster)
    status = plugin.pre_score(state, world.pod, world.slots)
    expected = [
        reference.balanced_score(world.pod, each, world.pods_by_node[each.name], names)
        for each in world.nodes
    ]
    if status.code is Code.SKIP:
        assert all(value is None for value in expected)
        return
    scores = plugin.score(state, world.pod, world.slots)
    assert scores.tolist() == expected
