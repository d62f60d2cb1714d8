"""NodeDeclaredFeatures: pods needing a kubelet feature go only to nodes declaring it."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.node_features import (
    BIND_MOUNT_OPTIONS,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
)
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_declared_features import REASON, new_plugin
from berth.profiles.defaults import DEFAULT_MULTI_POINT
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import PASS, Judgement, cycle_over, judge

REJECT: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))
SKIP: Judgement = (Code.SKIP, ())

RESTART_ALL_RULE = {
    "action": "RestartAllContainers",
    "exitCodes": {"operator": "In", "values": [42]},
}


def restarting_all(section: str = "containers") -> PodBuilder:
    pod = make_pod("p").container()
    if section == "initContainers":
        pod = pod.init_container()
    containers = pod.obj()["spec"][section]
    containers[0]["restartPolicy"] = "Never"
    containers[0]["restartPolicyRules"] = [RESTART_ALL_RULE]
    return pod.set(f"spec.{section}", containers)


def with_bind_mount_options(section: str) -> PodBuilder:
    mount = {"name": "data", "mountPath": "/data", "bindMountOptions": ["ro"]}
    container = {"name": "c", "image": "busybox", "volumeMounts": [mount]}
    return make_pod("p").container().set(f"spec.{section}", [container])


@pytest.mark.parametrize(
    ("pod", "required"),
    [
        (make_pod("p").container(), frozenset()),
        (restarting_all(), {RESTART_ALL_CONTAINERS}),
        (restarting_all("initContainers"), {RESTART_ALL_CONTAINERS}),
        (
            make_pod("p")
            .container()
            .set(
                "spec.containers",
                [{"name": "c", "image": "x", "restartPolicyRules": [{"action": "Restart"}]}],
            ),
            frozenset(),
        ),
        (
            make_pod("p").container().set("spec.hostNetwork", True).set("spec.hostUsers", False),
            {USER_NAMESPACES_HOST_NETWORK},
        ),
        (make_pod("p").container().set("spec.hostNetwork", True), frozenset()),
        (make_pod("p").container().set("spec.hostUsers", False), frozenset()),
        (with_bind_mount_options("containers"), {BIND_MOUNT_OPTIONS}),
        (with_bind_mount_options("initContainers"), {BIND_MOUNT_OPTIONS}),
        (with_bind_mount_options("ephemeralContainers"), {BIND_MOUNT_OPTIONS}),
    ],
    ids=[
        "plain",
        "restart-all-container",
        "restart-all-init-container",
        "restart-container-only",
        "host-network-user-namespace",
        "host-network-host-users",
        "user-namespace-pod-network",
        "bind-mount-options",
        "bind-mount-options-init",
        "bind-mount-options-ephemeral",
    ],
)
def test_required_features_inferred_from_spec(pod: PodBuilder, required: set[str]) -> None:
    assert pod.build().required_node_features == frozenset(required)


def test_malformed_rule_names_pod_and_field() -> None:
    raw = make_pod("p").container().obj()
    raw["spec"]["containers"][0]["restartPolicyRules"] = "always"
    with pytest.raises(InvalidObjectError, match=r"spec\.containers\[0\]\.restartPolicyRules"):
        Pod.from_dict(raw)


def test_pod_needing_nothing_skips() -> None:
    state = cycle_over(make_node("n").obj())
    assert judge(new_plugin(None), make_pod("p").container().build(), state) == {"*": SKIP}


def test_only_nodes_declaring_every_needed_feature_pass() -> None:
    state = cycle_over(
        make_node("old").obj(),
        make_node("other").declared_features(BIND_MOUNT_OPTIONS).obj(),
        make_node("new").declared_features(RESTART_ALL_CONTAINERS, "SomeFutureFeature").obj(),
    )
    assert judge(new_plugin(None), restarting_all().build(), state) == {
        "old": REJECT,
        "other": REJECT,
        "new": PASS,
    }


def _hint(index: int, old: Any, new: Any) -> QueueingHint:
    registration = new_plugin(None).events_to_register()[index]
    assert registration.hint is not None
    return registration.hint(restarting_all().build(), old, new)


def test_registers_node_add_and_declared_feature_change_and_own_update() -> None:
    node_event, pod_event = (r.event for r in new_plugin(None).events_to_register())
    assert node_event.matches(ClusterEvent(Resource.NODE, Action.ADD))
    assert node_event.matches(ClusterEvent(Resource.NODE, Action.UPDATE_NODE_DECLARED_FEATURE))
    assert not node_event.matches(ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL))
    assert pod_event == ClusterEvent(Resource.TARGET_POD, Action.UPDATE)


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, (), QueueingHint.QUEUE),
        ((), (RESTART_ALL_CONTAINERS,), QueueingHint.QUEUE),
        ((RESTART_ALL_CONTAINERS,), (), QueueingHint.QUEUE),
        ((BIND_MOUNT_OPTIONS,), (BIND_MOUNT_OPTIONS,), QueueingHint.SKIP),
    ],
    ids=["add", "declared", "withdrawn", "unchanged"],
)
def test_node_hint(old: tuple[str, ...] | None, new: tuple[str, ...], hint: QueueingHint) -> None:
    old_node = None if old is None else make_node("n").declared_features(*old).build()
    assert _hint(0, old_node, make_node("n").declared_features(*new).build()) is hint


def test_target_pod_hint_queues_only_when_requirements_change() -> None:
    plain, needing = make_pod("p").container().build(), restarting_all().build()
    assert _hint(1, plain, plain) is QueueingHint.SKIP
    assert _hint(1, needing, plain) is QueueingHint.QUEUE


def test_default_profile_runs_it_last_like_kube_scheduler() -> None:
    assert DEFAULT_MULTI_POINT.enabled[-1].name == "NodeDeclaredFeatures"
    assert DEFAULT_MULTI_POINT.enabled[-2].name == "DefaultBinder"
