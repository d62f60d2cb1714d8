"""NodePorts: PreFilter skips port-less pods; Filter rejects nodes whose pods hold a conflicting host port."""

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
from berth.engine.plugins.node_ports import REASON, new_plugin
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import (
    PASS,
    Judgement,
    all_slots,
    cycle_over,
    judge,
    names_of,
)
from tests.unit.engine.reference import node_ports as reference

TAKEN: Judgement = (Code.UNSCHEDULABLE, (REASON,))


def _existing(port: int, protocol: str = "TCP", host_ip: str = "") -> dict[str, Any]:
    return make_pod("holder").node("busy").host_port(port, protocol, host_ip).obj()


@pytest.mark.parametrize(
    ("existing", "pod", "busy_verdict"),
    [
        (_existing(80), make_pod("p").host_port(80), TAKEN),
        (_existing(80), make_pod("p").host_port(81), PASS),
        (_existing(80, "UDP"), make_pod("p").host_port(80), PASS),
        (_existing(80, "UDP"), make_pod("p").host_port(80, "UDP"), TAKEN),
        (_existing(80, host_ip="10.0.0.1"), make_pod("p").host_port(80, host_ip="10.0.0.2"), PASS),
        (_existing(80, host_ip="10.0.0.1"), make_pod("p").host_port(80, host_ip="10.0.0.1"), TAKEN),
        (_existing(80, host_ip="10.0.0.1"), make_pod("p").host_port(80), TAKEN),
        (_existing(80), make_pod("p").host_port(80, host_ip="10.0.0.2"), TAKEN),
        (_existing(80, host_ip="0.0.0.0"), make_pod("p").host_port(80, host_ip="10.0.0.2"), TAKEN),
        (
            make_pod("holder").node("busy").init_container(sidecar=True).obj(),
            make_pod("p").host_port(80),
            PASS,
        ),
    ],
    ids=[
        "same-port",
        "other-port",
        "other-protocol",
        "same-udp",
        "different-ips",
        "same-ip",
        "wanted-wildcard",
        "used-wildcard-empty",
        "used-wildcard-explicit",
        "no-ports-in-use",
    ],
)
def test_filter(existing: dict[str, Any], pod: PodBuilder, busy_verdict: Judgement) -> None:
    state = cycle_over(make_node("busy").obj(), make_node("idle").obj(), pods=(existing,))
    assert judge(new_plugin(None), pod.build(), state) == {"busy": busy_verdict, "idle": PASS}


def test_sidecar_ports_count_on_both_sides() -> None:
    sidecar_holder = make_pod("holder").node("busy").init_container(sidecar=True).obj()
    sidecar_holder["spec"]["initContainers"][0]["ports"] = [{"containerPort": 9, "hostPort": 9}]
    wanting = make_pod("p").init_container(sidecar=True).obj()
    wanting["spec"]["initContainers"][0]["ports"] = [{"containerPort": 9, "hostPort": 9}]
    state = cycle_over(make_node("busy").obj(), pods=(sidecar_holder,))
    assert judge(new_plugin(None), Pod.from_dict(wanting), state) == {"busy": TAKEN}


def test_pre_filter_skips_pods_without_host_ports() -> None:
    state = cycle_over(make_node("n").obj())
    assert judge(new_plugin(None), make_pod("p").build(), state) == {"*": (Code.SKIP, ())}


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        (make_pod("d").node("n").host_port(80), QueueingHint.QUEUE),
        (make_pod("d").node("n").host_port(81), QueueingHint.SKIP),
        (make_pod("d").node("n"), QueueingHint.SKIP),
        (make_pod("d").host_port(80), QueueingHint.SKIP),
        (make_pod("d").nominated("n").host_port(80), QueueingHint.QUEUE),
    ],
    ids=["frees-our-port", "frees-other-port", "no-ports", "never-placed", "nominated"],
)
def test_deleted_pod_hint(deleted: PodBuilder, hint: QueueingHint) -> None:
    registration, node_add = new_plugin(None).events_to_register()
    assert registration.event == ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE)
    assert node_add.event == ClusterEvent(Resource.NODE, Action.ADD)
    assert node_add.hint is None
    assert registration.hint is not None
    pod = make_pod("p").host_port(80).build()
    assert registration.hint(pod, deleted.build(), None) is hint


port_st = st.tuples(
    st.sampled_from((80, 443)),
    st.sampled_from(("TCP", "UDP")),
    st.sampled_from(("", "0.0.0.0", "10.0.0.1", "10.0.0.2")),
)


def _with_ports(name: str, ports: list[tuple[int, str, str]]) -> PodBuilder:
    builder = make_pod(name)
    for port, protocol, ip in ports:
        builder.host_port(port, protocol, ip)
    return builder


@settings(max_examples=150, deadline=None)
@given(
    placed=st.lists(st.tuples(st.integers(0, 4), st.lists(port_st, max_size=2)), max_size=8),
    wanted=st.lists(port_st, min_size=1, max_size=3),
    removed=st.lists(st.integers(0, 7), max_size=3),
)
def test_matches_reference(
    placed: list[tuple[int, list[tuple[int, str, str]]]],
    wanted: list[tuple[int, str, str]],
    removed: list[int],
) -> None:
    cluster = ClusterState(capacity=2)
    for index in range(5):
        cluster.upsert_node(Node.from_dict(make_node(f"n{index}").obj()))
    raw_pods = [
        _with_ports(f"p{i}", ports).node(f"n{node}").uid(f"u{i}").obj()
        for i, (node, ports) in enumerate(placed)
    ]
    for raw in raw_pods:
        cluster.add_pod(Pod.from_dict(raw))
    for index in removed:
        cluster.remove_pod(f"u{index}")
    remaining = [raw for raw in raw_pods if int(raw["metadata"]["uid"][1:]) not in removed]
    raw_pod = _with_ports("incoming", wanted).obj()
    state = CycleState(cluster)
    plugin = new_plugin(None)
    assert plugin.pre_filter(state, Pod.from_dict(raw_pod)).status.is_success
    slots = all_slots(state)
    verdicts = plugin.filter(state, Pod.from_dict(raw_pod), slots)
    expected = [
        reference.node_passes(raw_pod, [p for p in remaining if p["spec"]["nodeName"] == name])
        for name in names_of(state, slots)
    ]
    assert (verdicts.codes == 0).tolist() == expected
