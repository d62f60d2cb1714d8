"""Per-decision scratch space shared by the plugins of one scheduling cycle."""

from __future__ import annotations

from typing import TypeVar

from berth.engine.cluster import ClusterState

T = TypeVar("T")


class CycleState:
    """Holds the cluster snapshot of this cycle and what plugins computed in PreFilter/PreScore.

    Each plugin writes under its own name; nothing survives the cycle.
    """

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[T]) -> T:
        value = self._data.get(key)
        if not isinstance(value, kind):
            raise LookupError(f"cycle state has no {kind.__name__} under {key!r}")
        return value

    def get(self, key: str, kind: type[T]) -> T | None:
        value = self._data.get(key)
        return value if isinstance(value, kind) else None
