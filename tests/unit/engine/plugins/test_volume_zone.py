"""VolumeZone: bound volumes' zone and region labels against the nodes', every message, hints."""

from __future__ import annotations

import pytest

from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from berth.engine.plugins.volume_zone import REASON, new_plugin
from tests.builders import make_node
from tests.unit.engine.plugins.node_plugin_support import PASS, Judgement, filter_all, judge
from tests.unit.engine.plugins.volume_objects import (
    Raw,
    claim,
    claim_volume,
    ephemeral_volume,
    hint_of,
    persistent_volume,
    pod_with,
    storage_class,
    storage_cycle,
)

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
CONFLICT: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))
SKIPPED: dict[str, Judgement] = {"*": (Code.SKIP, ())}


def _nodes() -> tuple[Raw, ...]:
    return (
        make_node("a1").zone("a").label(REGION, "r1").obj(),
        make_node("b1").zone("b").label(REGION, "r1").obj(),
        make_node("beta-a").label(BETA_ZONE, "a").obj(),
        make_node("plain").obj(),
    )


def _cycle(*objects: Raw) -> CycleState:
    return storage_cycle(_nodes(), objects=objects)


def _bound_pod(labels: dict[str, str]) -> tuple[Pod, CycleState]:
    state = _cycle(claim("data", volume="pv"), persistent_volume("pv", labels=labels))
    return Pod.from_dict(pod_with("p", claim_volume("data"))), state


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({ZONE: "a"}, {"a1": PASS, "b1": CONFLICT, "beta-a": CONFLICT, "plain": PASS}),
        ({BETA_ZONE: "a"}, {"a1": PASS, "b1": CONFLICT, "beta-a": PASS, "plain": PASS}),
        ({ZONE: "a__b"}, {"a1": PASS, "b1": PASS, "beta-a": CONFLICT, "plain": PASS}),
        ({ZONE: " b "}, {"a1": CONFLICT, "b1": PASS, "beta-a": CONFLICT, "plain": PASS}),
        ({ZONE: "a__"}, None),
        ({REGION: "r1"}, {"a1": PASS, "b1": PASS, "beta-a": CONFLICT, "plain": PASS}),
        ({BETA_REGION: "r2"}, {"a1": CONFLICT, "b1": CONFLICT, "beta-a": CONFLICT, "plain": PASS}),
        (
            {ZONE: "b", REGION: "r1"},
            {"a1": CONFLICT, "b1": PASS, "beta-a": CONFLICT, "plain": PASS},
        ),
        ({"other": "x"}, None),
    ],
    ids=[
        "ga-zone",
        "beta-zone-matches-ga-or-beta-node-label",
        "multi-zone",
        "spaces-trimmed",
        "empty-zone-ignores-the-label",
        "ga-region",
        "beta-region-mismatch",
        "zone-and-region",
        "no-topology-labels",
    ],
)
def test_bound_volume_labels(labels: dict[str, str], expected: dict[str, Judgement] | None) -> None:
    pod, state = _bound_pod(labels)
    assert judge(new_plugin(None), pod, state) == (expected or SKIPPED)


def test_an_unbound_wait_for_first_consumer_claim_is_left_to_volume_binding() -> None:
    state = _cycle(claim("data", storage_class="late"), storage_class("late"))
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    assert judge(new_plugin(None), pod, state) == SKIPPED


def test_ephemeral_volumes_are_not_read() -> None:
    pod = Pod.from_dict(pod_with("p", ephemeral_volume("scratch")))
    assert judge(new_plugin(None), pod, _cycle()) == SKIPPED


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ((), 'persistentvolumeclaim "data" not found'),
        ((claim("data"),), "PersistentVolumeClaim had no pv name and storageClass name"),
        ((claim("data", storage_class="gone"),), 'storageclass.storage.k8s.io "gone" not found'),
        (
            (claim("data", storage_class="now"), storage_class("now", wait=False)),
            "PersistentVolume had no name",
        ),
        ((claim("data", volume="pv"),), 'persistentvolume "pv" not found'),
    ],
    ids=["no-claim", "no-volume-nor-class", "no-class", "immediate-unbound", "no-volume"],
)
def test_pre_filter_messages(objects: tuple[Raw, ...], message: str) -> None:
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    assert judge(new_plugin(None), pod, _cycle(*objects)) == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))
    }


def test_the_beta_class_annotation_wins_over_the_spec_field() -> None:
    annotated = claim("data", storage_class="now")
    annotated["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "late"}
    state = _cycle(annotated, storage_class("now", wait=False), storage_class("late"))
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    assert judge(new_plugin(None), pod, state) == SKIPPED


def _hint(event: ClusterEvent, pod: Raw, old: object, new: object) -> QueueingHint:
    return hint_of(new_plugin(None), event, pod, old, new)


CLASS_ADDED = ClusterEvent(Resource.STORAGE_CLASS, Action.ADD)
CLAIM_CHANGED = ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD | Action.UPDATE)
VOLUME_CHANGED = ClusterEvent(Resource.PERSISTENT_VOLUME, Action.ADD | Action.UPDATE)


def test_registered_events() -> None:
    events = [(r.event, r.hint is None) for r in new_plugin(None).events_to_register()]
    assert events == [
        (CLASS_ADDED, False),
        (ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL), True),
        (CLAIM_CHANGED, False),
        (VOLUME_CHANGED, False),
    ]


@pytest.mark.parametrize(("wait", "hint"), [(True, QueueingHint.QUEUE), (False, QueueingHint.SKIP)])
def test_class_added_hint(wait: bool, hint: QueueingHint) -> None:
    added = StorageClass.from_dict(storage_class("c", wait=wait))
    assert _hint(CLASS_ADDED, pod_with("p", claim_volume("data")), None, added) is hint


@pytest.mark.parametrize(
    ("changed", "hint"),
    [
        (claim("data"), QueueingHint.QUEUE),
        (claim("other"), QueueingHint.SKIP),
        (claim("data", namespace="x"), QueueingHint.SKIP),
    ],
    ids=["the-pods-claim", "another-claim", "other-namespace"],
)
def test_claim_changed_hint(changed: Raw, hint: QueueingHint) -> None:
    claim_object = PersistentVolumeClaim.from_dict(changed)
    assert _hint(CLAIM_CHANGED, pod_with("p", claim_volume("data")), None, claim_object) is hint


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, {ZONE: "a"}, QueueingHint.QUEUE),
        ({ZONE: "a"}, {ZONE: "b"}, QueueingHint.QUEUE),
        ({ZONE: "a"}, {ZONE: "a", "team": "x"}, QueueingHint.SKIP),
        ({ZONE: "a__b"}, {ZONE: "b__a"}, QueueingHint.SKIP),
    ],
    ids=["added", "zone-changed", "other-label", "same-zones-reordered"],
)
def test_volume_changed_hint(
    old: dict[str, str] | None, new: dict[str, str], hint: QueueingHint
) -> None:
    before = (
        None if old is None else PersistentVolume.from_dict(persistent_volume("pv", labels=old))
    )
    after = PersistentVolume.from_dict(persistent_volume("pv", labels=new))
    assert _hint(VOLUME_CHANGED, pod_with("p", claim_volume("data")), before, after) is hint


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        ((claim("data", volume="pv"), persistent_volume("pv", labels={ZONE: "b"})), None),
        ((), 'persistentvolumeclaim "data" not found'),
    ],
    ids=["bound-volume", "missing-claim"],
)
def test_filter_looks_volumes_up_itself_without_pre_filter(
    objects: tuple[Raw, ...], expected: str | None
) -> None:
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    judged = filter_all(new_plugin(None), pod, _cycle(*objects))
    if expected is None:
        assert judged == {"a1": CONFLICT, "b1": PASS, "beta-a": CONFLICT, "plain": PASS}
    else:
        missing = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (expected,))
        assert judged == dict.fromkeys(("a1", "b1", "beta-a", "plain"), missing)
