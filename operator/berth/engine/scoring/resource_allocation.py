"""Resource-allocation scoring shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Everything works on matrices with one row per configured resource and one column
per candidate node. A resource whose node allocatable is 0 (or that the node side
does not track at all) has allocatable 0 in its cell and takes no part in that
node's score, exactly as kube-scheduler leaves it out of both the weighted sum and
the weight total. Integer maths truncates like Go's. An extended resource backed by DRA
is scored from the node's devices where its allocatable lacks it (`dra_extended_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.interfaces import MAX_NODE_SCORE, Scores
from berth.engine.model.pod import Pod
from berth.engine.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource
from berth.engine.scoring.dra_extended_rows import dra_backed_rows, served_rows
from berth.engine.scoring.normalize import go_div

# RequestedToCapacityRatio shape scores are 0..10; node scores are 0..100.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

Matrix = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class NodeResourceRows:
    """Per scored resource (rows) and candidate node (columns).

    Only resources that can take part are rows; `weights` are theirs. Cells where
    `allocatable` is 0 take no part in that node's score, and their `requested` and
    `allocated` values mean nothing.
    """

    weights: NDArray[np.int64]
    total_weight: int
    # [0] is `requested`, [1] is `allocated`: one array, so both can be scored in one pass
    with_and_without: NDArray[np.int64]
    allocatable: Matrix
    # Every resource has allocatable on every node: the common case, which needs no masks.
    all_present: bool

    @property
    def requested(self) -> Matrix:
        """What each node would hold with the pod on it."""
        requested: Matrix = self.with_and_without[0]
        return requested

    @property
    def allocated(self) -> Matrix:
        """What each node holds now."""
        allocated: Matrix = self.with_and_without[1]
        return allocated


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


@dataclass(frozen=True, slots=True)
class _ScoredColumns:
    """Which configured resources take part (`kept`, positions in the names) and where they sit."""

    kept: list[int]
    columns: list[int]  # their rows in the allocatable/requested tables
    nonzero_rows: list[int | None]  # their rows in `nonzero_requested` (cpu, memory), else None
    weights: NDArray[np.int64]  # of the kept resources
    total_weight: int
    pod_column: NDArray[np.int64]  # the pod's request of each kept resource, as a column


_COLUMN_CHOICES: dict[tuple[tuple[str, ...], bytes, bytes, tuple[str, ...]], _ScoredColumns] = {}
_NONZERO_ROWS = {CPU: 0, MEMORY: 1}  # the layout of ClusterState.nonzero_requested


def _scored_columns(
    cluster: ClusterState,
    names: tuple[str, ...],
    weights: NDArray[np.int64],
    pod_requests: NDArray[np.int64],
) -> _ScoredColumns:
    """Depends only on the names and weights, what the pod requests, and the table's
    column layout, so it is worked out once per combination instead of once per decision."""
    key = (names, weights.tobytes(), pod_requests.tobytes(), cluster.resource_layout)
    choice = _COLUMN_CHOICES.get(key)
    if choice is None:
        kept: list[int] = []
        columns: list[int] = []
        for row, name in enumerate(names):
            column = cluster.resource_column(name)
            if column is None or not _is_scored_on_node_side(name):
                continue
            if not pod_requests[row] and is_scalar_resource(name):
                continue
            kept.append(row)
            columns.append(column)
        kept_weights = weights[kept]
        choice = _ScoredColumns(
            kept,
            columns,
            [_NONZERO_ROWS.get(names[row]) for row in kept],
            kept_weights,
            int(kept_weights.sum()),
            pod_requests[kept][:, np.newaxis],
        )
        if len(_COLUMN_CHOICES) > 1024:
            _COLUMN_CHOICES.clear()
        _COLUMN_CHOICES[key] = choice
    return choice


def _gather(table: Matrix, rows: list[int], slots: NodeSlots, out: Matrix) -> None:
    """`table[rows][:, slots]` into `out`, slicing instead of copying rows when consecutive."""
    first = rows[0]
    if rows == list(range(first, first + len(rows))):
        # mode="clip" lets numpy write straight into `out` (slots are always in range)
        table[first : first + len(rows)].take(slots, axis=1, out=out, mode="clip")
    else:
        out[...] = table.take(slots, axis=1)[rows]


def node_resource_rows(
    cluster: ClusterState,
    slots: NodeSlots,
    names: tuple[str, ...],
    weights: NDArray[np.int64],
    pod_requests: NDArray[np.int64],
    *,
    use_requested: bool,
) -> NodeResourceRows:
    """Gather allocatable, allocated and requested (allocated + pod) for each resource and node.

    Allocated cpu/memory are the non-zero sums unless `use_requested`; other resources
    always use the actual requested sums. A scalar resource the pod does not request
    is left out, as is one no node offers; one with allocatable 0 on a node is left
    out for that node.
    """
    choice = _scored_columns(cluster, names, weights, pod_requests)
    columns = choice.columns
    both = np.empty((2, len(columns), len(slots)), dtype=np.int64)
    if not columns:
        return NodeResourceRows(choice.weights, 0, both, both[0], True)
    allocatable = np.empty((len(columns), len(slots)), dtype=np.int64)
    _gather(cluster.allocatable, columns, slots, allocatable)
    allocated = both[1]
    nonzero_rows = choice.nonzero_rows
    if use_requested or all(row is None for row in nonzero_rows):
        _gather(cluster.requested, columns, slots, allocated)
    elif all(row is not None for row in nonzero_rows):
        rows = [row for row in nonzero_rows if row is not None]
        _gather(cluster.nonzero_requested, rows, slots, allocated)
    else:
        _gather(cluster.requested, columns, slots, allocated)
        for index, row in enumerate(nonzero_rows):
            if row is not None:
                allocated[index] = cluster.nonzero_requested[row].take(slots)
    np.add(allocated, choice.pod_column, out=both[0])
    lacking = cluster.rows_lacking_somewhere()
    all_present = not lacking or lacking.isdisjoint(columns)
    return NodeResourceRows(choice.weights, choice.total_weight, both, allocatable, all_present)


def resource_scores(
    cluster: ClusterState,
    slots: NodeSlots,
    names: tuple[str, ...],
    weights: NDArray[np.int64],
    pod_requests: NDArray[np.int64],
    *,
    use_requested: bool,
    scorer: Callable[[NodeResourceRows], Scores],
    owner: Hashable,
) -> Scores:
    """`scorer` of the nodes' resource rows, worked out once per distinct node resource state.

    A score that depends only on a node's allocatable and requested amounts and on the
    pod is the same for every node in the same state (`ClusterState.resource_states`).
    `owner` names the scorer's configuration (the plugin instance).
    """
    dra_rows = served_rows(cluster, names, pod_requests)
    if dra_rows:
        # Rows that depend on each node's devices: no sharing between equal nodes.
        kept, allocatable, allocated = dra_backed_rows(
            cluster, slots, names, pod_requests, use_requested=use_requested, dra_rows=dra_rows
        )
        kept_weights = weights[kept]
        both = np.stack((allocated + pod_requests[kept][:, np.newaxis], allocated))
        return scorer(
            NodeResourceRows(kept_weights, int(kept_weights.sum()), both, allocatable, False)
        )
    key = (owner, use_requested, names, weights.tobytes(), pod_requests.tobytes())
    return cluster.resource_states.per_state(
        slots,
        key,
        lambda chosen: scorer(
            node_resource_rows(
                cluster, chosen, names, weights, pod_requests, use_requested=use_requested
            )
        ),
    )


def _weighted_average(
    per_resource: Matrix, rows: NodeResourceRows, include: NDArray[np.bool_] | None
) -> Scores:
    """Integer mean of per-resource scores over the included cells (None: all), 0 if none."""
    if include is None:
        if rows.total_weight == 0:
            return np.zeros(per_resource.shape[1], dtype=np.int64)
        totals: Scores = rows.weights @ per_resource
        return totals // rows.total_weight
    weights = rows.weights[:, np.newaxis]
    weighted = np.where(include, per_resource * weights, 0).sum(axis=0)
    weight_sum = np.where(include, weights, 0).sum(axis=0)
    # all terms are non-negative, so floor division is Go's truncation
    return np.where(weight_sum == 0, 0, weighted // np.maximum(weight_sum, 1))


def _safe_allocatable(rows: NodeResourceRows) -> tuple[Matrix, NDArray[np.bool_] | None]:
    if rows.all_present:
        return rows.allocatable, None
    present = rows.allocatable != 0
    return np.where(present, rows.allocatable, 1), present


def least_allocated_scores(rows: NodeResourceRows) -> Scores:
    """Per resource `(alloc - req)*100/alloc` (0 when over capacity), weighted integer mean."""
    allocatable, present = _safe_allocatable(rows)
    # over capacity the floored quotient is negative: clamping to 0 is Go's "0 if req > alloc"
    per_resource = np.maximum((allocatable - rows.requested) * MAX_NODE_SCORE // allocatable, 0)
    return _weighted_average(per_resource, rows, present)


def most_allocated_scores(rows: NodeResourceRows) -> Scores:
    """Per resource `min(req, alloc)*100/alloc`, weighted integer mean."""
    allocatable, present = _safe_allocatable(rows)
    per_resource = np.minimum(rows.requested, allocatable) * MAX_NODE_SCORE // allocatable
    return _weighted_average(per_resource, rows, present)


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
    rows: NodeResourceRows, function: BrokenLinearFunction
) -> Scores:
    """f(utilization) per resource; rounded weighted mean over resources whose f is positive."""
    allocatable, present = _safe_allocatable(rows)
    utilization = np.where(
        rows.requested > allocatable,
        MAX_UTILIZATION,
        rows.requested * MAX_UTILIZATION // allocatable,
    )
    per_resource = function(utilization)
    include = per_resource > 0
    if present is not None:
        include &= present
    weights = rows.weights[:, np.newaxis]
    weighted = np.where(include, per_resource * weights, 0).sum(axis=0)
    weight_sum = np.where(include, weights, 0).sum(axis=0)
    mean = weighted.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
    return np.where(weight_sum == 0, 0, go_round_positive(mean)).astype(np.int64)


def _population_std(
    fractions: NDArray[np.float64], present: NDArray[np.bool_] | None
) -> NDArray[np.float64]:
    # Summed row by row in resource order, as Go sums, so the floats agree bit for bit.
    resources = fractions.shape[-2]
    count = resources if present is None else np.maximum(present.sum(axis=0), 1)
    total = np.zeros(fractions.shape[:-2] + fractions.shape[-1:], dtype=np.float64)
    for index in range(resources):
        total = total + fractions[..., index, :]
    mean = total / count
    squares = np.zeros_like(total)
    for index in range(resources):
        deviation = fractions[..., index, :] - mean
        term = deviation * deviation
        squares = squares + (term if present is None else np.where(present[index], term, 0.0))
    return np.asarray(np.sqrt(squares / count), dtype=np.float64)


def balance_scores(
    used: NDArray[np.int64], allocatable: Matrix, all_present: bool
) -> NDArray[np.int64]:
    """`trunc((1 - std) * 100)` of the used/allocatable fractions (each capped at 1).

    `used` is one or more matrices shaped like `allocatable` (resources x nodes),
    stacked on leading axes; so is the result, less the resource axis. Two resources:
    std is half their difference; more: population standard deviation; fewer: 0.
    Resources with allocatable 0 on a node do not count there (`all_present` says
    there are none).
    """
    resources = allocatable.shape[0]
    shape = used.shape[:-2] + used.shape[-1:]
    if resources < 2:
        return np.full(shape, MAX_NODE_SCORE, dtype=np.int64)
    std: NDArray[np.float64]
    if all_present:
        fractions = used / allocatable
        np.minimum(fractions, 1.0, out=fractions)
        if resources == 2:
            std = np.abs(fractions[..., 0, :] - fractions[..., 1, :]) / 2
        else:
            std = _population_std(fractions, None)
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    present = allocatable != 0
    count = present.sum(axis=0)
    fractions = np.where(present, np.minimum(used / np.where(present, allocatable, 1), 1.0), 0.0)
    highest = np.where(present, fractions, -np.inf).max(axis=-2)
    lowest = np.where(present, fractions, np.inf).min(axis=-2)
    spread_two = np.where(count == 2, highest - lowest, 0.0) / 2
    spread_many = _population_std(fractions, present) if resources > 2 else spread_two
    std = np.where(count == 2, spread_two, np.where(count > 2, spread_many, 0.0))
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def balanced_allocation_scores(rows: NodeResourceRows) -> Scores:
    """How much the pod improves the node's balance: `50 + (50 + with - without) / 2`."""
    with_pod, without_pod = balance_scores(
        rows.with_and_without, rows.allocatable, rows.all_present
    )
    half = MAX_NODE_SCORE // 2
    # each balance is in [50, 100] (std never exceeds 0.5), so the numerator is >= 0
    # and floor division is Go's truncation
    scores: Scores = half + (half + with_pod - without_pod) // 2
    return scores
