"""DynamicResources stand-in: pods with DRA ResourceClaims are refused with a clear message, live and
in the default profile; pods without claims skip it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from berth.engine.algorithm import SearchState, Unschedulable, schedule_one
from berth.engine.framework import names
from berth.engine.framework.runtime import build_framework
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources import new_plugin
from berth.engine.registry import IN_TREE
from berth.profiles import DEFAULT_MULTI_POINT, default_profile_config
from tests.builders import make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import Judgement, cycle_over, judge

ONE_CLAIM = (
    "pod uses ResourceClaim(s) [gpu]; this scheduler does not support dynamic resource "
    "allocation (DRA) yet"
)


def _pod(claims: tuple[str, ...]) -> Pod:
    builder = make_pod("p")
    for claim in claims:
        builder.resource_claim(claim)
    return builder.build()


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ((), {"*": (Code.SKIP, ())}),
        (("gpu",), {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ONE_CLAIM,))}),
        (
            ("gpu", "nic"),
            {
                "*": (
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (
                        "pod uses ResourceClaim(s) [gpu nic]; this scheduler does not support "
                        "dynamic resource allocation (DRA) yet",
                    ),
                )
            },
        ),
    ],
    ids=["no-claims-skip", "one-claim-refused", "every-claim-named"],
)
def test_pre_filter(claims: tuple[str, ...], expected: dict[str, Judgement]) -> None:
    state = cycle_over(make_node("n1").obj())
    assert judge(new_plugin(None), _pod(claims), state) == expected


def test_filter_without_pre_filter_refuses_every_node() -> None:
    plugin = new_plugin({"filterTimeout": "10s"})
    state = cycle_over(make_node("n1").obj(), make_node("n2").obj())
    slots = np.asarray([0, 1], dtype=np.intp)
    assert (
        plugin.filter(state, _pod(("gpu",)), slots).codes.tolist()
        == [Code.UNSCHEDULABLE_AND_UNRESOLVABLE] * 2
    )
    assert plugin.filter(state, _pod(()), slots).codes.tolist() == [0, 0]
    assert plugin.name == "DynamicResources"
    assert plugin.events_to_register() == []


def test_registered_under_upstreams_name_after_inter_pod_affinity() -> None:
    assert names.DYNAMIC_RESOURCES in IN_TREE
    order = [ref.name for ref in DEFAULT_MULTI_POINT.enabled]
    position = order.index(names.DYNAMIC_RESOURCES)
    assert order[position - 1 : position + 2] == [
        names.INTER_POD_AFFINITY,
        names.DYNAMIC_RESOURCES,
        names.DEFAULT_PREEMPTION,
    ]


def test_the_default_profile_refuses_a_claim_pod_that_would_otherwise_fit() -> None:
    framework = build_framework(default_profile_config())
    state = cycle_over(make_node("n1").obj())
    decision = schedule_one(
        framework, state.cluster, _pod(("gpu",)), search=SearchState(), rng=random.Random(0)
    )
    assert isinstance(decision, Unschedulable)
    assert decision.message == (
        f"0/1 nodes are available: {ONE_CLAIM}. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
