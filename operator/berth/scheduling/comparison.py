"""Two simulations of the same input under two profile sets, side by side.

`berth simulate --compare` answers "what would this profile change?": which pods land elsewhere
(or stay pending under one set only), and what each set leaves behind. Fragmentation is defined
here once, for the help, the README and the output to agree:

    fragmentation(r) = free r on used nodes / free r on all nodes

for r in cpu and memory, where a node is *used* when at least one pod (bound before or placed)
runs on it, and free r is allocatable minus requested, at least 0. It is 0 when every free unit
sits on empty nodes (they can take any pod, or be removed) and 1 when all of it is scattered over
nodes that already run something; 0 as well when nothing is free.
"""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.cluster import ClusterState
from berth.scheduling.simulator import Placement, SimulationResult

__all__ = ["FRAGMENTATION_RESOURCES", "Difference", "Totals", "differences", "totals"]

FRAGMENTATION_RESOURCES = ("cpu", "memory")


@dataclass(frozen=True, slots=True)
class Totals:
    nodes_used: int
    nodes_empty: int
    pods_pending: int
    # Resource name -> fragmentation (see the module docstring), from 0 to 1.
    fragmentation: dict[str, float]


@dataclass(frozen=True, slots=True)
class Difference:
    """One pod placed differently: `first` under the first profile set, `second` under the other."""

    first: Placement
    second: Placement


def differences(first: SimulationResult, second: SimulationResult) -> list[Difference]:
    """Pods (in input order) whose node differs, a pending pod counting as no node."""
    if len(first.placements) != len(second.placements):
        raise ValueError("the two simulations must place the same pods")
    return [
        Difference(a, b)
        for a, b in zip(first.placements, second.placements, strict=True)
        if a.node != b.node
    ]


def totals(result: SimulationResult) -> Totals:
    cluster = result.cluster
    slots = [cluster.slot_of(node.name) for node in cluster.nodes()]
    used = [slot for slot in slots if slot is not None and cluster.pod_count[slot] > 0]
    return Totals(
        nodes_used=len(used),
        nodes_empty=cluster.node_count - len(used),
        pods_pending=sum(1 for placement in result.placements if placement.node is None),
        fragmentation={
            resource: _fragmentation(cluster, resource, set(used))
            for resource in FRAGMENTATION_RESOURCES
        },
    )


def _fragmentation(cluster: ClusterState, resource: str, used: set[int]) -> float:
    column = cluster.resource_column(resource)
    if column is None:
        return 0.0
    free_total = free_on_used = 0
    for node in cluster.nodes():
        slot = cluster.slot_of(node.name)
        assert slot is not None
        free = max(0, int(cluster.allocatable[column, slot]) - int(cluster.requested[column, slot]))
        free_total += free
        if slot in used:
            free_on_used += free
    return free_on_used / free_total if free_total else 0.0
