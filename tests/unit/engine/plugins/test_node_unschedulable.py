"""NodeUnschedulable: cordoned nodes reject pods unless they tolerate node.kubernetes.io/unschedulable:NoSchedule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_unschedulable import REASON, new_plugin
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import (
    PASS,
    Judgement,
    cycle_over,
    filter_all,
)
from tests.unit.engine.plugins.node_strategies import raw_nodes, raw_pod_st
from tests.unit.engine.reference import node_unschedulable as reference

REJECT: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))
UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("pod", "cordoned_verdict"),
    [
        (make_pod("p"), REJECT),
        (make_pod("p").toleration(UNSCHEDULABLE_KEY, "Exists", effect="NoSchedule"), PASS),
        (make_pod("p").toleration(UNSCHEDULABLE_KEY, "Exists"), PASS),
        (make_pod("p").toleration("", "Exists"), PASS),
        (make_pod("p").toleration(UNSCHEDULABLE_KEY, "Equal", ""), PASS),
        (make_pod("p").toleration(UNSCHEDULABLE_KEY, "Equal", "x"), REJECT),
        (make_pod("p").toleration(UNSCHEDULABLE_KEY, "Exists", effect="NoExecute"), REJECT),
        (make_pod("p").toleration("other", "Exists"), REJECT),
    ],
    ids=[
        "no-toleration",
        "exists-noschedule",
        "exists-any-effect",
        "tolerate-everything",
        "equal-empty-value",
        "equal-wrong-value",
        "wrong-effect",
        "other-key",
    ],
)
def test_filter(pod: PodBuilder, cordoned_verdict: Judgement) -> None:
    state = cycle_over(make_node("open").obj(), make_node("cordoned").unschedulable().obj())
    assert filter_all(new_plugin(None), pod.build(), state) == {
        "open": PASS,
        "cordoned": cordoned_verdict,
    }


@pytest.mark.parametrize(
    ("old_cordoned", "new_cordoned", "hint"),
    [
        (None, False, QueueingHint.QUEUE),
        (None, True, QueueingHint.SKIP),
        (True, False, QueueingHint.QUEUE),
        (False, False, QueueingHint.SKIP),
        (False, True, QueueingHint.SKIP),
    ],
    ids=["add-open", "add-cordoned", "uncordon", "unrelated-update", "cordon"],
)
def test_node_hint(old_cordoned: bool | None, new_cordoned: bool, hint: QueueingHint) -> None:
    node_registration = new_plugin(None).events_to_register()[0]
    assert node_registration.event.matches(ClusterEvent(Resource.NODE, Action.ADD))
    assert node_registration.event.matches(ClusterEvent(Resource.NODE, Action.UPDATE_NODE_TAINT))
    old = None if old_cordoned is None else make_node("n").unschedulable(old_cordoned).build()
    new = make_node("n").unschedulable(new_cordoned).build()
    assert node_registration.hint is not None
    assert node_registration.hint(make_pod("p").build(), old, new) is hint


@pytest.mark.parametrize(
    ("updated", "hint"),
    [
        (make_pod("p").uid("u1").toleration(UNSCHEDULABLE_KEY, "Exists"), QueueingHint.QUEUE),
        (make_pod("p").uid("u1").toleration("other", "Exists"), QueueingHint.SKIP),
        (make_pod("q").uid("u2").toleration(UNSCHEDULABLE_KEY, "Exists"), QueueingHint.SKIP),
    ],
    ids=["own-new-toleration-helps", "own-unrelated-toleration", "other-pod"],
)
def test_pod_toleration_hint(updated: PodBuilder, hint: QueueingHint) -> None:
    pod_registration = new_plugin(None).events_to_register()[1]
    assert pod_registration.event == ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS)
    rejected = make_pod("p").uid("u1").build()
    assert pod_registration.hint is not None
    assert pod_registration.hint(rejected, rejected, updated.build()) is hint


@settings(max_examples=100, deadline=None)
@given(nodes=raw_nodes(max_size=10), pods=st.lists(raw_pod_st, min_size=1, max_size=3))
def test_matches_reference(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
    state = cycle_over(*nodes)
    by_name = {raw["metadata"]["name"]: raw for raw in nodes}
    for raw_pod in pods:
        judged = filter_all(new_plugin(None), Pod.from_dict(raw_pod), state)
        assert {name: verdict == PASS for name, verdict in judged.items()} == {
            name: reference.node_passes(raw_pod, raw) for name, raw in by_name.items()
        }
