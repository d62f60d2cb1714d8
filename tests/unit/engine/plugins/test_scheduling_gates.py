"""SchedulingGates: gated pods are held at PreEnqueue with Go's list formatting; only their own ungating requeues them."""

from __future__ import annotations

import pytest

from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.plugins.scheduling_gates import SchedulingGates, new_plugin
from tests.builders import make_pod


@pytest.mark.parametrize(
    ("gates", "code", "message"),
    [
        ((), Code.SUCCESS, ""),
        (
            ("example.com/a",),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [example.com/a]",
        ),
        (("a", "b"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [a b]"),
    ],
    ids=["no-gates-pass", "one-gate", "two-gates-space-separated"],
)
def test_pre_enqueue(gates: tuple[str, ...], code: Code, message: str) -> None:
    builder = make_pod("p")
    for gate in gates:
        builder.gate(gate)
    status = new_plugin(None).pre_enqueue(builder.build())
    assert status.code is code
    assert status.message == message


def test_registers_pod_update_that_removes_gates() -> None:
    (registration,) = SchedulingGates().events_to_register()
    assert registration.event == ClusterEvent(
        Resource.POD, Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    )
    assert registration.event.matches(
        ClusterEvent(Resource.UNSCHEDULED_POD, Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    )


@pytest.mark.parametrize(
    ("same_pod", "still_gated", "hint"),
    [
        (True, False, QueueingHint.QUEUE),
        (True, True, QueueingHint.SKIP),
        (False, False, QueueingHint.SKIP),
    ],
    ids=["own-gates-removed", "own-still-gated", "other-pod-ungated"],
)
def test_hint(same_pod: bool, still_gated: bool, hint: QueueingHint) -> None:
    gated = make_pod("p").uid("u1").gate("g").build()
    updated = make_pod("p" if same_pod else "q").uid("u1" if same_pod else "u2")
    if still_gated:
        updated.gate("other")
    (registration,) = SchedulingGates().events_to_register()
    assert registration.hint is not None
    assert registration.hint(gated, gated, updated.build()) is hint


def test_args_are_ignored() -> None:
    assert new_plugin({"anything": 1}).name == "SchedulingGates"
