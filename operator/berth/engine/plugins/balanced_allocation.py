"""NodeResourcesBalancedAllocation (kube-scheduler v1.37): prefer nodes whose resources stay evenly used.

Uses the pod's *actual* requests (no non-zero defaults). A pod requesting none of
the configured resources is skipped at PreScore. The score rewards how much the
pod improves the node's balance: `50 + (50 + balance_with_pod - balance_without) / 2`,
where balance is `trunc((1 - std) * 100)` of the used/allocatable fractions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import NodeSlots
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, Scores
from berth.engine.framework.status import SKIP, SUCCESS, Status
from berth.engine.model.pod import Pod
from berth.engine.scoring.resource_allocation import (
    balanced_allocation_scores,
    pod_request_vector,
    resource_scores,
)
from berth.engine.scoring.resource_specs import ResourceSpec, check_known_keys, parse_resource_specs

PLUGIN = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_KEY = f"PreScore{PLUGIN}"


@dataclass(frozen=True, slots=True)
class BalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...]


@dataclass(frozen=True, slots=True)
class PodRequestVector:
    """The pod's actual request of each configured resource."""

    values: NDArray[np.int64]


def parse_args(args: PluginArgs | None) -> BalancedAllocationArgs:
    """Defaulted (empty -> cpu, memory; weight 0 -> 1) and validated (unique names, weight 1)."""
    raw = None
    if args is not None:
        check_known_keys(args, {"apiVersion", "kind", "resources"}, plugin=PLUGIN, field="")
        raw = args.get("resources")
    resources = parse_resource_specs(raw, plugin=PLUGIN, field="resources")
    seen: set[str] = set()
    for index, spec in enumerate(resources):
        if spec.name in seen:
            raise InvalidPluginArgsError(
                PLUGIN, f"resources[{index}].name", f"Duplicate value: {spec.name!r}"
            )
        seen.add(spec.name)
        if spec.weight != 1:
            raise InvalidPluginArgsError(
                PLUGIN, f"resources[{index}].weight", f"Invalid value: {spec.weight}: must be 1"
            )
    return BalancedAllocationArgs(resources)


class NodeResourcesBalancedAllocation:
    name = PLUGIN

    def __init__(self, args: BalancedAllocationArgs) -> None:
        self.args = args
        self._resource_names = tuple(spec.name for spec in args.resources)
        self._weights = np.ones(len(args.resources), dtype=np.int64)  # validated to be 1

    def request_vector(self, pod: Pod) -> PodRequestVector:
        return PodRequestVector(pod_request_vector(pod, self._resource_names, use_requested=True))

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        request = self.request_vector(pod)
        if not request.values.any():
            return SKIP  # best-effort for these resources: nothing to balance
        state.write(PRE_SCORE_KEY, request)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        request = state.get(PRE_SCORE_KEY, PodRequestVector) or self.request_vector(pod)
        if not request.values.any():
            return np.zeros(len(slots), dtype=np.int64)
        return resource_scores(
            state.cluster,
            slots,
            self._resource_names,
            self._weights,
            request.values,
            use_requested=True,
            scorer=balanced_allocation_scores,
            owner=self,
        )


def new_plugin(
    args: PluginArgs | None, handle: Handle | None = None
) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(parse_args(args))


__all__ = ["BalancedAllocationArgs", "NodeResourcesBalancedAllocation", "new_plugin", "parse_args"]
