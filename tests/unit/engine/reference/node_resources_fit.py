"""Plain per-node NodeResourcesFit, written straight from the behaviour notes and fit.go.

No numpy, no cluster arrays: a node is its `Node` and the list of pods on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

NATIVE = ("cpu", "memory", "ephemeral-storage")


def is_scalar(name: str) -> bool:
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def is_extended(name: str) -> bool:
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def node_requested(pods: Sequence[Pod]) -> dict[str, int]:
    total: dict[str, int] = {}
    for pod in pods:
        for name, amount in pod.requests.items():
            total[name] = total.get(name, 0) + amount
    return total


def fit_filter(
    pod: Pod,
    node: Node,
    pods: Sequence[Pod],
    *,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> tuple[str, list[str]]:
    """("ok" | "unschedulable" | "unresolvable", reasons in order)."""
    reasons: list[str] = []
    unresolvable = False
    if len(pods) + 1 > node.allocatable.get("pods", 0):
        reasons.append("Too many pods")
    used = node_requested(pods)
    wanted = [n for n in NATIVE if pod.requests.get(n, 0) > 0]
    scalars = sorted(n for n in pod.requests if n not in NATIVE and is_scalar(n))
    for name in scalars:
        if pod.requests[name] <= 0:
            continue
        if is_extended(name) and (
            name in ignored_resources or name.split("/")[0] in ignored_groups
        ):
            continue
        wanted.append(name)
    for name in wanted:
        amount = pod.requests[name]
        allocatable = node.allocatable.get(name, 0)
        if amount > allocatable - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            if amount > allocatable:
                unresolvable = True
    if not reasons:
        return "ok", reasons
    return ("unresolvable" if unresolvable else "unschedulable"), reasons


def _scored_resources(
    pod: Pod, node: Node, pods: Sequence[Pod], names: Sequence[str], *, nonzero: bool
) -> list[tuple[int, int, int, int]]:
    """(index, allocatable, allocated, requested-with-pod) for each resource that takes part."""
    used = node_requested(pods)
    rows = []
    for index, name in enumerate(names):
        if nonzero and name == "cpu":
            pod_amount = pod.nonzero_cpu
            allocated = sum(p.nonzero_cpu for p in pods)
        elif nonzero and name == "memory":
            pod_amount = pod.nonzero_memory
            allocated = sum(p.nonzero_memory for p in pods)
        else:
            pod_amount = pod.requests.get(name, 0)
            allocated = used.get(name, 0)
        if pod_amount == 0 and is_scalar(name):
            continue
        if name not in NATIVE and not is_scalar(name):
            continue
        allocatable = node.allocatable.get(name, 0)
        if allocatable == 0:
            continue
        rows.append((index, allocatable, allocated, allocated + pod_amount))
    return rows


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """Shape scores already times 10; Go integer division truncates toward zero."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            u0, s0 = shape[i - 1]
            numerator = (score - s0) * (p - u0)
            denominator = utilization - u0
            quotient = abs(numerator) // denominator
            return s0 + (quotient if numerator >= 0 else -quotient)
    return shape[-1][1]


def fit_score(
    pod: Pod,
    node: Node,
    pods: Sequence[Pod],
    *,
    strategy: str,
    resources: Sequence[tuple[str, int]],
    shape: Sequence[tuple[int, int]] = (),
) -> int:
    names = [name for name, _ in resources]
    total = 0
    weight_sum = 0
    scaled_shape = [(u, s * 10) for u, s in shape]
    for index, allocatable, _, requested in _scored_resources(pod, node, pods, names, nonzero=True):
        weight = resources[index][1]
        if strategy == "LeastAllocated":
            score = 0 if requested > allocatable else (allocatable - requested) * 100 // allocatable
        elif strategy == "MostAllocated":
            score = min(requested, allocatable) * 100 // allocatable
        else:
            utilization = 100 if requested > allocatable else requested * 100 // allocatable
            score = broken_linear(scaled_shape, utilization)
            if score <= 0:
                continue
        total += score * weight
        weight_sum += weight
    if weight_sum == 0:
        return 0
    if strategy == "RequestedToCapacityRatio":
        value = total / weight_sum
        return math.floor(value) + (1 if value - math.floor(value) >= 0.5 else 0)
    return total // weight_sum
