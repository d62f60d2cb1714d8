"""A kind of API object Berth watches beside pods and nodes: where it lives and how it is parsed.

The storage kinds (storage_kinds.py) and the DRA kinds (dra_kinds.py) are each watched
(handlers.py), listed when Berth starts leading (app.py) and when a snapshot of a cluster
is taken (cli/cluster_snapshot.py), and accepted in offline input; one description per
kind keeps those places in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["WatchedKind"]

Parsed_co = TypeVar("Parsed_co", covariant=True)


@dataclass(frozen=True, slots=True)
class WatchedKind(Generic[Parsed_co]):
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    parse: Callable[[Mapping[str, Any]], Parsed_co]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_path(self) -> str:
        """The cluster-wide collection's path, e.g. /apis/storage.k8s.io/v1/csinodes."""
        prefix = f"/apis/{self.group}" if self.group else "/api"
        return f"{prefix}/{self.version}/{self.plural}"

    def key_of(self, raw: Mapping[str, Any]) -> str | None:
        """The cache key (`namespace/name` or `name`) of a raw object; None if it has no name."""
        metadata = raw.get("metadata")
        if not isinstance(metadata, Mapping):
            return None
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            return None
        if not self.namespaced:
            return name
        namespace = metadata.get("namespace")
        return f"{namespace if isinstance(namespace, str) and namespace else 'default'}/{name}"
