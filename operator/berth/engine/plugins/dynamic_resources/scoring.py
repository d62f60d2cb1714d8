"""Score of DynamicResources (v1.37): prefer nodes where prioritized lists got their first choice.

For every `firstAvailable` request, the subrequest a node's allocation used earns
8 - (its position in the list): a node that can give a pod its preferred device beats
one that can only give a fallback. Scores are then scaled so the best node gets 100.
"""

from __future__ import annotations

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.dra.allocations import AllocationResult
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import Scores
from berth.engine.plugins.dynamic_resources.cycle import PodClaims

__all__ = ["FIRST_AVAILABLE_MAX", "score_nodes"]

FIRST_AVAILABLE_MAX = 8  # resource.k8s.io's limit on a firstAvailable list


def score_nodes(state: CycleState, slots: NodeSlots, prepared: PodClaims) -> Scores:
    scores = np.zeros(slots.size, dtype=np.int64)
    if not any(
        request.first_available for claim in prepared.claims for request in claim.spec.requests
    ):
        return scores  # nothing to prefer: every node scores 0
    node_at = state.cluster.node_at
    for position, slot in enumerate(slots.tolist()):
        found = prepared.node_allocations.get(node_at(slot).name)
        if found is not None:
            scores[position] = _node_score(prepared, found.results)
    return scores


def _node_score(prepared: PodClaims, results: tuple[AllocationResult, ...]) -> int:
    score = 0
    fresh = iter(results)
    for claim in prepared.claims:
        allocation = claim.allocation if claim.allocation is not None else next(fresh)
        used = {device.request for device in allocation.devices if "/" in device.request}
        for request in claim.spec.requests:
            for position, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in used:
                    score += FIRST_AVAILABLE_MAX - position
    return score
