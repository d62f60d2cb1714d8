"""NodeVolumeLimits: CSI attach limits per node, what counts and what counts once, every message, hints."""

from __future__ import annotations

import pytest

from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.csi import CSINode, VolumeAttachment
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolumeClaim
from berth.engine.plugins.node_volume_limits import REASON, driver_not_installed, new_plugin
from tests.builders import make_node
from tests.unit.engine.plugins.node_plugin_support import PASS, Judgement, judge
from tests.unit.engine.plugins.volume_objects import (
    Raw,
    attachment,
    claim,
    claim_volume,
    csi_driver,
    csi_node,
    csi_volume,
    ephemeral_volume,
    hint_of,
    inline,
    persistent_volume,
    pod_with,
    storage_class,
    storage_cycle,
)

DRIVER = "csi.example.com"
GCE = "pd.csi.storage.gke.io"
EBS = "ebs.csi.aws.com"
FULL: Judgement = (Code.UNSCHEDULABLE, (REASON,))
SKIPPED: dict[str, Judgement] = {"*": (Code.SKIP, ())}


def _cycle(*objects: Raw, pods: tuple[Raw, ...] = ()) -> CycleState:
    """Node "one" allows one volume of each driver, "two" two, "bare" has no CSINode."""
    nodes = (make_node("one").obj(), make_node("two").obj(), make_node("bare").obj())
    limits = (
        csi_node("one", {DRIVER: 1, GCE: 1, EBS: 1}),
        csi_node("two", {DRIVER: 2, GCE: 2, EBS: 2}),
    )
    return storage_cycle(nodes, pods=pods, objects=(*limits, *objects))


def _bound(name: str, handle: str, driver: str = DRIVER) -> tuple[Raw, Raw]:
    return claim(name, volume=f"pv-{name}"), csi_volume(f"pv-{name}", driver, handle)


def _judge(pod: Raw, state: CycleState) -> dict[str, Judgement]:
    return judge(new_plugin(None), Pod.from_dict(pod), state)


def test_pods_without_countable_volumes_are_skipped() -> None:
    pod = pod_with("p", {"name": "cfg", "configMap": {"name": "c"}})
    assert _judge(pod, _cycle()) == SKIPPED


def test_a_node_at_its_limit_refuses_another_volume() -> None:
    state = _cycle(
        *_bound("old", "h1"),
        *_bound("new", "h2"),
        pods=(pod_with("holder", claim_volume("old"), node="one"),),
    )
    assert _judge(pod_with("p", claim_volume("new")), state) == {
        "one": FULL,
        "two": PASS,
        "bare": PASS,
    }


def test_a_volume_already_on_the_node_counts_once() -> None:
    state = _cycle(
        *_bound("old", "h1"), pods=(pod_with("holder", claim_volume("old"), node="one"),)
    )
    assert _judge(pod_with("p", claim_volume("old")), state)["one"] == PASS


def test_two_claims_on_one_volume_handle_count_once() -> None:
    old_claim, old_volume = _bound("old", "same")
    new_claim, new_volume = _bound("new", "same")
    state = _cycle(
        old_claim, old_volume, new_claim, new_volume,
        pods=(pod_with("holder", claim_volume("old"), node="one"),),
    )  # fmt: skip
    assert _judge(pod_with("p", claim_volume("new")), state)["one"] == PASS


def test_an_unbound_claim_counts_under_its_class_provisioner() -> None:
    state = _cycle(
        claim("late", storage_class="fast"),
        storage_class("fast", DRIVER),
        *_bound("old", "h1"),
        pods=(pod_with("holder", claim_volume("old"), node="one"),),
    )
    assert _judge(pod_with("p", claim_volume("late")), state)["one"] == FULL


def test_an_unbound_claim_shared_with_a_placed_pod_counts_once() -> None:
    state = _cycle(
        claim("late", storage_class="fast"),
        storage_class("fast", DRIVER),
        pods=(pod_with("holder", claim_volume("late"), node="one"),),
    )
    assert _judge(pod_with("p", claim_volume("late")), state)["one"] == PASS


def test_volume_attachments_count_but_not_twice() -> None:
    attached = csi_volume("pv-attached", DRIVER, "h9")
    state = _cycle(
        attached,
        attachment("va", node="one", attacher=DRIVER, volume="pv-attached"),
        attachment("va-inline", node="two", attacher=DRIVER, volume=None),
        *_bound("new", "h2"),
    )
    assert _judge(pod_with("p", claim_volume("new")), state) == {
        "one": FULL,
        "two": PASS,
        "bare": PASS,
    }


def test_an_attachment_of_a_placed_pods_volume_is_counted_once() -> None:
    state = _cycle(
        *_bound("old", "h1"),
        *_bound("new", "h2"),
        attachment("va", node="two", attacher=DRIVER, volume="pv-old"),
        pods=(pod_with("holder", claim_volume("old"), node="two"),),
    )
    assert _judge(pod_with("p", claim_volume("new")), state)["two"] == PASS


def test_in_line_in_tree_volumes_count_as_their_csi_driver_where_a_csi_node_exists() -> None:
    state = _cycle(
        pods=(pod_with("holder", inline("d", "gcePersistentDisk", pdName="a"), node="one"),)
    )
    pod = pod_with("p", inline("d", "gcePersistentDisk", pdName="b"))
    assert _judge(pod, state) == {"one": FULL, "two": PASS, "bare": PASS}


def test_a_bound_in_tree_volume_is_migrated() -> None:
    ebs = persistent_volume("pv-ebs", awsElasticBlockStore={"volumeID": "aws://us-east-1a/vol-1"})
    state = _cycle(
        claim("ebs", volume="pv-ebs"),
        ebs,
        pods=(
            pod_with("holder", inline("d", "awsElasticBlockStore", volumeID="vol-0"), node="one"),
        ),
    )
    assert _judge(pod_with("p", claim_volume("ebs")), state)["one"] == FULL


def test_the_same_ebs_volume_in_line_and_bound_counts_once() -> None:
    ebs = persistent_volume("pv-ebs", awsElasticBlockStore={"volumeID": "aws://us-east-1a/vol-1"})
    state = _cycle(
        claim("ebs", volume="pv-ebs"),
        ebs,
        pods=(
            pod_with("holder", inline("d", "awsElasticBlockStore", volumeID="vol-1"), node="one"),
        ),
    )
    assert _judge(pod_with("p", claim_volume("ebs")), state)["one"] == PASS


def test_azure_file_is_migratable_but_not_counted() -> None:
    pod = pod_with("p", inline("f", "azureFile", shareName="s", secretName="x"))
    assert _judge(pod, _cycle()) == {"one": PASS, "two": PASS, "bare": PASS}


def test_a_missing_claim_is_unresolvable_on_every_node() -> None:
    message = 'looking up PVC default/data: persistentvolumeclaim "data" not found'
    judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))
    assert _judge(pod_with("p", claim_volume("data")), _cycle()) == {
        "one": judgement,
        "two": judgement,
        "bare": judgement,
    }


def test_an_ephemeral_claim_the_pod_does_not_own_is_an_error() -> None:
    state = _cycle(claim("p-scratch", owner_uid="someone-else"))
    message = "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
    assert _judge(pod_with("p", ephemeral_volume("scratch")), state)["one"] == (
        Code.ERROR,
        (message,),
    )


def test_an_owned_ephemeral_claim_counts() -> None:
    state = _cycle(
        claim("p-scratch", storage_class="fast", owner_uid="p-uid"),
        storage_class("fast", DRIVER),
        *_bound("old", "h1"),
        pods=(pod_with("holder", claim_volume("old"), node="one"),),
    )
    pod = pod_with("p", ephemeral_volume("scratch"), uid="p-uid")
    assert _judge(pod, state) == {"one": FULL, "two": PASS, "bare": PASS}


def test_an_in_line_volume_the_translator_refuses_is_an_error_where_it_migrates() -> None:
    disk = inline("disk", "azureDisk", diskName="d", diskURI="/d", kind="Shared")
    message = (
        "converting volume(disk) from inline to csi: kind(Shared) is not supported in csi migration"
    )
    assert _judge(pod_with("p", disk), _cycle()) == {
        "one": (Code.ERROR, (message,)),
        "two": (Code.ERROR, (message,)),
        "bare": PASS,
    }


def test_a_driver_that_must_be_installed_refuses_nodes_without_it() -> None:
    state = _cycle(
        *_bound("new", "h2", driver="strict.example.com"),
        csi_driver("strict.example.com", prevent_if_missing=True),
    )
    missing = (Code.UNSCHEDULABLE, (driver_not_installed("strict.example.com"),))
    assert missing == (
        Code.UNSCHEDULABLE,
        ("strict.example.com CSI driver is not installed on the node",),
    )
    assert _judge(pod_with("p", claim_volume("new")), state) == {
        "one": missing,
        "two": missing,
        "bare": missing,
    }


def test_a_driver_without_the_opt_in_may_be_missing() -> None:
    state = _cycle(*_bound("new", "h2", driver="lax.example.com"), csi_driver("lax.example.com"))
    assert _judge(pod_with("p", claim_volume("new")), state)["bare"] == PASS


def _hint(event: ClusterEvent, pod: Raw, old: object, new: object) -> QueueingHint:
    return hint_of(new_plugin(None), event, pod, old, new)


CSI_NODE_UPDATED = ClusterEvent(Resource.CSI_NODE, Action.UPDATE)
POD_DELETED = ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE)
CLAIM_ADDED = ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD)
ATTACHMENT_DELETED = ClusterEvent(Resource.VOLUME_ATTACHMENT, Action.DELETE)


def test_registered_events() -> None:
    events = [(r.event, r.hint is None) for r in new_plugin(None).events_to_register()]
    assert events == [
        (ClusterEvent(Resource.CSI_NODE, Action.ADD), True),
        (CSI_NODE_UPDATED, False),
        (POD_DELETED, False),
        (CLAIM_ADDED, False),
        (ATTACHMENT_DELETED, False),
    ]


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        ({DRIVER: 1}, {DRIVER: 2}, QueueingHint.QUEUE),
        ({DRIVER: 2}, {DRIVER: 1}, QueueingHint.SKIP),
        ({DRIVER: 1}, {DRIVER: 1, "other": 1}, QueueingHint.QUEUE),
        ({DRIVER: None}, {DRIVER: 0}, QueueingHint.SKIP),
    ],
    ids=["raised", "lowered", "new-driver", "unset-to-zero"],
)
def test_csi_node_updated_hint(
    old: dict[str, int | None], new: dict[str, int | None], hint: QueueingHint
) -> None:
    before = CSINode.from_dict(csi_node("n", old))
    after = CSINode.from_dict(csi_node("n", new))
    assert _hint(CSI_NODE_UPDATED, pod_with("p", claim_volume("c")), before, after) is hint


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        (pod_with("d", claim_volume("x"), node="n"), QueueingHint.QUEUE),
        (pod_with("d", ephemeral_volume("x"), node="n"), QueueingHint.QUEUE),
        (pod_with("d", inline("v", "cinder", volumeID="c"), node="n"), QueueingHint.QUEUE),
        (pod_with("d", {"name": "e", "emptyDir": {}}, node="n"), QueueingHint.SKIP),
        (pod_with("d", claim_volume("x")), QueueingHint.SKIP),
    ],
    ids=["claim", "ephemeral", "migratable", "other-volume", "never-placed"],
)
def test_deleted_pod_hint(deleted: Raw, hint: QueueingHint) -> None:
    pod = pod_with("p", claim_volume("c"))
    assert _hint(POD_DELETED, pod, Pod.from_dict(deleted), None) is hint


@pytest.mark.parametrize(
    ("added", "hint"),
    [
        (claim("c"), QueueingHint.QUEUE),
        (claim("p-scratch"), QueueingHint.QUEUE),
        (claim("other"), QueueingHint.SKIP),
        (claim("c", namespace="x"), QueueingHint.SKIP),
    ],
    ids=["claim", "ephemeral-claim", "another-claim", "other-namespace"],
)
def test_claim_added_hint(added: Raw, hint: QueueingHint) -> None:
    pod = pod_with("p", claim_volume("c"), ephemeral_volume("scratch"))
    assert _hint(CLAIM_ADDED, pod, None, PersistentVolumeClaim.from_dict(added)) is hint


@pytest.mark.parametrize(
    ("volume", "attacher", "hint"),
    [
        (claim_volume("c"), "anything", QueueingHint.QUEUE),
        (ephemeral_volume("scratch"), "anything", QueueingHint.SKIP),
        (inline("d", "gcePersistentDisk", pdName="a"), GCE, QueueingHint.QUEUE),
        (inline("d", "gcePersistentDisk", pdName="a"), EBS, QueueingHint.SKIP),
        (inline("d", "awsElasticBlockStore", volumeID="aws://z/bad"), DRIVER, QueueingHint.QUEUE),
        (
            inline("d", "azureFile", shareName="s", secretName="x"),
            "file.csi.azure.com",
            QueueingHint.QUEUE,
        ),
    ],
    ids=["claim", "ephemeral", "migrated-driver", "other-driver", "untranslatable", "azure-file"],
)
def test_attachment_deleted_hint(volume: Raw, attacher: str, hint: QueueingHint) -> None:
    deleted = VolumeAttachment.from_dict(attachment("va", node="n", attacher=attacher, volume="pv"))
    assert _hint(ATTACHMENT_DELETED, pod_with("p", volume), deleted, None) is hint
