"""NodeName: PreFilter narrows to spec.nodeName; Filter rejects every other node (Unresolvable)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.framework.events import Action, ClusterEvent, Resource
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_name import REASON, new_plugin
from tests.builders import make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import (
    PASS,
    Judgement,
    cycle_over,
    filter_all,
)
from tests.unit.engine.plugins.node_strategies import raw_nodes
from tests.unit.engine.reference import node_name as reference

REJECT: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))


@pytest.mark.parametrize(
    ("node_name", "expected"),
    [
        ("", {"n1": PASS, "n2": PASS}),
        ("n2", {"n1": REJECT, "n2": PASS}),
        ("gone", {"n1": REJECT, "n2": REJECT}),
    ],
    ids=["unset-all-pass", "named-node-only", "named-node-missing"],
)
def test_filter(node_name: str, expected: dict[str, Judgement]) -> None:
    state = cycle_over(make_node("n1").obj(), make_node("n2").obj())
    pod = make_pod("p").node(node_name).build() if node_name else make_pod("p").build()
    assert filter_all(new_plugin(None), pod, state) == expected


def test_pre_filter_narrows_to_the_named_node() -> None:
    state = cycle_over(make_node("n1").obj())
    plugin = new_plugin(None)
    assert plugin.pre_filter(state, make_pod("p").build()).node_names is None
    named = plugin.pre_filter(state, make_pod("p").node("n1").build())
    assert named.status.is_success
    assert named.node_names == frozenset({"n1"})


def test_requeues_on_node_add() -> None:
    (registration,) = new_plugin(None).events_to_register()
    assert registration.event == ClusterEvent(Resource.NODE, Action.ADD)
    assert registration.hint is None


@settings(max_examples=100, deadline=None)
@given(nodes=raw_nodes(max_size=8), wanted=st.sampled_from(("", "n0", "n3", "n9")))
def test_matches_reference(nodes: list[dict[str, Any]], wanted: str) -> None:
    state = cycle_over(*nodes)
    raw_pod = make_pod("p").node(wanted).obj() if wanted else make_pod("p").obj()
    judged = filter_all(new_plugin(None), Pod.from_dict(raw_pod), state)
    assert {name: verdict == PASS for name, verdict in judged.items()} == {
        raw["metadata"]["name"]: reference.node_passes(raw_pod, raw) for raw in nodes
    }
