"""VolumeBinding stand-in: pods with PersistentVolumeClaims are refused with a clear message; others skip it."""

from __future__ import annotations

import numpy as np
import pytest

from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_support import new_plugin
from tests.builders import make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import Judgement, cycle_over, judge

MESSAGE_TWO = (
    "pod uses PersistentVolumeClaim(s) [data p-scratch], which this scheduler does not support yet"
)


def _pod(kind: str) -> Pod:
    builder = make_pod("p")
    if kind == "pvc":
        builder.pvc("data")
    if kind == "pvc+ephemeral":
        builder.pvc("data").set(
            "spec.volumes",
            [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
            ],
        )
    if kind == "emptydir":
        builder.set("spec.volumes", [{"name": "tmp", "emptyDir": {}}])
    return builder.build()


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("none", {"*": (Code.SKIP, ())}),
        ("emptydir", {"*": (Code.SKIP, ())}),
        (
            "pvc",
            {
                "*": (
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (
                        "pod uses PersistentVolumeClaim(s) [data], "
                        "which this scheduler does not support yet",
                    ),
                )
            },
        ),
        ("pvc+ephemeral", {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MESSAGE_TWO,))}),
    ],
    ids=["no-volumes-skip", "emptydir-skip", "pvc-refused", "generic-ephemeral-named-pod-volume"],
)
def test_pre_filter(kind: str, expected: dict[str, Judgement]) -> None:
    state = cycle_over(make_node("n1").obj())
    assert judge(new_plugin(None), _pod(kind), state) == expected


def test_filter_without_pre_filter_refuses_every_node() -> None:
    plugin = new_plugin({"bindTimeoutSeconds": 600})
    state = cycle_over(make_node("n1").obj(), make_node("n2").obj())
    slots = np.asarray([0, 1], dtype=np.intp)
    claimed = plugin.filter(state, _pod("pvc"), slots)
    assert claimed.codes.tolist() == [Code.UNSCHEDULABLE_AND_UNRESOLVABLE] * 2
    assert plugin.filter(state, _pod("none"), slots).codes.tolist() == [0, 0]
    assert plugin.name == "VolumeBinding"
    assert plugin.events_to_register() == []
