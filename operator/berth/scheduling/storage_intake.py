"""Watch intake for the storage objects: into the cluster's storage cache, then as cluster events.

kube-scheduler's informers for PersistentVolumes, claims, storage classes and the CSI
objects feed its listers and, for every add, update and delete, move the pending pods
whose plugins registered for that kind (queueing hints decide). Berth does the same with
one intake for all seven kinds. A full listing after a gap in a watch converges the cache
(ghosts removed, changes applied, each as its event); what the watch changed while the
listing was taken is newer and wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from berth.engine.cluster.storage import StorageObject, StorageObjects, storage_kind
from berth.engine.framework.events import Action, ClusterEvent
from berth.scheduling.cluster_events import storage_event

__all__ = ["StorageIntake"]

logger = logging.getLogger(__name__)

Notify = Callable[[ClusterEvent, object, object], None]


class StorageIntake:
    def __init__(self, *, storage: StorageObjects, notify: Notify) -> None:
        self._storage = storage
        self._notify = notify
        # Per kind, while a full listing of it is being taken: the keys the watch changed.
        self._watched_during_listing: dict[str, set[str]] = {}

    def on_object(self, obj: StorageObject) -> None:
        """An object was added or changed."""
        kind = storage_kind(obj)
        self._note(kind, obj.key)
        self._apply(kind, obj)

    def on_deleted(self, kind: str, key: str) -> None:
        """The object of `kind` with `key` (`namespace/name` or `name`) was deleted."""
        self._note(kind, key)
        previous = self._storage.remove(kind, key)
        if previous is not None:
            self._notify(storage_event(kind, Action.DELETE), previous, None)

    def begin_listing(self, kind: str) -> None:
        """A full listing of `kind` is about to be requested; remember what the watch changes."""
        self._watched_during_listing[kind] = set()

    def cancel_listing(self, kind: str) -> None:
        """The listing of `kind` could not be taken; the cache stays as the watch has it."""
        self._watched_during_listing.pop(kind, None)

    def reconcile(self, kind: str, listed: Iterable[StorageObject]) -> int:
        """Converge `kind` to a full listing; returns how many ghosts were removed."""
        fresher = self._watched_during_listing.pop(kind, set())
        listing = {obj.key: obj for obj in listed if obj.key not in fresher}
        held = self._storage.held(kind)
        ghosts = [key for key in held if key not in listing and key not in fresher]
        for key in ghosts:
            self.on_deleted(kind, key)
        for key, obj in listing.items():
            if held.get(key) != obj:
                self._apply(kind, obj)
        if ghosts:
            logger.info("Reconciled the cache: dropped %d ghost %s object(s)", len(ghosts), kind)
        return len(ghosts)

    def _apply(self, kind: str, obj: StorageObject) -> None:
        previous = self._storage.upsert(obj)
        action = Action.ADD if previous is None else Action.UPDATE
        self._notify(storage_event(kind, action), previous, obj)

    def _note(self, kind: str, key: str) -> None:
        watched = self._watched_during_listing.get(kind)
        if watched is not None:
            watched.add(key)
