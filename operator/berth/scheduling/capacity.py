"""How many more copies of one pod fit: the question cluster-capacity answers, asked of Berth's engine.

Copies are placed one at a time on a `Simulation`, exactly as `berth simulate` would place that
many identical pods, each assumed before the next; the first copy that does not get a node ends
the count, and its FailedScheduling message says what stops the next replica. A bound keeps the
loop finite when nothing else would (a pod that requests nothing and a cluster without a pod
limit).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from berth.engine.model.pod import Pod
from berth.scheduling.simulator import Placement, Simulation

__all__ = ["CapacityResult", "copy_name", "count_replicas"]


@dataclass(frozen=True, slots=True)
class CapacityResult:
    fit: int
    # Node name -> copies placed there, in order of first placement.
    per_node: dict[str, int]
    # The first copy that got no node; None when the count stopped at the bound.
    stopped_by: Placement | None
    limit: int

    @property
    def limit_reached(self) -> bool:
        return self.stopped_by is None


def copy_name(name: str, number: int) -> str:
    return f"{name}-{number}"


def count_replicas(simulation: Simulation, template: Pod, *, limit: int) -> CapacityResult:
    """Place copies of `template` named `<name>-1`, `<name>-2`, ... until one fails or `limit` fit.

    Names already taken in the simulation are skipped, so a copy never collides with a bound
    pod; every copy gets a UID of its own, since the cluster keys pods by UID.
    """
    if limit < 0:
        raise ValueError("limit must not be negative")
    per_node: Counter[str] = Counter()
    fit = number = 0
    while fit < limit:
        number += 1
        name = copy_name(template.name, number)
        if simulation.holds(template.namespace, name):
            continue
        copy = replace(template, name=name, uid=f"capacity:{template.namespace}/{name}")
        placement = simulation.place(copy)
        if placement.node is None:
            return CapacityResult(fit, dict(per_node), placement, limit)
        per_node[placement.node] += 1
        fit += 1
    return CapacityResult(fit, dict(per_node), None, limit)
