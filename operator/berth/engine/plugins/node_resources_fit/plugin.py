"""NodeResourcesFit: does the pod's request fit each node's free capacity, and how full would the node be.

An extended resource that a DeviceClass serves (DRAExtendedResource) is left to
DynamicResources on the nodes whose allocatable does not list it: those nodes are never
short of it here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import FIXED_RESOURCES
from berth.engine.dra.classes import DeviceClass
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, ClusterEventWithHint, Resource
from berth.engine.framework.interfaces import PreFilterResult, Scores
from berth.engine.framework.status import SUCCESS, Code, Status, error
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod
from berth.engine.model.resources import PODS
from berth.engine.plugins.node_resources_fit import hints
from berth.engine.plugins.node_resources_fit.args import (
    NodeResourcesFitArgs,
    ScoringStrategyType,
)
from berth.engine.plugins.node_resources_fit.fit_requests import (
    TOO_MANY_PODS,
    checked_requests,
    insufficient,
)
from berth.engine.scoring.resource_allocation import (
    BrokenLinearFunction,
    NodeResourceRows,
    least_allocated_scores,
    most_allocated_scores,
    pod_request_vector,
    requested_to_capacity_ratio_scores,
    resource_scores,
)

PRE_FILTER_KEY = f"PreFilter{names.NODE_RESOURCES_FIT}"
PRE_SCORE_KEY = f"PreScore{names.NODE_RESOURCES_FIT}"
_MAX_REASONS = 64  # one reason bit each in `Verdicts.reason_bits`


@dataclass(frozen=True, slots=True)
class FitRequest:
    """What Filter compares, per checked resource: the cluster column (None if no node has it)."""

    columns: tuple[int | None, ...]
    amounts: tuple[int, ...]
    reasons: tuple[str, ...]  # TOO_MANY_PODS first, then one "Insufficient <name>" per column
    # Per column: a DeviceClass serves it, so nodes without it in allocatable leave it to DRA.
    delegable: tuple[bool, ...]
    # Per row of `ClusterState.free`: the node lacks room where free < threshold. The
    # "pods" row needs 1, unchecked rows never fail. None when a checked resource has
    # no column, so that every node is short of it.
    thresholds: NDArray[np.int64] | None


_NEVER_SHORT = np.iinfo(np.int64).min
_NONE: frozenset[str] = frozenset()
_MAX_CACHED_REQUESTS = 1024


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """The pod's request of each scored resource, cpu/memory with non-zero defaults."""

    vector: NDArray[np.int64]


class NodeResourcesFit:
    name = names.NODE_RESOURCES_FIT

    def __init__(
        self,
        args: NodeResourcesFitArgs,
        *,
        cluster: Callable[[], ClusterState] | None = None,  # the live cluster (queueing hints)
    ) -> None:
        self.args = args
        self._cluster = cluster
        strategy = args.scoring_strategy
        self._resource_names = tuple(spec.name for spec in strategy.resources)
        self._weights = np.asarray([spec.weight for spec in strategy.resources], dtype=np.int64)
        self._pods_column = FIXED_RESOURCES.index(PODS)  # fixed columns lead every cluster table
        self._fit_requests: dict[
            tuple[tuple[tuple[str, int], ...], tuple[str, ...], frozenset[str]], FitRequest
        ] = {}
        self._shape = (
            BrokenLinearFunction.from_shape(strategy.shape)
            if strategy.type is ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO
            else None
        )

    # ------------------------------------------------------------------ filter

    def fit_request(self, cluster: ClusterState, pod: Pod) -> FitRequest:
        # Pods of one workload ask for the same; the columns depend on the table's layout.
        classes = cluster.dra.classes_by_extended_resource()
        served = frozenset(name for name in pod.requests if name in classes) if classes else _NONE
        key = (tuple(pod.requests.items()), cluster.resource_layout, served)
        request = self._fit_requests.get(key)
        if request is None:
            if len(self._fit_requests) >= _MAX_CACHED_REQUESTS:
                self._fit_requests.clear()
            request = self._fit_requests[key] = self._new_fit_request(cluster, pod, served)
        return request

    def _new_fit_request(
        self, cluster: ClusterState, pod: Pod, served: frozenset[str]
    ) -> FitRequest:
        checked = checked_requests(
            pod.requests,
            ignored_resources=self.args.ignored_resources,
            ignored_groups=self.args.ignored_resource_groups,
        )
        columns = tuple(cluster.resource_column(resource) for resource, _ in checked)
        amounts = tuple(amount for _, amount in checked)
        delegable = tuple(resource in served for resource, _ in checked)
        thresholds: NDArray[np.int64] | None = None
        # With a resource DRA may serve, whether a node is short of it depends on the node.
        if None not in columns and not any(delegable):
            thresholds = np.full((cluster.resource_width, 1), _NEVER_SHORT, dtype=np.int64)
            thresholds[self._pods_column] = 1
            for column, amount in zip(columns, amounts, strict=True):
                thresholds[column] = amount
        return FitRequest(
            columns=columns,
            amounts=amounts,
            reasons=(TOO_MANY_PODS, *(insufficient(resource) for resource, _ in checked)),
            delegable=delegable,
            thresholds=thresholds,
        )

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        request = self.fit_request(state.cluster, pod)
        if len(request.reasons) > _MAX_REASONS:
            return PreFilterResult(error(f"pod requests more than {_MAX_REASONS - 1} resources"))
        state.write(PRE_FILTER_KEY, request)
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        cluster = state.cluster
        request = state.get(PRE_FILTER_KEY, FitRequest) or self.fit_request(cluster, pod)
        free = cluster.free.take(slots, axis=1)
        # One comparison answers "does it fit" for every node; reasons only on a miss.
        if request.thresholds is not None and not (free < request.thresholds).any():
            return accept_all(len(slots))
        return self._shortages(cluster, request, slots, free)

    def _shortages(
        self, cluster: ClusterState, request: FitRequest, slots: NodeSlots, free: NDArray[np.int64]
    ) -> Verdicts:
        too_many = free[self._pods_column] < 1
        shortages = [too_many]
        unresolvable = np.zeros(len(slots), dtype=bool)
        allocatable: NDArray[np.int64] | None = None
        for column, amount, delegable in zip(
            request.columns, request.amounts, request.delegable, strict=True
        ):
            if column is None:
                # No node offers it: short everywhere, beyond every node's total (unless DRA
                # serves it, then on no node).
                short = np.full(len(slots), not delegable, dtype=bool)
                unresolvable = unresolvable | short
            else:
                short = free[column] < amount
                if short.any():
                    if allocatable is None:
                        allocatable = cluster.allocatable.take(slots, axis=1)
                    if delegable:
                        short &= allocatable[column] > 0  # the others leave it to DRA
                    unresolvable = unresolvable | (short & (amount > allocatable[column]))
            shortages.append(short)
        rejected = np.logical_or.reduce(shortages)
        if not rejected.any():
            return accept_all(len(slots))
        bits = np.zeros(len(slots), dtype=np.uint64)
        for bit, short in enumerate(shortages):
            if short.any():
                bits |= short.astype(np.uint64) << np.uint64(bit)
        # UNSCHEDULABLE (2) + 1 = UNSCHEDULABLE_AND_UNRESOLVABLE (3); beyond-total implies short
        codes = rejected.astype(np.int8) * np.int8(Code.UNSCHEDULABLE) + unresolvable.astype(
            np.int8
        )
        return Verdicts(codes, bits, request.reasons)

    # ------------------------------------------------------------------ score

    def score_request(self, pod: Pod) -> ScoreRequest:
        return ScoreRequest(pod_request_vector(pod, self._resource_names, use_requested=False))

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        state.write(PRE_SCORE_KEY, self.score_request(pod))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        request = state.get(PRE_SCORE_KEY, ScoreRequest) or self.score_request(pod)
        return resource_scores(
            state.cluster,
            slots,
            self._resource_names,
            self._weights,
            request.vector,
            use_requested=False,
            scorer=self._strategy_scores,
            owner=self,
        )

    def _strategy_scores(self, rows: NodeResourceRows) -> Scores:
        if self._shape is not None:
            return requested_to_capacity_ratio_scores(rows, self._shape)
        if self.args.scoring_strategy.type is ScoringStrategyType.MOST_ALLOCATED:
            return most_allocated_scores(rows)
        return least_allocated_scores(rows)

    # ------------------------------------------------------------------ queueing

    def _served(self) -> Mapping[str, DeviceClass]:
        """Extended resource name -> serving DeviceClass, in the live cluster."""
        return {} if self._cluster is None else self._cluster().dra.classes_by_extended_resource()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE), hints.after_assigned_pod_delete
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_ALLOCATABLE),
                lambda pod, old, new: hints.after_node_change(pod, old, new, served=self._served()),
            ),
            # InPlacePodVerticalScaling is GA: a shrinking bound pod may free room...
            ClusterEventWithHint(
                ClusterEvent(Resource.ASSIGNED_POD, Action.UPDATE_POD_SCALE_DOWN),
                hints.after_assigned_pod_scale_down,
            ),
            # ...and so may the rejected pod asking for less itself.
            ClusterEventWithHint(
                ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_SCALE_DOWN),
                hints.after_own_scale_down,
            ),
            # A class may come to serve an extended resource the pod asks for.
            ClusterEventWithHint(
                ClusterEvent(Resource.DEVICE_CLASS, Action.ADD | Action.UPDATE),
                hints.after_device_class_change,
            ),
        ]
