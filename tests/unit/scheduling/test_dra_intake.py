"""DRA objects from the watch reach the cache and become the cluster events DynamicResources
registers for, labelled as kube-scheduler labels them."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from berth.engine.cluster.dra import DraObjects
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.taint_rules import DeviceTaintRule
from berth.engine.framework.events import Action, ClusterEvent, Resource
from berth.engine.model.pod import Pod
from berth.scheduling.cluster_events import watched_event
from berth.scheduling.loop import Scheduler
from berth.scheduling.object_intake import DraIntake
from berth.scheduling.pod_events import pod_change_events
from tests.fakes import FakeBinder, FakeReporter
from tests.unit.engine.dra.dra_builders import gpus, make_class, make_slice

Event = tuple[ClusterEvent, object, object]


def make_intake() -> tuple[DraIntake, DraObjects, list[Event]]:
    dra = DraObjects()
    events: list[Event] = []
    intake = DraIntake(dra=dra, notify=lambda event, old, new: events.append((event, old, new)))
    return intake, dra, events


def _claim(version: str) -> ResourceClaim:
    return ResourceClaim.from_dict(
        {
            "metadata": {"name": "c", "namespace": "ns", "resourceVersion": version},
            "spec": {"devices": {"requests": []}},
        }
    )


def _rule(device: str) -> DeviceTaintRule:
    return DeviceTaintRule.from_dict(
        {
            "metadata": {"name": "r"},
            "spec": {
                "deviceSelector": {"device": device},
                "taint": {"key": "broken", "effect": "NoSchedule"},
            },
        }
    )


def test_claim_changes_are_resource_claim_events() -> None:
    intake, dra, events = make_intake()
    first, second = _claim("1"), _claim("2")
    intake.on_object(first)
    intake.on_object(second)
    intake.on_deleted("ResourceClaim", "ns/c")
    assert events == [
        (
            ClusterEvent(Resource.RESOURCE_CLAIM, Action.ADD, "resource.k8s.io/ResourceClaimAdd"),
            None,
            first,
        ),
        (
            ClusterEvent(
                Resource.RESOURCE_CLAIM, Action.UPDATE, "resource.k8s.io/ResourceClaimUpdate"
            ),
            first,
            second,
        ),
        (
            ClusterEvent(
                Resource.RESOURCE_CLAIM, Action.DELETE, "resource.k8s.io/ResourceClaimDelete"
            ),
            second,
            None,
        ),
    ]
    assert dra.claim("ns", "c") is None


def test_classes_and_slices_are_their_own_events() -> None:
    intake, _, events = make_intake()
    intake.on_object(make_class("gpu"))
    intake.on_object(make_slice("s", gpus(1)))
    assert [event.label for event, _, _ in events] == [
        "resource.k8s.io/DeviceClassAdd",
        "resource.k8s.io/ResourceSliceAdd",
    ]
    assert ClusterEvent(Resource.RESOURCE_SLICE, Action.ADD | Action.UPDATE).matches(
        watched_event("ResourceSlice", Action.UPDATE)
    )


def test_a_taint_rule_change_is_an_update_of_each_slice_it_retaints() -> None:
    intake, _, events = make_intake()
    tainted = make_slice("tainted", gpus(2))
    untouched = make_slice("untouched", [{"name": "nic-0"}], node="node-b")
    intake.on_object(tainted)
    intake.on_object(untouched)
    events.clear()

    intake.on_object(_rule("gpu-1"))
    ((event, old, new),) = events
    assert event == watched_event("ResourceSlice", Action.UPDATE)
    assert old == tainted
    assert isinstance(new, type(tainted))
    assert [len(device.taints) for device in new.devices] == [0, 1]

    events.clear()
    intake.on_object(dataclasses.replace(_rule("gpu-1"), resource_version="2"))
    assert events == []  # the same taint on the same devices: nothing a pod could notice

    intake.on_deleted("DeviceTaintRule", "r")
    ((event, old, new),) = events
    assert event.label == "resource.k8s.io/ResourceSliceUpdate"
    assert new == tainted


def test_a_listing_of_taint_rules_converges_them() -> None:
    intake, dra, events = make_intake()
    intake.on_object(make_slice("s", gpus(1)))
    intake.on_object(_rule("gpu-0"))
    events.clear()
    intake.begin_listing("DeviceTaintRule")
    assert intake.reconcile("DeviceTaintRule", []) == 1
    assert dra.held("DeviceTaintRule") == {}
    assert [event.label for event, _, _ in events] == ["resource.k8s.io/ResourceSliceUpdate"]


def _pod(statuses: list[dict[str, Any]]) -> Pod:
    return Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
            "status": {"resourceClaimStatuses": statuses},
        }
    )


def test_a_generated_claim_name_in_the_pod_status_is_its_own_pod_update() -> None:
    before = _pod([])
    after = _pod([{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}])
    (event,) = pod_change_events(before, after, is_target_pod=True)
    assert event == ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    assert [e.action for e in pod_change_events(after, after, is_target_pod=True)] == [
        Action.UPDATE
    ]


def test_the_watch_bringing_a_version_the_scheduler_assumed_is_not_reported_again() -> None:
    intake, dra, events = make_intake()
    intake.on_object(_claim("5"))
    written = _claim("6")
    dra.assume_claim(written)  # what PreBind's write returned, reported by the cache itself
    events.clear()
    intake.on_object(written)
    assert events == []
    assert not dra.is_assumed("ns", "c")
    intake.on_object(_claim("7"))
    assert [event.label for event, _, _ in events] == ["resource.k8s.io/ResourceClaimUpdate"]


def test_the_live_scheduler_hears_assumption_changes_as_claim_updates() -> None:
    scheduler = Scheduler(binder=FakeBinder(), reporter=FakeReporter(), rng=random.Random(0))
    heard: list[Event] = []
    scheduler.intake.notify = lambda event, old, new, **_: heard.append((event, old, new))  # type: ignore[method-assign]
    scheduler.on_dra_object(_claim("5"))
    heard.clear()
    scheduler.cache.cluster.dra.assume_claim(_claim("6"))
    assert [(event.label, new) for event, _, new in heard] == [
        ("resource.k8s.io/ResourceClaimUpdate", _claim("6"))
    ]
