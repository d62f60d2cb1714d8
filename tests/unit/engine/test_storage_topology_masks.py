"""Vectorised storage topology checks (PV node affinity, allowedTopologies, capacity nodeTopology)
equal the per-node model methods."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.model.csi import CSIStorageCapacity
from berth.engine.model.node import Node
from berth.engine.model.storage import PersistentVolume
from berth.engine.model.storage_class import StorageClass
from berth.engine.nodematch import (
    node_label_selector_mask,
    topology_terms_mask,
    volume_node_affinity_mask,
)
from tests.builders import make_node
from tests.storage_builders import make_capacity, make_class, make_pv
from tests.unit.engine.test_nodematch import expression, node_list


def _cluster(raw_nodes: list[dict[str, Any]]) -> ClusterState:
    cluster = ClusterState(capacity=2)
    for raw in raw_nodes:
        cluster.upsert_node(Node.from_dict(raw))
    return cluster


def _per_node(cluster: ClusterState, judge: Any) -> list[bool]:
    return [bool(judge(cluster.node_at(slot).labels)) for slot in cluster.node_order()]


@st.composite
def volumes(draw: st.DrawFn) -> PersistentVolume:
    builder = make_pv("pv")
    if draw(st.booleans()):
        terms = []
        for _ in range(draw(st.integers(0, 3))):
            term: dict[str, Any] = {"matchExpressions": draw(st.lists(expression(), max_size=2))}
            if draw(st.integers(0, 2)) == 0:
                term["matchFields"] = [
                    {
                        "key": draw(st.sampled_from(["metadata.name", "metadata.uid"])),
                        "operator": draw(st.sampled_from(["In", "NotIn"])),
                        "values": [draw(st.sampled_from(["n0", "n1"]))],
                    }
                ]
            terms.append(term)
        builder.set("spec.nodeAffinity", {"required": {"nodeSelectorTerms": terms}})
    return builder.build()


@st.composite
def classes(draw: st.DrawFn) -> StorageClass:
    builder = make_class("sc")
    for _ in range(draw(st.integers(0, 3))):
        expressions = [
            {
                "key": draw(st.sampled_from(["a", "b", "bad key!"])),
                "values": draw(st.lists(st.sampled_from(["1", "5", "x", "", "-bad"]), max_size=2)),
            }
            for _ in range(draw(st.integers(0, 2)))
        ]
        builder._raw.setdefault("allowedTopologies", []).append(
            {"matchLabelExpressions": expressions}
        )
    return builder.build()


@st.composite
def capacities(draw: st.DrawFn) -> CSIStorageCapacity:
    builder = make_capacity("cap", "sc")
    choice = draw(st.integers(0, 2))
    if choice == 1:
        builder.set("nodeTopology", {})
    elif choice == 2:
        expressions = [
            e for e in draw(st.lists(expression(), max_size=2)) if e["operator"] not in ("Gt", "Lt")
        ]
        builder.set("nodeTopology", {"matchExpressions": expressions})
        if draw(st.booleans()):
            builder.topology_label(
                draw(st.sampled_from(["a", "b"])), draw(st.sampled_from(["1", "x"]))
            )
    return builder.build()


@settings(max_examples=200, deadline=None)
@given(node_list(), volumes())
def test_volume_node_affinity_mask_equals_model(
    raw_nodes: list[dict[str, Any]], volume: PersistentVolume
) -> None:
    cluster = _cluster(raw_nodes)
    slots = cluster.node_order()
    mask = volume_node_affinity_mask(cluster, volume.node_affinity, slots)
    assert mask.tolist() == _per_node(cluster, volume.node_affinity_matches)


@settings(max_examples=200, deadline=None)
@given(node_list(), classes())
def test_allowed_topologies_mask_equals_model(
    raw_nodes: list[dict[str, Any]], storage_class: StorageClass
) -> None:
    cluster = _cluster(raw_nodes)
    mask = topology_terms_mask(cluster, storage_class.allowed_topologies, cluster.node_order())
    assert mask.tolist() == _per_node(cluster, storage_class.allows_topology)


@settings(max_examples=200, deadline=None)
@given(node_list(), capacities())
def test_capacity_topology_mask_equals_model(
    raw_nodes: list[dict[str, Any]], capacity: CSIStorageCapacity
) -> None:
    cluster = _cluster(raw_nodes)
    mask = node_label_selector_mask(cluster, capacity.node_topology, cluster.node_order())
    assert mask.tolist() == _per_node(cluster, capacity.reaches)


def test_a_volume_affinity_answer_follows_node_changes() -> None:
    cluster = ClusterState(capacity=2)
    cluster.upsert_node(make_node("n0").zone("a").build())
    cluster.upsert_node(make_node("n1").zone("b").build())
    volume = make_pv("pv").node_affinity("topology.kubernetes.io/zone", "a").build()
    slots = cluster.node_order()
    first = volume_node_affinity_mask(cluster, volume.node_affinity, slots)
    cluster.upsert_node(make_node("n1").zone("a").build())
    cluster.upsert_node(make_node("n2").zone("a").build())  # grows the tables
    again = volume_node_affinity_mask(cluster, volume.node_affinity, cluster.node_order())
    names = [cluster.node_at(slot).name for slot in cluster.node_order()]
    assert dict(zip(names, again.tolist(), strict=True)) == {"n0": True, "n1": True, "n2": True}
    assert first.tolist().count(True) == 1
    assert np.all(volume_node_affinity_mask(cluster, None, slots))
