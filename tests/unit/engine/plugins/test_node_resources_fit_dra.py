"""NodeResourcesFit with extended resources backed by DRA (DRAExtendedResource).

A requested extended resource that a DeviceClass serves is left to DynamicResources on
nodes whose allocatable does not list it (or lists zero); a node that advertises it (a
device plugin) is judged as before. The queueing hints follow the same rule, and a
DeviceClass event helps when the class comes to serve a name the pod asks for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from berth.engine.cluster import ClusterState
from berth.engine.dra.classes import DeviceClass
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import QueueingHint
from berth.engine.plugins.node_resources_fit import NodeResourcesFit, hints, new_plugin
from tests.builders import NodeBuilder, make_node, make_pod
from tests.unit.engine.dra.dra_builders import DRIVER
from tests.unit.engine.plugins.dra_plugin_support import add_claim, claim_raw, gpu_cluster


def _class(name: str = "gpu", resource: str | None = "example.com/gpu") -> DeviceClass:
    spec: dict[str, Any] = {} if resource is None else {"extendedResourceName": resource}
    return DeviceClass.from_dict({"metadata": {"name": name}, "spec": spec})


def _verdicts(
    cluster: ClusterState, **requests: str | int
) -> dict[str, tuple[int, tuple[str, ...]]]:
    plugin: NodeResourcesFit = new_plugin(None)
    pod = make_pod("p").req(cpu="1", **requests).build()
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    nodes = list(cluster.nodes())
    slots = np.asarray([cluster.slot_of(node.name) for node in nodes], dtype=np.intp)
    verdicts = plugin.filter(state, pod, slots)
    return {
        node.name: (int(verdicts.codes[index]), verdicts.reasons_at(index))
        for index, node in enumerate(nodes)
    }


def _cluster(*nodes: NodeBuilder, served: bool = True) -> ClusterState:
    cluster = ClusterState(capacity=4)
    for node in nodes:
        cluster.upsert_node(node.build())
    if served:
        cluster.dra.upsert(_class())
    return cluster


PLAIN = make_node("plain").capacity(cpu=4, pods=10)
ZERO = make_node("zero").capacity(cpu=4, pods=10, example_com__gpu=0)
PLUGGED = make_node("plugged").capacity(cpu=4, pods=10, example_com__gpu=1)


def test_without_a_class_every_node_lacking_the_resource_is_short_of_it() -> None:
    verdicts = _verdicts(_cluster(PLAIN, ZERO, served=False), example_com__gpu=2)
    assert verdicts == {
        "plain": (3, ("Insufficient example.com/gpu",)),
        "zero": (3, ("Insufficient example.com/gpu",)),
    }


def test_a_served_resource_is_left_to_dra_where_the_node_does_not_advertise_it() -> None:
    verdicts = _verdicts(_cluster(PLAIN, ZERO, PLUGGED), example_com__gpu=2)
    assert verdicts == {
        "plain": (0, ()),
        "zero": (0, ()),
        "plugged": (3, ("Insufficient example.com/gpu",)),  # its device plugin decides
    }


@pytest.mark.parametrize("served", [True, False], ids=["served", "not-served"])
def test_only_nodes_without_any_column_for_it_are_judged_by_the_class(served: bool) -> None:
    verdicts = _verdicts(_cluster(PLAIN, served=served), deviceclass_resource_kubernetes_io__gpu=1)
    expected = (0, ()) if served else (3, ("Insufficient deviceclass.resource.kubernetes.io/gpu",))
    assert verdicts == {"plain": expected}


def test_node_hints_leave_served_resources_to_dra() -> None:
    pod = make_pod("p").req(example_com__gpu=1).build()
    node = PLAIN.build()
    served = {"example.com/gpu": _class()}
    assert hints.after_node_change(pod, None, node) is QueueingHint.SKIP
    assert hints.after_node_change(pod, None, node, served=served) is QueueingHint.QUEUE
    same = make_node("plain").capacity(cpu=4, pods=10).build()
    assert hints.after_node_change(pod, node, same, served=served) is QueueingHint.QUEUE


def test_device_class_hint_queues_when_a_class_comes_to_serve_the_pods_resource() -> None:
    pod = make_pod("p").req(example_com__gpu=1).build()
    implicit = make_pod("q").req(deviceclass_resource_kubernetes_io__gpu=1).build()
    hint = hints.after_device_class_change
    assert hint(pod, None, _class()) is QueueingHint.QUEUE
    assert hint(pod, None, _class(resource="example.com/fpga")) is QueueingHint.SKIP
    assert hint(implicit, None, _class(resource=None)) is QueueingHint.QUEUE
    assert hint(pod, _class(resource=None), _class()) is QueueingHint.QUEUE
    assert hint(pod, _class(), _class()) is QueueingHint.SKIP
    assert hint(implicit, _class(resource=None), _class()) is QueueingHint.SKIP


def test_scoring_counts_the_class_devices_where_the_node_does_not_advertise_the_resource() -> None:
    cluster = gpu_cluster({"n1": 2, "n2": 4})
    cluster.dra.upsert(_class())
    taken = claim_raw("taken")
    taken["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "req", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
            }
        }
    }
    add_claim(cluster, taken)
    plugin = new_plugin(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "example.com/gpu", "weight": 1}],
            }
        }
    )
    pod = make_pod("p").req(example_com__gpu=1).build()
    state = CycleState(cluster)
    slots = np.asarray([cluster.slot_of("n1"), cluster.slot_of("n2")], dtype=np.intp)
    assert plugin.pre_score(state, pod, slots).is_success
    # n1: (1 taken + 1) of 2 devices; n2: 1 of 4. Without the class, no node has any.
    assert [int(score) for score in plugin.score(state, pod, slots)] == [100, 25]
