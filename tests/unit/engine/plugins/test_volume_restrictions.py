"""VolumeRestrictions: in-line disks two pods may not share, ReadWriteOncePod claims in use, hints."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolumeClaim
from berth.engine.plugins.volume_restrictions import (
    REASON_DISK_CONFLICT,
    REASON_RWOP_CONFLICT,
    new_plugin,
)
from tests.builders import make_node
from tests.unit.engine.plugins.node_plugin_support import PASS, Judgement, judge
from tests.unit.engine.plugins.preemption_fakes import post_filter_result, run_preemption
from tests.unit.engine.plugins.volume_objects import (
    Raw,
    claim,
    claim_volume,
    hint_of,
    inline,
    pod_with,
    storage_cluster,
    storage_cycle,
)

DISK: Judgement = (Code.UNSCHEDULABLE, (REASON_DISK_CONFLICT,))
RWOP: Judgement = (Code.UNSCHEDULABLE, (REASON_RWOP_CONFLICT,))
SKIPPED: dict[str, Judgement] = {"*": (Code.SKIP, ())}


def _two_nodes(*, pods: tuple[Raw, ...] = (), objects: tuple[Raw, ...] = ()) -> CycleState:
    return storage_cycle(
        (make_node("busy").obj(), make_node("idle").obj()), pods=pods, objects=objects
    )


def _gce(pd: str, read_only: bool = False) -> Raw:
    return inline("disk", "gcePersistentDisk", pdName=pd, readOnly=read_only)


def _ebs(volume_id: str, read_only: bool = False) -> Raw:
    return inline("disk", "awsElasticBlockStore", volumeID=volume_id, readOnly=read_only)


def _iscsi(iqn: str, portal: str = "10.0.0.1:3260", read_only: bool = False) -> Raw:
    return inline("disk", "iscsi", targetPortal=portal, iqn=iqn, lun=0, readOnly=read_only)


def _rbd(
    image: str, monitors: tuple[str, ...] = ("m1",), pool: str = "", read_only: bool = False
) -> Raw:
    source: dict[str, Any] = {"monitors": list(monitors), "image": image, "readOnly": read_only}
    if pool:
        source["pool"] = pool
    return inline("disk", "rbd", **source)


@pytest.mark.parametrize(
    ("placed", "wanted", "busy"),
    [
        (_gce("a"), _gce("a"), DISK),
        (_gce("a", read_only=True), _gce("a", read_only=True), PASS),
        (_gce("a", read_only=True), _gce("a"), DISK),
        (_gce("a"), _gce("b"), PASS),
        (_ebs("vol-1", read_only=True), _ebs("vol-1", read_only=True), DISK),
        (_ebs("vol-1"), _ebs("vol-2"), PASS),
        (_iscsi("iqn.a", portal="p1"), _iscsi("iqn.a", portal="p2"), DISK),
        (_iscsi("iqn.a", read_only=True), _iscsi("iqn.a", read_only=True), PASS),
        (_rbd("img", ("m1", "m2")), _rbd("img", ("m2", "m3")), DISK),
        (_rbd("img", ("m1",)), _rbd("img", ("m2",)), PASS),
        (_rbd("img", pool="rbd"), _rbd("img"), DISK),
        (_rbd("img", pool="other"), _rbd("img"), PASS),
        (_rbd("img", read_only=True), _rbd("img", read_only=True), PASS),
        (_gce("a"), _ebs("a"), PASS),
    ],
    ids=[
        "gce-same-pd",
        "gce-both-read-only",
        "gce-one-read-write",
        "gce-other-pd",
        "ebs-same-even-read-only",
        "ebs-other",
        "iscsi-same-iqn-other-portal",
        "iscsi-both-read-only",
        "rbd-common-monitor",
        "rbd-no-common-monitor",
        "rbd-default-pool",
        "rbd-other-pool",
        "rbd-both-read-only",
        "different-kinds",
    ],
)
def test_disk_conflicts(placed: Raw, wanted: Raw, busy: Judgement) -> None:
    state = _two_nodes(pods=(pod_with("holder", placed, node="busy"),))
    pod = Pod.from_dict(pod_with("p", wanted))
    assert judge(new_plugin(None), pod, state) == {"busy": busy, "idle": PASS}


def test_pods_without_restricted_volumes_or_rwop_claims_are_skipped() -> None:
    state = _two_nodes(
        pods=(pod_with("holder", claim_volume("data"), node="busy"),),
        objects=(claim("data"),),
    )
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    assert judge(new_plugin(None), pod, state) == SKIPPED


def test_a_missing_claim_is_unresolvable_in_pre_filter() -> None:
    pod = Pod.from_dict(pod_with("p", claim_volume("data")))
    assert judge(new_plugin(None), pod, _two_nodes()) == {
        "*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "data" not found',))
    }


def test_a_read_write_once_pod_claim_in_use_refuses_every_node() -> None:
    state = _two_nodes(
        pods=(pod_with("holder", claim_volume("solo"), node="busy"),),
        objects=(claim("solo", modes=("ReadWriteOncePod",)),),
    )
    pod = Pod.from_dict(pod_with("p", claim_volume("solo")))
    assert judge(new_plugin(None), pod, state) == {"busy": RWOP, "idle": RWOP}


def test_an_unused_read_write_once_pod_claim_is_skipped() -> None:
    state = _two_nodes(objects=(claim("solo", modes=("ReadWriteOncePod",)),))
    pod = Pod.from_dict(pod_with("p", claim_volume("solo")))
    assert judge(new_plugin(None), pod, state) == SKIPPED


def test_a_claim_of_the_same_name_in_another_namespace_is_not_in_use() -> None:
    state = _two_nodes(
        pods=(pod_with("holder", claim_volume("solo"), node="busy", namespace="other"),),
        objects=(claim("solo", modes=("ReadWriteOncePod",)), claim("solo", namespace="other")),
    )
    pod = Pod.from_dict(pod_with("p", claim_volume("solo")))
    assert judge(new_plugin(None), pod, state) == SKIPPED


def test_the_disk_conflict_is_reported_before_the_claim_in_use() -> None:
    state = _two_nodes(
        pods=(pod_with("holder", claim_volume("solo"), _gce("a"), node="busy"),),
        objects=(claim("solo", modes=("ReadWriteOncePod",)),),
    )
    pod = Pod.from_dict(pod_with("p", claim_volume("solo"), _gce("a")))
    assert judge(new_plugin(None), pod, state) == {"busy": DISK, "idle": RWOP}


def test_removing_the_claims_user_frees_it_as_preemption_sees_it() -> None:
    state = _two_nodes(
        pods=(pod_with("holder", claim_volume("solo"), node="busy", uid="holder-uid"),),
        objects=(claim("solo", modes=("ReadWriteOncePod",)),),
    )
    pod = Pod.from_dict(pod_with("p", claim_volume("solo")))
    with state.cluster.trial():
        state.cluster.remove_pod("holder-uid")
        assert judge(new_plugin(None), pod, CycleState(state.cluster)) == SKIPPED
    assert judge(new_plugin(None), pod, CycleState(state.cluster))["busy"] == RWOP


def _hint(event: ClusterEvent, pod: Raw, old: object, new: object) -> QueueingHint:
    return hint_of(new_plugin(None), event, pod, old, new)


POD_DELETED = ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE)
CLAIM_ADDED = ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD)


def test_registered_events() -> None:
    events = [(r.event, r.hint is None) for r in new_plugin(None).events_to_register()]
    assert events == [
        (POD_DELETED, False),
        (ClusterEvent(Resource.NODE, Action.ADD), True),
        (CLAIM_ADDED, False),
    ]


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        (pod_with("d", _gce("a"), node="n"), QueueingHint.QUEUE),
        (pod_with("d", _gce("b"), node="n"), QueueingHint.SKIP),
        (pod_with("d", claim_volume("solo"), node="n"), QueueingHint.QUEUE),
        (pod_with("d", claim_volume("other"), node="n"), QueueingHint.SKIP),
        (
            pod_with("d", _gce("a"), claim_volume("solo"), node="n", namespace="x"),
            QueueingHint.SKIP,
        ),
    ],
    ids=["conflicting-disk", "other-disk", "same-claim", "other-claim", "other-namespace"],
)
def test_deleted_pod_hint(deleted: Raw, hint: QueueingHint) -> None:
    pod = pod_with("p", _gce("a"), claim_volume("solo"))
    assert _hint(POD_DELETED, pod, Pod.from_dict(deleted), None) is hint


@pytest.mark.parametrize(
    ("added", "hint"),
    [
        (claim("solo"), QueueingHint.QUEUE),
        (claim("other"), QueueingHint.SKIP),
        (claim("solo", namespace="x"), QueueingHint.SKIP),
    ],
    ids=["the-pods-claim", "another-claim", "other-namespace"],
)
def test_claim_added_hint(added: Raw, hint: QueueingHint) -> None:
    pod = pod_with("p", claim_volume("solo"))
    assert _hint(CLAIM_ADDED, pod, None, PersistentVolumeClaim.from_dict(added)) is hint


def test_preemption_evicts_the_pod_holding_the_read_write_once_pod_claim() -> None:
    holder = pod_with("holder", claim_volume("solo"), node="busy", uid="holder-uid")
    bystander = pod_with("bystander", claim_volume("shared"), node="idle", uid="bystander-uid")
    cluster = storage_cluster(
        (make_node("busy").obj(), make_node("idle").obj()),
        pods=(holder, bystander),
        objects=(claim("solo", modes=("ReadWriteOncePod",)), claim("shared")),
    )
    preemptor = pod_with("preemptor", claim_volume("solo"), uid="preemptor-uid")
    preemptor["spec"]["priority"] = 10
    decision = run_preemption(cluster, Pod.from_dict(preemptor), new_plugin(None))
    result = post_filter_result(decision)
    assert result.nominated_node == "busy"
    assert [victim.name for victim in result.victims] == ["holder"]
