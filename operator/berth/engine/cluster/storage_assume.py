"""Objects as the API last reported them, overlaid with versions the scheduler assumed.

VolumeBinding decides at Reserve that a claim will be bound to a volume (or provisioned on
a node) long before the API says so; the next pod's decision must already see that. Like
kube-scheduler's volume binding assume cache, the store keeps the API's object and, beside
it, an assumed replacement made from that exact version. Readers get the assumed object
while the API's version is still the one it was made from; as soon as the watch delivers a
newer version (or a deletion), the assumption has served its purpose and is dropped.
`restore` drops it earlier (Unreserve, a failed PreBind).

As upstream's assume cache, an assumption may also be made from a version newer than the
API's (the object an API write returned, before the watch reports it); the watch's version
replaces it once it is at least as new.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, Protocol, TypeVar

__all__ = ["AssumeConflictError", "AssumeStore", "Versioned"]


class Versioned(Protocol):
    @property
    def key(self) -> str:
        """`namespace/name` or, cluster-scoped, `name`."""
        ...

    @property
    def resource_version(self) -> str: ...


T = TypeVar("T", bound=Versioned)


class AssumeConflictError(LookupError):
    """An object cannot be assumed: the store does not hold it, or holds another version of it."""


class AssumeStore(Generic[T]):
    """API objects by key, each possibly overlaid with an assumed version of itself."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._api: dict[str, T] = {}
        self._assumed: dict[str, T] = {}

    def __len__(self) -> int:
        return len(self._api)

    def __contains__(self, key: str) -> bool:
        return key in self._api

    # ------------------------------------------------------------------ the watch's side

    def upsert(self, obj: T) -> T | None:
        """The API's (new) version of an object; returns the previous API version, if any.

        An assumption made from another version is dropped: the API has moved on.
        """
        key = obj.key
        previous = self._api.get(key)
        self._api[key] = obj
        assumed = self._assumed.get(key)
        if assumed is not None and _caught_up(obj, assumed=assumed, previous=previous):
            del self._assumed[key]
        return previous

    def remove(self, key: str) -> T | None:
        """The object was deleted; returns the API version it had."""
        self._assumed.pop(key, None)
        return self._api.pop(key, None)

    # ------------------------------------------------------------------ the scheduler's side

    def assume(self, obj: T) -> None:
        """Readers see `obj` instead of the API version it was made from.

        Raises `AssumeConflictError` when the store does not hold the object or holds a
        newer version of it (the caller's copy is out of date).
        """
        key = obj.key
        stored = self._api.get(key)
        if stored is None:
            raise AssumeConflictError(f"{self.kind} {key!r} is not in the cache")
        if _older(obj.resource_version, stored.resource_version):
            raise AssumeConflictError(
                f"{self.kind} {key!r} is out of sync "
                f"(stored: {stored.resource_version}, assume: {obj.resource_version})"
            )
        self._assumed[key] = obj

    def restore(self, key: str) -> None:
        """Forget any assumption about `key`: readers see the API's version again."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        return key in self._assumed

    def shows_already(self, obj: T) -> bool:
        """Whether an assumption of `obj`'s version or a later one stands: readers have seen it."""
        assumed = self._assumed.get(obj.key)
        return assumed is not None and not _older(assumed.resource_version, obj.resource_version)

    def assumed_values(self) -> list[T]:
        """Every standing assumption."""
        return list(self._assumed.values())

    # ------------------------------------------------------------------ readers

    def get(self, key: str) -> T | None:
        """The assumed version while it stands, else the API's."""
        assumed = self._assumed.get(key)
        return assumed if assumed is not None else self._api.get(key)

    def get_api(self, key: str) -> T | None:
        """The API's version, ignoring any assumption."""
        return self._api.get(key)

    def values(self) -> Iterator[T]:
        """Every object, each as `get` would return it."""
        assumed = self._assumed
        for key, obj in self._api.items():
            yield assumed.get(key, obj)

    def api_values(self) -> Iterable[T]:
        return self._api.values()

    def keys(self) -> Iterable[str]:
        return self._api.keys()


def _version(resource_version: str) -> int | None:
    # Resource versions are opaque strings; etcd's are integers, which upstream compares.
    return int(resource_version) if resource_version.isdigit() else None


def _older(version: str, than: str) -> bool:
    """Whether `version` is older than `than` (unless both are integers: whether they differ)."""
    mine, theirs = _version(version), _version(than)
    if mine is None or theirs is None:
        return version != than
    return mine < theirs


def _caught_up(api: Versioned, *, assumed: Versioned, previous: Versioned | None) -> bool:
    """Whether the API's new version `api` supersedes the assumed one.

    It does when newer than the assumption, or equal to an assumption that was ahead of
    the API's previous version (the watch now reports what a write returned). A re-delivery
    of the very version the assumption was made from leaves it standing.
    """
    if _older(assumed.resource_version, api.resource_version):
        return True
    if api.resource_version != assumed.resource_version:
        return False
    return previous is not None and _older(previous.resource_version, assumed.resource_version)
