"""Pods parsed apart hold one shared set of resource names and of node features."""

from __future__ import annotations

from berth.engine.model.shared_sets import shared_set
from tests.builders import make_pod


def test_pods_with_the_same_resources_share_one_set() -> None:
    first = make_pod("a").req(cpu="1", memory="1Gi").build()
    second = make_pod("b").req(cpu="2", memory="2Gi").build()
    assert first.container_resource_names == {"cpu", "memory"}
    assert first.container_resource_names is second.container_resource_names
    assert first.required_node_features is second.required_node_features


def test_a_set_not_seen_before_is_handed_out_as_given_and_then_shared() -> None:
    names = frozenset({"example.com/first-seen-here"})
    assert shared_set(names) is names
    assert shared_set(frozenset(names)) is names
