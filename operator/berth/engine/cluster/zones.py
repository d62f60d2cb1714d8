"""kube-scheduler's node order: zones interleaved round-robin, nodes in arrival order within a zone."""

from __future__ import annotations

from collections.abc import Mapping

REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"
LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"
LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"


def zone_key(labels: Mapping[str, str]) -> str:
    """The node tree's zone identity; nodes with neither label share the "" zone."""
    # The deprecated beta labels win whenever they are present, even when empty.
    zone = labels[LEGACY_ZONE_LABEL] if LEGACY_ZONE_LABEL in labels else labels.get(ZONE_LABEL, "")
    region = (
        labels[LEGACY_REGION_LABEL]
        if LEGACY_REGION_LABEL in labels
        else labels.get(REGION_LABEL, "")
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Keeps per-zone node lists in arrival order and yields the interleaved order."""

    def __init__(self) -> None:
        self._zones: dict[str, list[int]] = {}

    def add(self, slot: int, zone: str) -> None:
        self._zones.setdefault(zone, []).append(slot)

    def remove(self, slot: int, zone: str) -> None:
        members = self._zones.get(zone)
        if members is None:
            return
        members.remove(slot)
        if not members:
            del self._zones[zone]

    def ordered(self) -> list[int]:
        order: list[int] = []
        lists = list(self._zones.values())
        depth = max((len(members) for members in lists), default=0)
        for index in range(depth):
            for members in lists:
                if index < len(members):
                    order.append(members[index])
        return order
