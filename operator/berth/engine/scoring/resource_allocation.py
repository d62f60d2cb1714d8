"""Resource-allocation scoring shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Everything works on matrices with one row per configured resource and one column
per candidate node. A resource whose node allocatable is 0 (or that the node side
does not track at all) has allocatable 0 in its cell and takes no part in that
node's score, exactly as kube-scheduler leaves it out of both the weighted sum and
the weight total. Integer maths truncates like Go's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.interfaces import MAX_NODE_SCORE, Scores
from berth.engine.model.pod import Pod
from berth.engine.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource
from berth.engine.scoring.normalize import go_div

# RequestedToCapacityRatio shape scores are 0..10; node scores are 0..100.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

Matrix = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class NodeResourceRows:
    """Per configured resource (rows) and candidate node (columns)."""

    requested: Matrix  # what the node would hold with the pod on it
    allocated: Matrix  # what the node holds now
    allocatable: Matrix  # 0 where the resource takes no part in the score


def pod_request_vector(pod: Pod, names: Sequence[str], *, use_requested: bool) -> NDArray[np.int64]:
    """The pod's request of each resource in `names`.

    With `use_requested` false (NodeResourcesFit scoring), cpu and memory carry the
    per-container defaults for missing requests; everything else is the actual request.
    """
    values = []
    for name in names:
        if not use_requested and name == CPU:
            values.append(pod.nonzero_cpu)
        elif not use_requested and name == MEMORY:
            values.append(pod.nonzero_memory)
        else:
            values.append(pod.requests.get(name, 0))
    return np.asarray(values, dtype=np.int64)


def _is_scored_on_node_side(name: str) -> bool:
    # The node tracks cpu, memory, ephemeral storage and scalar resources for scoring;
    # "pods" and unknown names have no allocatable there.
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)


def node_resource_rows(
    cluster: ClusterState,
    slots: NodeSlots,
    names: Sequence[str],
    pod_requests: NDArray[np.int64],
    *,
    use_requested: bool,
) -> NodeResourceRows:
    """Gather allocatable, allocated and requested (allocated + pod) for each resource and node.

    Allocated cpu/memory are the non-zero sums unless `use_requested`; other resources
    always use the actual requested sums. A scalar resource the pod does not request
    is left out, as is any resource with allocatable 0 on a node.
    """
    shape = (len(names), len(slots))
    allocatable = np.zeros(shape, dtype=np.int64)
    allocated = np.zeros(shape, dtype=np.int64)
    for row, name in enumerate(names):
        pod_request = int(pod_requests[row])
        if pod_request == 0 and is_scalar_resource(name):
            continue
        column = cluster.resource_column(name)
        if column is None or not _is_scored_on_node_side(name):
            continue
        allocatable[row] = cluster.allocatable[slots, column]
        if not use_requested and name == CPU:
            allocated[row] = cluster.nonzero_requested[slots, 0]
        elif not use_requested and name == MEMORY:
            allocated[row] = cluster.nonzero_requested[slots, 1]
        else:
            allocated[row] = cluster.requested[slots, column]
    present = allocatable != 0
    allocated = np.where(present, allocated, 0)
    requested = np.where(present, allocated + pod_requests[:, np.newaxis], 0)
    return NodeResourceRows(requested=requested, allocated=allocated, allocatable=allocatable)


def _weighted_average(
    per_resource: Matrix, include: NDArray[np.bool_], weights: NDArray[np.int64]
) -> Scores:
    weighted = np.where(include, per_resource * weights[:, np.newaxis], 0).sum(axis=0)
    weight_sum = np.where(include, weights[:, np.newaxis], 0).sum(axis=0)
    safe = np.where(weight_sum == 0, 1, weight_sum)
    return np.where(weight_sum == 0, 0, go_div(weighted, safe)).astype(np.int64)


def least_allocated_scores(
    requested: Matrix, allocatable: Matrix, weights: NDArray[np.int64]
) -> Scores:
    """Per resource `(alloc - req)·100/alloc` (0 when over capacity), weighted integer mean."""
    present = allocatable != 0
    safe = np.where(present, allocatable, 1)
    per_resource = np.where(
        requested > allocatable, 0, go_div((allocatable - requested) * MAX_NODE_SCORE, safe)
    )
    return _weighted_average(per_resource, present, weights)


def most_allocated_scores(
    requested: Matrix, allocatable: Matrix, weights: NDArray[np.int64]
) -> Scores:
    """Per resource `min(req, alloc)·100/alloc`, weighted integer mean."""
    present = allocatable != 0
    safe = np.where(present, allocatable, 1)
    per_resource = go_div(np.minimum(requested, allocatable) * MAX_NODE_SCORE, safe)
    return _weighted_average(per_resource, present, weights)


@dataclass(frozen=True, slots=True)
class BrokenLinearFunction:
    """A piecewise-linear function through (utilization, score) points, flat outside them.

    Utilizations must be strictly increasing; scores are already on the 0..100 scale.
    """

    utilizations: NDArray[np.int64]
    scores: NDArray[np.int64]

    @classmethod
    def from_shape(cls, points: Sequence[tuple[int, int]]) -> BrokenLinearFunction:
        """From RequestedToCapacityRatio shape points, whose scores are 0..10."""
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        return cls(
            np.asarray([u for u, _ in points], dtype=np.int64),
            np.asarray([s * scale for _, s in points], dtype=np.int64),
        )

    def __call__(self, p: NDArray[np.int64]) -> NDArray[np.int64]:
        u, s = self.utilizations, self.scores
        last = len(u) - 1
        # index of the first point with utilization >= p (len(u) when p is past the last)
        upper = np.searchsorted(u, p, side="left")
        hi = np.minimum(upper, last)
        lo = np.maximum(hi - 1, 0)
        span = np.where(hi == lo, 1, u[hi] - u[lo])
        between = s[lo] + go_div((s[hi] - s[lo]) * (p - u[lo]), span)
        result = np.where(upper == 0, s[0], np.where(upper > last, s[last], between))
        return np.asarray(result, dtype=np.int64)


def go_round_positive(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Go's math.Round (halves away from zero) for non-negative floats."""
    whole = np.trunc(values)
    return (whole + (values - whole >= 0.5)).astype(np.int64)


def requested_to_capacity_ratio_scores(
    requested: Matrix,
    allocatable: Matrix,
    weights: NDArray[np.int64],
    function: BrokenLinearFunction,
) -> Scores:
    """f(utilization) per resource; rounded weighted mean over resources whose f is positive."""
    present = allocatable != 0
    safe = np.where(present, allocatable, 1)
    utilization = np.where(
        requested > allocatable, MAX_UTILIZATION, go_div(requested * MAX_UTILIZATION, safe)
    )
    per_resource = function(utilization)
    include = present & (per_resource > 0)
    weighted = np.where(include, per_resource * weights[:, np.newaxis], 0).sum(axis=0)
    weight_sum = np.where(include, weights[:, np.newaxis], 0).sum(axis=0)
    safe_sum = np.where(weight_sum == 0, 1, weight_sum)
    mean = weighted.astype(np.float64) / safe_sum.astype(np.float64)
    return np.where(weight_sum == 0, 0, go_round_positive(mean)).astype(np.int64)


def balance_scores(used: Matrix, allocatable: Matrix) -> Scores:
    """`trunc((1 - std)·100)` of the used/allocatable fractions (each capped at 1).

    Two resources: std is half their difference; more: population standard deviation
    (summed in resource order, as Go does); fewer: 0.
    """
    present = allocatable != 0
    count = present.sum(axis=0)
    fractions = np.where(
        present, used.astype(np.float64) / np.where(present, allocatable, 1).astype(np.float64), 0.0
    )
    fractions = np.minimum(fractions, 1.0)
    nodes = used.shape[1]
    total = np.zeros(nodes, dtype=np.float64)
    for row in range(used.shape[0]):  # sequential, in resource order, to match Go's float sums
        total = total + fractions[row]
    mean = total / np.maximum(count, 1)
    squares = np.zeros(nodes, dtype=np.float64)
    for row in range(used.shape[0]):
        deviation = fractions[row] - mean
        squares = squares + np.where(present[row], deviation * deviation, 0.0)
    spread_many = np.sqrt(squares / np.maximum(count, 1))
    highest = np.where(present, fractions, -np.inf).max(axis=0, initial=-np.inf)
    lowest = np.where(present, fractions, np.inf).min(axis=0, initial=np.inf)
    spread_two = np.where(count == 2, highest - lowest, 0.0) / 2
    std = np.where(count == 2, spread_two, np.where(count > 2, spread_many, 0.0))
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def balanced_allocation_scores(requested: Matrix, allocated: Matrix, allocatable: Matrix) -> Scores:
    """How much the pod improves the node's balance: `50 + (50 + with - without) / 2`."""
    with_pod = balance_scores(requested, allocatable)
    without_pod = balance_scores(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return (half + go_div(half + with_pod - without_pod, 2)).astype(np.int64)
