"""Services and controllers whose selectors give PodTopologySpread its system-default constraints."""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.model.labels import LabelSelector


@dataclass(frozen=True, slots=True)
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, reduced to its selector.

    Services and ReplicationControllers carry a plain label map (`map_selector`);
    ReplicaSets and StatefulSets a full label selector.
    """

    kind: str  # "Service" | "ReplicationController" | "ReplicaSet" | "StatefulSet"
    namespace: str
    name: str
    map_selector: tuple[tuple[str, str], ...] = ()
    selector: LabelSelector | None = None
