"""Watch intake for the objects plugins read beside pods and nodes: into the cluster's cache,
then as cluster events.

kube-scheduler's informers for the storage kinds (PersistentVolumes, claims, storage
classes, the CSI objects) and the DRA kinds (DeviceClasses, ResourceClaims, ResourceSlices)
feed its listers and, for every add, update and delete, move the pending pods whose plugins
registered for that kind (queueing hints decide). Berth does the same with one intake per
family of kinds over its store. A full listing after a gap in a watch converges the cache
(ghosts removed, changes applied, each as its event); what the watch changed while the
listing was taken is newer and wins.

DeviceTaintRules are the one kind that is not an event of its own: upstream's slice
tracker folds them into the slices, so a rule change is a ResourceSlice update for each
slice whose devices' taints it changed. A claim the scheduler assumed as its own write
returned it was reported then (see `DraObjects.on_claim_assumption`); the watch bringing
that same version is not reported again, as upstream's assume cache stays silent on it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from berth.engine.cluster.dra import DraObject, DraObjects, dra_kind
from berth.engine.cluster.storage import StorageObject, StorageObjects, storage_kind
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.slices import ResourceSlice
from berth.engine.framework.events import Action, ClusterEvent
from berth.scheduling.cluster_events import watched_event

__all__ = ["DraIntake", "ObjectIntake", "StorageIntake"]

logger = logging.getLogger(__name__)

Notify = Callable[[ClusterEvent, object, object], None]


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


Obj = TypeVar("Obj", bound=_Keyed)


class _Store(Protocol[Obj]):
    def upsert(self, obj: Obj, /) -> Obj | None: ...

    def remove(self, kind: str, key: str, /) -> Obj | None: ...

    def held(self, kind: str, /) -> dict[str, Obj]: ...


class ObjectIntake(Generic[Obj]):
    """Changes of several kinds into one store, each notified as its kind's cluster event."""

    def __init__(
        self, *, store: _Store[Obj], kind_of: Callable[[Obj], str], notify: Notify
    ) -> None:
        self._store = store
        self._kind_of = kind_of
        self._notify = notify
        # Per kind, while a full listing of it is being taken: the keys the watch changed.
        self._watched_during_listing: dict[str, set[str]] = {}

    def on_object(self, obj: Obj) -> None:
        """An object was added or changed."""
        kind = self._kind_of(obj)
        self._note(kind, obj.key)
        self._apply(kind, obj)

    def on_deleted(self, kind: str, key: str) -> None:
        """The object of `kind` with `key` (`namespace/name` or `name`) was deleted."""
        self._note(kind, key)
        self._remove(kind, key)

    def begin_listing(self, kind: str) -> None:
        """A full listing of `kind` is about to be requested; remember what the watch changes."""
        self._watched_during_listing[kind] = set()

    def cancel_listing(self, kind: str) -> None:
        """The listing of `kind` could not be taken; the cache stays as the watch has it."""
        self._watched_during_listing.pop(kind, None)

    def reconcile(self, kind: str, listed: Iterable[Obj]) -> int:
        """Converge `kind` to a full listing; returns how many ghosts were removed."""
        fresher = self._watched_during_listing.pop(kind, set())
        listing = {obj.key: obj for obj in listed if obj.key not in fresher}
        held = self._store.held(kind)
        ghosts = [key for key in held if key not in listing and key not in fresher]
        for key in ghosts:
            self._remove(kind, key)
        for key, obj in listing.items():
            if held.get(key) != obj:
                self._apply(kind, obj)
        if ghosts:
            logger.info("Reconciled the cache: dropped %d ghost %s object(s)", len(ghosts), kind)
        return len(ghosts)

    def _apply(self, kind: str, obj: Obj) -> None:
        previous = self._store.upsert(obj)
        action = Action.ADD if previous is None else Action.UPDATE
        self._notify(watched_event(kind, action), previous, obj)

    def _remove(self, kind: str, key: str) -> None:
        previous = self._store.remove(kind, key)
        if previous is not None:
            self._notify(watched_event(kind, Action.DELETE), previous, None)

    def _note(self, kind: str, key: str) -> None:
        watched = self._watched_during_listing.get(kind)
        if watched is not None:
            watched.add(key)


class StorageIntake(ObjectIntake[StorageObject]):
    """PVs, PVCs, storage classes and the CSI objects."""

    def __init__(self, *, storage: StorageObjects, notify: Notify) -> None:
        super().__init__(store=storage, kind_of=storage_kind, notify=notify)


_TAINT_RULE = "DeviceTaintRule"


class DraIntake(ObjectIntake[DraObject]):
    """DeviceClasses, ResourceClaims, ResourceSlices and DeviceTaintRules."""

    def __init__(self, *, dra: DraObjects, notify: Notify) -> None:
        super().__init__(store=dra, kind_of=dra_kind, notify=notify)
        self._dra = dra

    def _apply(self, kind: str, obj: DraObject) -> None:
        if isinstance(obj, ResourceClaim) and self._dra.claims.shows_already(obj):
            self._dra.upsert(obj)
            return
        if kind != _TAINT_RULE:
            super()._apply(kind, obj)
            return
        before = self._patched()
        self._dra.upsert(obj)
        self._notify_retainted(before)

    def _remove(self, kind: str, key: str) -> None:
        if kind != _TAINT_RULE:
            super()._remove(kind, key)
            return
        before = self._patched()
        self._dra.remove(kind, key)
        self._notify_retainted(before)

    def _patched(self) -> dict[str, ResourceSlice]:
        return {
            resource_slice.name: resource_slice for resource_slice in self._dra.patched_slices()
        }

    def _notify_retainted(self, before: dict[str, ResourceSlice]) -> None:
        update = watched_event("ResourceSlice", Action.UPDATE)
        for name, patched in self._patched().items():
            old = before.get(name)
            if old is not None and _taints(old) != _taints(patched):
                self._notify(update, old, patched)


def _taints(resource_slice: ResourceSlice) -> list[object]:
    return [device.taints for device in resource_slice.devices]
