"""TaintToleration: Filter on NoSchedule/NoExecute taints, PreferNoSchedule scoring (reversed), hints,
and equality with the per-node reference on random clusters, including node churn."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.taint_toleration import REASON, new_plugin
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import (
    PASS,
    Judgement,
    all_slots,
    cycle_over,
    filter_all,
    names_of,
)
from tests.unit.engine.plugins.node_strategies import raw_nodes, raw_pod_st
from tests.unit.engine.reference import taint_toleration as reference

REJECT: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))


@pytest.mark.parametrize(
    ("taint", "pod", "expected"),
    [
        (None, make_pod("p"), PASS),
        (("k", "v", "NoSchedule"), make_pod("p"), REJECT),
        (("k", "v", "NoExecute"), make_pod("p"), REJECT),
        (("k", "v", "PreferNoSchedule"), make_pod("p"), PASS),
        (("k", "v", "NoSchedule"), make_pod("p").toleration("k", "Equal", "v"), PASS),
        (("k", "v", "NoSchedule"), make_pod("p").toleration("k", "Equal", "w"), REJECT),
        (("k", "v", "NoSchedule"), make_pod("p").toleration("k", "Exists"), PASS),
        (("k", "v", "NoSchedule"), make_pod("p").toleration("", "Exists"), PASS),
        (
            ("k", "v", "NoSchedule"),
            make_pod("p").toleration("k", "Exists", effect="NoExecute"),
            REJECT,
        ),
        (
            ("k", "v", "NoSchedule"),
            make_pod("p").toleration("k", "Exists", effect="NoSchedule"),
            PASS,
        ),
        (("k", "", "NoSchedule"), make_pod("p").toleration("k", "Equal"), PASS),
        (("k", "v", "NoSchedule"), make_pod("p").toleration("other", "Exists"), REJECT),
    ],
    ids=[
        "no-taints",
        "noschedule-untolerated",
        "noexecute-untolerated",
        "prefer-never-filters",
        "equal-value",
        "equal-wrong-value",
        "exists-key",
        "exists-everything",
        "wrong-effect",
        "matching-effect",
        "equal-empty-value",
        "other-key",
    ],
)
def test_filter(taint: tuple[str, str, str] | None, pod: PodBuilder, expected: Judgement) -> None:
    node = make_node("n")
    if taint is not None:
        node.taint(*taint)
    assert filter_all(new_plugin(None), pod.build(), cycle_over(node.obj())) == {"n": expected}


def test_one_untolerated_taint_among_tolerated_ones_rejects() -> None:
    node = make_node("n").taint("a").taint("b").taint("c", effect="PreferNoSchedule")
    pod = make_pod("p").toleration("a", "Exists")
    assert filter_all(new_plugin(None), pod.build(), cycle_over(node.obj())) == {"n": REJECT}


def _scores(pod: Pod, state: CycleState) -> dict[str, tuple[int, int]]:
    plugin = new_plugin(None)
    slots = all_slots(state)
    assert plugin.pre_score(state, pod, slots).is_success
    raw = plugin.score(state, pod, slots)
    normalized = plugin.normalize_scores(state, pod, slots, raw)
    return {
        name: (int(r), int(n))
        for name, r, n in zip(names_of(state, slots), raw, normalized, strict=True)
    }


def test_score_counts_untolerated_prefer_taints_and_reverses() -> None:
    state = cycle_over(
        make_node("clean").obj(),
        make_node("one").taint("a", effect="PreferNoSchedule").obj(),
        make_node("three")
        .taint("a", effect="PreferNoSchedule")
        .taint("b", effect="PreferNoSchedule")
        .taint("c", "x", effect="PreferNoSchedule")
        .taint("hard")
        .obj(),
        make_node("tolerated").taint("t", effect="PreferNoSchedule").obj(),
    )
    pod = make_pod("p").toleration("t", "Exists", effect="PreferNoSchedule").build()
    assert _scores(pod, state) == {
        "clean": (0, 100),
        "one": (1, 67),
        "three": (3, 0),
        "tolerated": (0, 100),
    }


def test_score_ignores_tolerations_with_other_effects() -> None:
    state = cycle_over(make_node("n").taint("a", effect="PreferNoSchedule").obj())
    noschedule_only = make_pod("p").toleration("a", "Exists", effect="NoSchedule").build()
    assert _scores(noschedule_only, state) == {"n": (1, 0)}


def test_no_prefer_taints_anywhere_gives_everyone_100() -> None:
    state = cycle_over(make_node("a").obj(), make_node("b").taint("x").obj())
    assert _scores(make_pod("p").build(), state) == {"a": (0, 100), "b": (0, 100)}


@pytest.mark.parametrize(
    ("old_taint", "new_taint", "hint"),
    [
        ("absent", None, QueueingHint.QUEUE),
        ("absent", "k", QueueingHint.SKIP),
        ("absent", "tolerated", QueueingHint.QUEUE),
        ("k", None, QueueingHint.QUEUE),
        (None, None, QueueingHint.SKIP),
        ("k", "other", QueueingHint.SKIP),
    ],
    ids=[
        "add-clean",
        "add-untolerated",
        "add-tolerated",
        "taint-removed",
        "was-fine",
        "still-untolerated",
    ],
)
def test_node_hint(old_taint: str | None, new_taint: str | None, hint: QueueingHint) -> None:
    def node(taint: str | None) -> Node:
        builder = make_node("n")
        if taint is not None:
            builder.taint(taint)
        return builder.build()

    registration = new_plugin(None).events_to_register()[0]
    assert registration.event == ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_TAINT)
    assert registration.hint is not None
    pod = make_pod("p").toleration("tolerated", "Exists").build()
    old = None if old_taint == "absent" else node(old_taint)
    assert registration.hint(pod, old, node(new_taint)) is hint


def test_pod_toleration_hint_queues_only_the_pod_itself() -> None:
    registration = new_plugin(None).events_to_register()[1]
    assert registration.event == ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS)
    assert registration.hint is not None
    pod = make_pod("p").uid("u1").build()
    updated = make_pod("p").uid("u1").toleration("k", "Exists").build()
    other = make_pod("q").uid("u2").toleration("k", "Exists").build()
    assert registration.hint(pod, pod, updated) is QueueingHint.QUEUE
    assert registration.hint(pod, other, other) is QueueingHint.SKIP


def _check_against_reference(cluster: ClusterState, raw_pod: dict[str, Any]) -> None:
    state = CycleState(cluster)
    slots = all_slots(state)
    pod = Pod.from_dict(raw_pod)
    plugin = new_plugin(None)
    verdicts = plugin.filter(state, pod, slots)
    nodes = [cluster.node_at(int(slot)) for slot in slots]
    raw_nodes_now = [_raw_of(node) for node in nodes]
    expected = [reference.node_passes(raw_pod, raw) for raw in raw_nodes_now]
    assert (verdicts.codes == 0).tolist() == expected
    assert plugin.pre_score(state, pod, slots).is_success
    normalized = plugin.normalize_scores(state, pod, slots, plugin.score(state, pod, slots))
    assert normalized.tolist() == reference.normalized_scores(raw_pod, raw_nodes_now)


def _raw_of(node: Node) -> dict[str, Any]:
    return {
        "spec": {
            "taints": [
                {"key": t.key, "value": t.value, "effect": t.effect.value} for t in node.taints
            ]
        }
    }


@settings(max_examples=150, deadline=None)
@given(
    nodes=raw_nodes(max_size=10),
    replacements=raw_nodes(max_size=10),
    removals=st.lists(st.integers(0, 9), max_size=3),
    pods=st.lists(raw_pod_st, min_size=1, max_size=3),
)
def test_matches_reference_through_node_churn(
    nodes: list[dict[str, Any]],
    replacements: list[dict[str, Any]],
    removals: list[int],
    pods: list[dict[str, Any]],
) -> None:
    cluster = ClusterState(capacity=2)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    _check_against_reference(cluster, pods[0])
    # Update some nodes in place (taints change), remove some, then add new ones: the
    # derived taint groups must follow.
    for raw in replacements[: len(replacements) // 2]:
        cluster.upsert_node(Node.from_dict(raw))
    for index in removals:
        cluster.remove_node(f"n{index}")
    for raw in replacements[len(replacements) // 2 :]:
        renamed = {**raw, "metadata": {**raw["metadata"], "name": raw["metadata"]["name"] + "-new"}}
        cluster.upsert_node(Node.from_dict(renamed))
    for raw_pod in pods:
        _check_against_reference(cluster, raw_pod)
