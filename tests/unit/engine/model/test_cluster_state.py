"""ClusterState: incremental accounting, slot reuse, orphans, zone order and pod-count indexes."""

from __future__ import annotations

import numpy as np

from berth.engine.cluster import ClusterState
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.model.labels import parse_label_selector
from tests.builders import make_node, make_pod


def test_requests_are_accounted_and_released() -> None:
    cluster = ClusterState(capacity=2)
    cluster.upsert_node(make_node("a").build())
    pod = make_pod("p").req(cpu="1", memory="1Gi").node("a").build()
    cluster.add_pod(pod)
    slot = cluster.slot_of("a")
    assert slot is not None
    assert cluster.requested[cluster.resource_column("cpu"), slot] == 1000
    assert cluster.pod_count[slot] == 1
    cluster.remove_pod(pod.uid)
    assert cluster.requested[:, slot].sum() == 0
    assert cluster.pod_count[slot] == 0


def test_capacity_grows_and_slots_are_reused() -> None:
    cluster = ClusterState(capacity=2)
    for index in range(5):
        cluster.upsert_node(make_node(f"n{index}").build())
    assert cluster.node_count == 5
    freed = cluster.slot_of("n1")
    cluster.remove_node("n1")
    cluster.upsert_node(make_node("fresh").build())
    assert cluster.slot_of("fresh") == freed


def test_pods_of_unknown_nodes_wait_as_orphans() -> None:
    cluster = ClusterState()
    cluster.add_pod(make_pod("early").req(cpu="1").node("later").build())
    cluster.upsert_node(make_node("later").build())
    slot = cluster.slot_of("later")
    assert slot is not None
    assert cluster.pod_count[slot] == 1


def test_new_extended_resource_widens_the_table() -> None:
    cluster = ClusterState()
    cluster.upsert_node(make_node("a").build())
    cluster.upsert_node(
        make_node("gpu").capacity(cpu="4", memory="8Gi", pods=10, example_com__gpu=2).build()
    )
    column = cluster.resource_column("example.com/gpu")
    assert column is not None
    assert cluster.allocatable[column, cluster.slot_of("gpu")] == 2
    assert cluster.allocatable[column, cluster.slot_of("a")] == 0


def test_zone_order_follows_label_changes() -> None:
    cluster = ClusterState()
    for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        cluster.upsert_node(make_node(name).zone(zone).build())
    names = [cluster.node_at(int(s)).name for s in cluster.node_order()]
    assert names == ["a1", "b1", "a2"]
    cluster.upsert_node(make_node("a1").zone("b").build())
    names = [cluster.node_at(int(s)).name for s in cluster.node_order()]
    assert names == ["a2", "b1", "a1"]


def test_label_columns_stay_current() -> None:
    cluster = ClusterState()
    cluster.upsert_node(make_node("a").zone("z1").build())
    column = cluster.label_column("topology.kubernetes.io/zone")
    cluster.upsert_node(make_node("b").zone("z2").build())
    cluster.upsert_node(make_node("a").build())  # label removed
    values = {
        cluster.node_at(slot).name: column.values[slot] for slot in cluster.node_order().tolist()
    }
    assert values["a"] == -1
    assert column.vocabulary[values["b"]] == "z2"


def test_matching_pod_counts_are_maintained_incrementally() -> None:
    cluster = ClusterState()
    cluster.upsert_node(make_node("a").build())
    selector = parse_label_selector({"matchLabels": {"app": "web"}}, "s")
    assert selector is not None
    query = PodQuery((PodClause(selector, frozenset({"default"})),), skip_terminating=True)
    counts = cluster.matching_pod_counts(query)
    web = make_pod("w").label("app", "web").node("a").build()
    cluster.add_pod(web)
    cluster.add_pod(make_pod("other").label("app", "db").node("a").build())
    cluster.add_pod(make_pod("dying").label("app", "web").node("a").terminating().build())
    slot = cluster.slot_of("a")
    assert int(cluster.matching_pod_counts(query)[slot]) == 1
    cluster.remove_pod(web.uid)
    assert int(counts[slot]) == 0
    assert np.array_equal(cluster.matching_pod_counts(query), counts)


def test_cordoned_nodes_are_counted_through_cordon_uncordon_and_removal() -> None:
    cluster = ClusterState(capacity=2)
    cluster.upsert_node(make_node("a").unschedulable().build())
    cluster.upsert_node(make_node("b").build())
    cluster.upsert_node(make_node("c").unschedulable().build())  # grows the table
    assert cluster.cordoned_nodes == 2
    cluster.upsert_node(make_node("a").build())
    cluster.upsert_node(make_node("a").build())
    assert cluster.cordoned_nodes == 1
    cluster.remove_node("c")
    assert cluster.cordoned_nodes == 0
    cluster.upsert_node(make_node("d").unschedulable().build())  # reuses c's slot
    assert cluster.cordoned_nodes == 1


def test_free_is_allocatable_less_requests_and_pods() -> None:
    cluster = ClusterState(capacity=1)
    cluster.upsert_node(make_node("a").capacity(cpu="4", memory="8Gi", pods=10).build())
    pod = make_pod("p").req(cpu="1", memory="1Gi").node("a").build()
    cluster.add_pod(pod)
    cluster.add_pod(make_pod("orphan").req(cpu="1").node("b").build())
    cluster.upsert_node(make_node("b").capacity(cpu="2", memory="1Gi", pods=1).build())
    cpu, memory, pods = (cluster.resource_column(name) for name in ("cpu", "memory", "pods"))
    free = {
        name: [int(cluster.free[column, cluster.slot_of(name)]) for column in (cpu, memory, pods)]
        for name in ("a", "b")
    }
    assert free == {"a": [3000, 7 * 2**30, 9], "b": [1000, 2**30, 0]}
    cluster.upsert_node(make_node("a").capacity(cpu="2", memory="8Gi", pods=10).build())
    assert int(cluster.free[cpu, cluster.slot_of("a")]) == 1000
    cluster.remove_pod(pod.uid)
    assert int(cluster.free[cpu, cluster.slot_of("a")]) == 2000
