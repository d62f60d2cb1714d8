"""Hypothesis strategies for random clusters that exercise the resource plugins' edges.

Small integer units (memory in plain bytes) make exact fits, overcommit and
zero-allocatable nodes common.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.builders import make_node, make_pod

RESOURCE_NAMES = ("cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "pods")
_REQUESTABLE = ("cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi")


@dataclass
class RandomCluster:
    """A cluster, the nodes to judge (all or a subset, in random order) and an incoming pod."""

    cluster: ClusterState
    nodes: list[Node]
    pods_by_node: dict[str, list[Pod]]
    pod: Pod

    @property
    def slots(self) -> NodeSlots:
        slots = [self.cluster.slot_of(node.name) for node in self.nodes]
        return np.asarray(slots, dtype=np.intp)


def _amount(name: str) -> st.SearchStrategy[int]:
    if name == "cpu":
        return st.sampled_from([0, 50, 100, 250, 500, 1000, 2000])
    return st.integers(min_value=0, max_value=12)


@st.composite
def container_requests(draw: st.DrawFn) -> dict[str, str]:
    names = draw(st.lists(st.sampled_from(_REQUESTABLE), unique=True, max_size=4))
    requests = {}
    for name in names:
        amount = draw(_amount(name))
        requests[name] = f"{amount}m" if name == "cpu" else str(amount)
    return requests


@st.composite
def pod_dicts(draw: st.DrawFn, name: str) -> dict[str, object]:
    builder = make_pod(name)
    containers = draw(st.lists(container_requests(), min_size=1, max_size=3))
    builder.set("spec.containers", [])
    for index, requests in enumerate(containers):
        entry: dict[str, object] = {"name": f"c{index}", "image": "pause"}
        if requests:
            entry["resources"] = {"requests": requests}
        builder.set("spec.containers", [*builder.obj()["spec"]["containers"], entry])
    if draw(st.booleans()):
        for requests in draw(st.lists(container_requests(), max_size=2)):
            builder.init_container(sidecar=draw(st.booleans()), **_kw(requests))
    return builder.obj()


def _kw(requests: dict[str, str]) -> dict[str, str | int]:
    # builders spell "/" and "-" in keyword names as "__" and "_"
    return {
        name.replace(".", "_").replace("/", "__").replace("-", "_"): v
        for name, v in requests.items()
    }


@st.composite
def node_objects(draw: st.DrawFn, name: str) -> Node:
    allocatable = {}
    for resource in RESOURCE_NAMES:
        if resource in ("cpu", "pods") or draw(st.booleans()):
            if resource == "cpu":
                allocatable[resource] = draw(st.sampled_from(["0", "500m", "1", "2", "4"]))
            elif resource == "pods":
                allocatable[resource] = str(draw(st.integers(min_value=0, max_value=4)))
            else:
                allocatable[resource] = str(draw(st.integers(min_value=0, max_value=20)))
    raw = make_node(name).obj()
    raw["status"]["allocatable"] = allocatable
    raw["status"]["capacity"] = allocatable
    return Node.from_dict(raw)


@st.composite
def random_clusters(draw: st.DrawFn) -> RandomCluster:
    cluster = ClusterState(capacity=4)
    node_count = draw(st.integers(min_value=1, max_value=9))
    all_nodes = [draw(node_objects(f"n{i}")) for i in range(node_count)]
    for node in all_nodes:
        cluster.upsert_node(node)
    # a subset exercises the plugins' gather-first paths, the full set their whole-table ones
    nodes = draw(st.permutations(all_nodes))[: draw(st.integers(1, node_count))]
    pods_by_node: dict[str, list[Pod]] = {node.name: [] for node in all_nodes}
    for index in range(draw(st.integers(min_value=0, max_value=14))):
        node = draw(st.sampled_from(all_nodes))
        raw = draw(pod_dicts(f"p{index}"))
        raw["spec"]["nodeName"] = node.name  # type: ignore[index]
        pod = Pod.from_dict(raw)
        cluster.add_pod(pod)
        pods_by_node[node.name].append(pod)
    pod = Pod.from_dict(draw(pod_dicts("incoming")))
    return RandomCluster(cluster, nodes, pods_by_node, pod)
