"""VolumeBindingArgs decoding and validation, and the queueing hints of every registered event."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import new_plugin
from berth.engine.plugins.volume_binding.args import VolumeBindingArgs, parse_args
from tests.builders import make_pod
from tests.storage_builders import (
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pvc,
)

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


def test_defaults_are_kube_schedulers() -> None:
    assert parse_args(None) == VolumeBindingArgs(600, ((0, 10), (100, 0)))
    assert parse_args({"bindTimeoutSeconds": 0, "shape": []}) == VolumeBindingArgs(
        0, ((0, 10), (100, 0))
    )
    custom = parse_args({"shape": [{"utilization": 50, "score": 3}]})
    assert custom.shape == ((50, 3),)


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"bindTimeoutSeconds": -1}, "bindTimeoutSeconds", "should not be a negative value"),
        ({"bindTimeoutSeconds": "10s"}, "bindTimeoutSeconds", "expected an integer"),
        ({"bindTimeout": 5}, "bindTimeout", 'unknown field "bindTimeout"'),
        (
            {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            "shape[1].utilization",
            "values must be sorted in increasing order",
        ),
        ({"shape": [{"utilization": 101, "score": 1}]}, "shape[0].utilization", "[0, 100]"),
        ({"shape": [{"utilization": 1, "score": 11}]}, "shape[0].score", "[0, 10]"),
    ],
    ids=[
        "negative-timeout",
        "timeout-not-integer",
        "unknown-field",
        "unsorted",
        "util-range",
        "score-range",
    ],
)
def test_invalid_args_name_the_field(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as raised:
        new_plugin(args)
    assert raised.value.field == field
    assert problem in str(raised.value)


def _hint(resource: Resource, action: Action, pod: Pod, old: object, new: object) -> QueueingHint:
    happening = ClusterEvent(resource, action)
    for registered in new_plugin(None).events_to_register():
        if registered.event.matches(happening):
            return QUEUE if registered.hint is None else registered.hint(pod, old, new)
    raise AssertionError(f"{resource} {action} is not registered")


POD = make_pod("p").pvc("data").build()
CSI_POD = (
    make_pod("p")
    .set("spec.volumes", [{"name": "inline", "csi": {"driver": "d.example.com"}}])
    .build()
)


@pytest.mark.parametrize(
    ("resource", "action", "pod", "old", "new", "hint"),
    [
        (Resource.STORAGE_CLASS, Action.ADD, POD, None, make_class("c").build(), QUEUE),
        (
            Resource.STORAGE_CLASS,
            Action.UPDATE,
            POD,
            make_class("c").build(),
            make_class("c").allowed_topology("zone", "a").build(),
            QUEUE,
        ),
        (
            Resource.STORAGE_CLASS,
            Action.UPDATE,
            POD,
            make_class("c").build(),
            make_class("c").version("2").build(),
            SKIP,
        ),
        (Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD, POD, None, make_pvc("data").build(), QUEUE),
        (
            Resource.PERSISTENT_VOLUME_CLAIM,
            Action.UPDATE,
            POD,
            None,
            make_pvc("logs").build(),
            SKIP,
        ),
        (
            Resource.PERSISTENT_VOLUME_CLAIM,
            Action.ADD,
            POD,
            None,
            make_pvc("data", namespace="other").build(),
            SKIP,
        ),
        (Resource.PERSISTENT_VOLUME, Action.ADD, POD, None, None, QUEUE),
        (Resource.PERSISTENT_VOLUME, Action.UPDATE, POD, None, None, QUEUE),
        (Resource.NODE, Action.ADD, POD, None, None, QUEUE),
        (Resource.NODE, Action.UPDATE_NODE_LABEL, POD, None, None, QUEUE),
        (Resource.CSI_NODE, Action.ADD, POD, None, make_csi_node("n").build(), QUEUE),
        (
            Resource.CSI_NODE,
            Action.UPDATE,
            POD,
            make_csi_node("n").build(),
            make_csi_node("n")
            .annotation("storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/gce-pd")
            .build(),
            QUEUE,
        ),
        (
            Resource.CSI_NODE,
            Action.UPDATE,
            POD,
            make_csi_node("n").build(),
            make_csi_node("n").driver("d").build(),
            SKIP,
        ),
        (
            Resource.CSI_DRIVER,
            Action.UPDATE,
            CSI_POD,
            make_csi_driver("d.example.com").storage_capacity().build(),
            make_csi_driver("d.example.com").build(),
            QUEUE,
        ),
        (
            Resource.CSI_DRIVER,
            Action.UPDATE,
            POD,
            make_csi_driver("d.example.com").storage_capacity().build(),
            make_csi_driver("d.example.com").build(),
            SKIP,
        ),
        (
            Resource.CSI_STORAGE_CAPACITY,
            Action.ADD,
            POD,
            None,
            make_capacity("k", "c").build(),
            QUEUE,
        ),
        (
            Resource.CSI_STORAGE_CAPACITY,
            Action.UPDATE,
            POD,
            make_capacity("k", "c").capacity("1Gi").build(),
            make_capacity("k", "c").capacity("2Gi").build(),
            QUEUE,
        ),
        (
            Resource.CSI_STORAGE_CAPACITY,
            Action.UPDATE,
            POD,
            make_capacity("k", "c").capacity("2Gi").build(),
            make_capacity("k", "c").capacity("9Gi").maximum_volume_size("1Gi").build(),
            SKIP,
        ),
    ],
    ids=[
        "class-added",
        "class-topologies-changed",
        "class-otherwise-updated",
        "own-claim-added",
        "other-claim-updated",
        "claim-in-other-namespace",
        "volume-added",
        "volume-updated",
        "node-added",
        "node-relabelled",
        "csinode-added",
        "csinode-migration-changed",
        "csinode-drivers-changed",
        "inline-driver-stops-tracking-capacity",
        "driver-of-no-inline-volume",
        "capacity-added",
        "capacity-grew",
        "volume-limit-shrank",
    ],
)
def test_hints(
    resource: Resource, action: Action, pod: Pod, old: object, new: object, hint: QueueingHint
) -> None:
    assert _hint(resource, action, pod, old, new) is hint


def test_csi_driver_additions_and_claim_deletions_are_not_registered() -> None:
    registered = new_plugin(None).events_to_register()
    for resource, action in (
        (Resource.CSI_DRIVER, Action.ADD),
        (Resource.PERSISTENT_VOLUME_CLAIM, Action.DELETE),
        (Resource.NODE, Action.UPDATE_NODE_TAINT),
    ):
        assert not any(r.event.matches(ClusterEvent(resource, action)) for r in registered)
