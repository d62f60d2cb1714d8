"""Resource states: nodes with equal resource rows share an id, and scores memoised per state
stay right while the cluster changes under long-lived plugins."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins import balanced_allocation
from berth.engine.plugins import node_resources_fit as fit
from tests.builders import make_node, make_pod
from tests.unit.engine.plugins.resource_cluster_strategies import node_objects, pod_dicts


def _state_of(cluster: ClusterState, name: str) -> int:
    slot = cluster.slot_of(name)
    assert slot is not None
    return int(cluster.resource_states.of_slot[slot])


def test_nodes_with_equal_rows_share_a_state_and_leave_it_when_they_differ() -> None:
    cluster = ClusterState(capacity=1)
    for name in ("a", "b", "c"):
        cluster.upsert_node(make_node(name).capacity(cpu="4", memory="8Gi", pods=10).build())
    assert _state_of(cluster, "a") == _state_of(cluster, "b") == _state_of(cluster, "c")
    pod = make_pod("p").req(cpu="1").node("a").build()
    cluster.add_pod(pod)
    assert _state_of(cluster, "a") != _state_of(cluster, "b")
    cluster.add_pod(make_pod("q").req(cpu="1").node("b").build())
    assert _state_of(cluster, "a") == _state_of(cluster, "b")
    cluster.remove_pod(pod.uid)
    assert _state_of(cluster, "a") == _state_of(cluster, "c")
    # A resource only one node offers widens every row; equal nodes stay together.
    cluster.upsert_node(make_node("d").capacity(cpu="4", memory="8Gi", example_com__gpu=1).build())
    assert _state_of(cluster, "a") == _state_of(cluster, "c") != _state_of(cluster, "d")


def test_states_no_node_is_in_are_dropped_when_they_pile_up() -> None:
    cluster = ClusterState(capacity=1)
    cluster.upsert_node(make_node("a").capacity(cpu="2000", memory="8Gi", pods=2000).build())
    cluster.upsert_node(make_node("b").capacity(cpu="2000", memory="8Gi", pods=2000).build())
    for index in range(1100):  # each request moves node a into a state never seen before
        cluster.add_pod(make_pod(f"p{index}").req(cpu=f"{index + 1}m").node("a").build())
    assert cluster.resource_states.count < 1100
    cluster.add_pod(make_pod("last").req(cpu="1").node("b").build())
    assert _state_of(cluster, "b") != _state_of(cluster, "a")


def _score_all(plugins: list[Any], cluster: ClusterState, pod: Pod) -> list[list[int]]:
    order = cluster.node_order()
    slots = np.asarray(sorted(order.tolist(), key=lambda s: cluster.node_at(s).name))
    results = []
    for plugin in plugins:
        state = CycleState(cluster)
        if not plugin.pre_score(state, pod, slots).is_success:
            results.append([])
            continue
        results.append(plugin.score(state, pod, slots).tolist())
    return results


def _plugins(fit_type: str) -> list[Any]:
    return [
        fit.new_plugin({"scoringStrategy": {"type": fit_type}} if fit_type else None),
        balanced_allocation.new_plugin(
            {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]}
        ),
    ]


@st.composite
def _histories(draw: st.DrawFn) -> tuple[list[Node], list[tuple[str, object]], list[Pod]]:
    nodes = [draw(node_objects(f"n{i}")) for i in range(draw(st.integers(1, 5)))]
    steps: list[tuple[str, object]] = []
    for index in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["add", "add", "remove", "node"]))
        if kind == "add":
            raw = draw(pod_dicts(f"p{index}"))
            raw["spec"]["nodeName"] = draw(st.sampled_from(nodes)).name  # type: ignore[index]
            steps.append(("add", Pod.from_dict(raw)))
        elif kind == "remove":
            steps.append(("remove", draw(st.integers(0, 20))))
        else:
            steps.append(("node", draw(node_objects(draw(st.sampled_from(nodes)).name))))
    incoming = [Pod.from_dict(draw(pod_dicts(f"in{i}"))) for i in range(2)]
    return nodes, steps, incoming


@settings(max_examples=30, deadline=None)
@given(
    history=_histories(),
    fit_type=st.sampled_from(["", "MostAllocated", "LeastAllocated"]),
)
def test_memoised_scores_follow_every_change(
    history: tuple[list[Node], list[tuple[str, object]], list[Pod]], fit_type: str
) -> None:
    nodes, steps, incoming = history
    cluster = ClusterState(capacity=2)
    for node in nodes:
        cluster.upsert_node(node)
    long_lived = _plugins(fit_type)
    current = {node.name: node for node in nodes}
    placed: list[Pod] = []
    for kind, change in steps:
        if kind == "add":
            assert isinstance(change, Pod)
            cluster.add_pod(change)
            placed.append(change)
        elif kind == "remove" and placed:
            assert isinstance(change, int)
            gone = placed.pop(change % len(placed))
            cluster.remove_pod(gone.uid)
        elif kind == "node":
            assert isinstance(change, Node)
            cluster.upsert_node(change)
            current[change.name] = change
        fresh = ClusterState(capacity=2)
        for node in current.values():
            fresh.upsert_node(node)
        for pod in placed:
            fresh.add_pod(pod)
        for pod in incoming:
            assert _score_all(long_lived, cluster, pod) == _score_all(
                _plugins(fit_type), fresh, pod
            )
