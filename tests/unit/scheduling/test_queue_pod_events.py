"""How pod updates read as cluster events, event labels, and event matching."""

from __future__ import annotations

import pytest

from berth.engine.framework.events import UNSCHEDULABLE_TIMEOUT, Action, ClusterEvent, Resource
from berth.engine.model.pod import Pod
from berth.scheduling.pod_events import event_label, event_matches, pod_change_events
from tests.builders import make_pod

BASE = make_pod("a").req(cpu="500m", memory="1Gi").gate("g").build()


def _with(
    *,
    cpu: str = "500m",
    gate: bool = True,
    labels: dict[str, str] | None = None,
    toleration: bool = False,
    node: bool = False,
) -> Pod:
    """BASE with the given changes."""
    builder = make_pod("a").uid(BASE.uid).req(cpu=cpu, memory="1Gi").labels(**(labels or {}))
    if gate:
        builder.gate("g")
    if toleration:
        builder.toleration(key="k", operator="Exists")
    if node:
        builder.node("n1")
    return builder.build()


@pytest.mark.parametrize(
    ("new", "target", "expected"),
    [
        (_with(labels={"x": "y"}), True, [(Resource.TARGET_POD, Action.UPDATE_POD_LABEL)]),
        (_with(cpu="250m"), True, [(Resource.TARGET_POD, Action.UPDATE_POD_SCALE_DOWN)]),
        (_with(cpu="1"), True, [(Resource.TARGET_POD, Action.UPDATE)]),
        (
            _with(gate=False),
            True,
            [(Resource.TARGET_POD, Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)],
        ),
        (
            _with(toleration=True),
            False,
            [(Resource.UNSCHEDULED_POD, Action.UPDATE_POD_TOLERATIONS)],
        ),
        (
            _with(labels={"x": "y"}, toleration=True),
            True,
            [
                (Resource.TARGET_POD, Action.UPDATE_POD_LABEL),
                (Resource.TARGET_POD, Action.UPDATE_POD_TOLERATIONS),
            ],
        ),
        (_with(node=True), True, [(Resource.ASSIGNED_POD, Action.UPDATE)]),
    ],
    ids=[
        "labels",
        "scale-down",
        "scale-up-is-general",
        "gates-gone",
        "tolerations",
        "two",
        "bound",
    ],
)
def test_pod_change_events(new: Pod, target: bool, expected: list[tuple[Resource, Action]]) -> None:
    events = pod_change_events(BASE, new, is_target_pod=target)
    assert [(e.resource, e.action) for e in events] == expected


@pytest.mark.parametrize(
    ("event", "label"),
    [
        (ClusterEvent(Resource.NODE, Action.ADD), "NodeAdd"),
        (ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE), "AssignedPodDelete"),
        (ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_LABEL), "TargetPodUpdatePodLabel"),
        (ClusterEvent(Resource.UNSCHEDULED_POD, Action.UPDATE), "UnscheduledPodUpdate"),
        (UNSCHEDULABLE_TIMEOUT, "UnschedulableTimeout"),
    ],
)
def test_event_label(event: ClusterEvent, label: str) -> None:
    assert event_label(event) == label


@pytest.mark.parametrize(
    ("registered", "incoming", "expected"),
    [
        (
            ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
            ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL),
            True,
        ),
        (
            ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL),
            ClusterEvent(Resource.NODE, Action.UPDATE),
            False,
        ),
        (
            ClusterEvent(Resource.NODE, Action.UPDATE),
            ClusterEvent(Resource.NODE, Action.UPDATE),
            True,
        ),
        (
            ClusterEvent(Resource.POD, Action.DELETE),
            ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE),
            True,
        ),
        (
            ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE),
            ClusterEvent(Resource.UNSCHEDULED_POD, Action.DELETE),
            False,
        ),
        (
            ClusterEvent(Resource.WILDCARD, Action.ALL),
            ClusterEvent(Resource.NODE, Action.ADD),
            True,
        ),
    ],
    ids=[
        "flavour",
        "general-update-vs-flavour",
        "general-vs-general",
        "pod-covers-assigned",
        "resource-differs",
        "wildcard",
    ],
)
def test_event_matches(registered: ClusterEvent, incoming: ClusterEvent, expected: bool) -> None:
    assert event_matches(registered, incoming) is expected
