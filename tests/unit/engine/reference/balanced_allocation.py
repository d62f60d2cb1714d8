"""Plain per-node NodeResourcesBalancedAllocation, from the behaviour notes and balanced_allocation.go."""

from __future__ import annotations

import math
from collections.abc import Sequence

from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.unit.engine.reference.node_resources_fit import _scored_resources


def balance(values: Sequence[tuple[int, int]]) -> int:
    """(used, allocatable) pairs -> trunc((1 - std) * 100)."""
    fractions = [min(used / allocatable, 1.0) for used, allocatable in values]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * 100)


def is_best_effort(pod: Pod, names: Sequence[str]) -> bool:
    return all(pod.requests.get(name, 0) == 0 for name in names)


def balanced_score(pod: Pod, node: Node, pods: Sequence[Pod], names: Sequence[str]) -> int | None:
    """None when PreScore skips (best-effort pod for these resources)."""
    if is_best_effort(pod, names):
        return None
    rows = _scored_resources(pod, node, pods, names, nonzero=False)
    with_pod = balance([(requested, allocatable) for _, allocatable, _, requested in rows])
    without_pod = balance([(allocated, allocatable) for _, allocatable, allocated, _ in rows])
    return 50 + (50 + with_pod - without_pod) // 2
