"""Storage objects from the watch reach the cache and become the cluster events plugins register for."""

from __future__ import annotations

from berth.engine.cluster.storage import StorageObjects
from berth.engine.framework.events import Action, ClusterEvent, Resource
from berth.scheduling.cluster_events import watched_event
from berth.scheduling.object_intake import StorageIntake
from tests.storage_builders import make_class, make_csi_node, make_pv, make_pvc

Event = tuple[ClusterEvent, object, object]


def make_intake() -> tuple[StorageIntake, StorageObjects, list[Event]]:
    storage = StorageObjects()
    events: list[Event] = []
    intake = StorageIntake(
        storage=storage, notify=lambda event, old, new: events.append((event, old, new))
    )
    return intake, storage, events


def test_add_update_delete_become_storage_events() -> None:
    intake, storage, events = make_intake()
    first = make_pvc("c", "ns").build()
    second = make_pvc("c", "ns").volume_name("pv1").version("2").build()
    intake.on_object(first)
    intake.on_object(second)
    intake.on_deleted("PersistentVolumeClaim", "ns/c")
    intake.on_deleted("PersistentVolumeClaim", "ns/never-seen")  # nothing held: no event
    assert events == [
        (
            ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD, "PersistentVolumeClaimAdd"),
            None,
            first,
        ),
        (
            ClusterEvent(
                Resource.PERSISTENT_VOLUME_CLAIM, Action.UPDATE, "PersistentVolumeClaimUpdate"
            ),
            first,
            second,
        ),
        (
            ClusterEvent(
                Resource.PERSISTENT_VOLUME_CLAIM, Action.DELETE, "PersistentVolumeClaimDelete"
            ),
            second,
            None,
        ),
    ]
    assert storage.claim("ns", "c") is None


def test_a_registration_for_any_update_matches_a_storage_update() -> None:
    update = watched_event("CSINode", Action.UPDATE)
    assert ClusterEvent(Resource.CSI_NODE, Action.UPDATE).matches(update)
    assert ClusterEvent(Resource.CSI_NODE, Action.ADD | Action.UPDATE).matches(update)
    assert not ClusterEvent(Resource.CSI_NODE, Action.ADD).matches(update)
    assert not ClusterEvent(Resource.NODE, Action.UPDATE).matches(update)
    assert ClusterEvent(Resource.WILDCARD, Action.ALL).matches(update)


def test_a_listing_drops_ghosts_and_applies_changes_as_events() -> None:
    intake, storage, events = make_intake()
    kept = make_pv("kept").build()
    for obj in (kept, make_pv("changed").build(), make_pv("ghost").build()):
        intake.on_object(obj)
    events.clear()
    changed = make_pv("changed").capacity("5Gi").version("2").build()
    created = make_pv("created").build()
    intake.begin_listing("PersistentVolume")
    ghosts = intake.reconcile("PersistentVolume", [kept, changed, created])
    assert ghosts == 1
    assert sorted(storage.held("PersistentVolume")) == ["changed", "created", "kept"]
    assert [event.label for event, _, _ in events] == [
        "PersistentVolumeDelete",
        "PersistentVolumeUpdate",
        "PersistentVolumeAdd",
    ]


def test_what_the_watch_changed_during_a_listing_wins() -> None:
    intake, storage, _ = make_intake()
    intake.on_object(make_class("deleted-meanwhile").build())
    intake.begin_listing("StorageClass")
    # The watch reports newer states while the listing is in flight.
    newer = make_class("raised").wait_for_first_consumer().version("5").build()
    intake.on_object(newer)
    intake.on_object(make_class("created-meanwhile").build())
    intake.on_deleted("StorageClass", "deleted-meanwhile")
    intake.reconcile(
        "StorageClass",
        [make_class("raised").build(), make_class("deleted-meanwhile").build()],
    )
    assert storage.storage_class("raised") is newer
    assert storage.storage_class("created-meanwhile") is not None
    assert storage.storage_class("deleted-meanwhile") is None
    # Another kind's listing is unaffected by this one's bookkeeping.
    intake.begin_listing("CSINode")
    intake.reconcile("CSINode", [make_csi_node("n1").build()])
    assert storage.csi_node("n1") is not None
