"""InterPodAffinity args validation, registered events and queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.events import Action, QueueingHint, Resource
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity import InterPodAffinityArgs, new_plugin
from berth.engine.plugins.inter_pod_affinity.queueing import (
    after_assigned_pod_change,
    after_node_change,
    after_target_pod_label_update,
)
from tests.builders import make_pod
from tests.unit.engine.plugins.inter_pod_affinity_helpers import (
    ZONE,
    term,
    web_pod,
    zoned,
)

# ---------------------------------------------------------------------- args


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (None, InterPodAffinityArgs(1, False)),
        ({}, InterPodAffinityArgs(1, False)),
        ({"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        ({"hardPodAffinityWeight": 100}, InterPodAffinityArgs(100, False)),
        ({"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
        (
            {"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
            InterPodAffinityArgs(1, False),
        ),
    ],
    ids=["none", "empty", "weight-0", "weight-100", "ignore-preferred", "typed"],
)
def test_args_defaults_and_valid(args: dict[str, Any] | None, want: InterPodAffinityArgs) -> None:
    assert new_plugin(args).args == want


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight", "-1: not in valid range [0, 100]"),
        (
            {"hardPodAffinityWeight": 101},
            "hardPodAffinityWeight",
            "101: not in valid range [0, 100]",
        ),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "must be an integer, got '5'"),
        ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight", "must be an integer, got True"),
        (
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "ignorePreferredTermsOfExistingPods",
            "must be a boolean, got 'yes'",
        ),
        ({"hardPodWeight": 1}, "hardPodWeight", "unknown field"),
    ],
    ids=["below-range", "above-range", "string", "bool-weight", "string-bool", "unknown"],
)
def test_args_invalid(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as raised:
        new_plugin(args)
    assert raised.value.plugin == "InterPodAffinity"
    assert raised.value.field == field
    assert raised.value.problem == problem


# ---------------------------------------------------------------------- events and hints


def test_events_registered() -> None:
    events = [(e.event.resource, e.event.action) for e in new_plugin(None).events_to_register()]
    assert events == [
        (Resource.ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
        (Resource.TARGET_POD, Action.UPDATE_POD_LABEL),
        (Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
    ]
    assert new_plugin(None).name == "InterPodAffinity"


AFFINE = make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})).build()
ANTI_AFFINE = (
    make_pod("p")
    .labels(app="db")
    .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
    .build()
)
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        (AFFINE, None, web_pod("e", "n1").build(), QUEUE),
        (AFFINE, None, make_pod("e").labels(app="db").node("n1").build(), SKIP),
        (AFFINE, None, make_pod("e").labels(app="web").build(), SKIP),
        (AFFINE, None, make_pod("e").labels(app="web").nominated("n1").build(), QUEUE),
        (AFFINE, make_pod("e").node("n1").build(), web_pod("e", "n1").build(), QUEUE),
        (AFFINE, web_pod("e", "n1").build(), web_pod("e", "n1", tier="x").build(), SKIP),
        (ANTI_AFFINE, web_pod("e", "n1").build(), make_pod("e").node("n1").build(), QUEUE),
        (ANTI_AFFINE, make_pod("e").node("n1").build(), web_pod("e", "n1").build(), SKIP),
        (ANTI_AFFINE, web_pod("e", "n1").build(), None, QUEUE),
        (ANTI_AFFINE, make_pod("e").node("n1").build(), None, SKIP),
        (
            make_pod("p").labels(app="web").build(),
            make_pod("e")
            .node("n1")
            .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
            .build(),
            None,
            QUEUE,
        ),
        (AFFINE, web_pod("e", "n1").build(), None, SKIP),
    ],
    ids=[
        "add-matching",
        "add-not-matching",
        "add-unassigned",
        "add-nominated",
        "update-starts-matching-affinity",
        "update-still-matching",
        "update-stops-matching-anti",
        "update-starts-matching-anti",
        "delete-matching-anti",
        "delete-unrelated",
        "delete-whose-anti-matched-pod",
        "delete-matching-affinity",
    ],
)
def test_assigned_pod_hint(pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert after_assigned_pod_change(pod, old, new) is want


def test_target_pod_label_hint_always_queues() -> None:
    assert after_target_pod_label_update(AFFINE, AFFINE, AFFINE) is QUEUE


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        (AFFINE, None, zoned("n", "a"), QUEUE),
        (AFFINE, None, zoned("n", None), SKIP),
        (AFFINE, zoned("n", None), zoned("n", "a"), QUEUE),
        (AFFINE, zoned("n", "a"), zoned("n", "b"), QUEUE),
        (AFFINE, zoned("n", "a"), zoned("n", "a", rack="r"), SKIP),
        (AFFINE, zoned("n", "a"), zoned("n", None), SKIP),
        (ANTI_AFFINE, None, zoned("n", None), QUEUE),
        (ANTI_AFFINE, zoned("n", "a"), zoned("n", None), QUEUE),
        (ANTI_AFFINE, zoned("n", "a"), zoned("n", "b"), QUEUE),
        (ANTI_AFFINE, zoned("n", None), zoned("n", "a"), SKIP),
        (make_pod("p").build(), None, zoned("n", "a"), SKIP),
    ],
    ids=[
        "affinity-add-with-key",
        "affinity-add-without-key",
        "affinity-gains-key",
        "affinity-changes-domain",
        "affinity-other-label",
        "affinity-loses-key",
        "anti-add",
        "anti-loses-key",
        "anti-changes-domain",
        "anti-gains-key",
        "no-terms",
    ],
)
def test_node_hint(pod: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert after_node_change(pod, old, new) is want
