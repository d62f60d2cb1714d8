"""PreFilter and Filter: `DoNotSchedule` constraints as a hard skew limit per topology domain.

PreFilter counts matching pods per domain over every node that carries all the
constraints' topology keys and passes each constraint's inclusion policies.
Filter then rejects a node when it lacks a topology key, or when placing the pod
there would push its domain more than `maxSkew` above the least loaded domain.
Both checks only read the node's value of the constraint's key, so PreFilter
turns each constraint into a table of the check failed per value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import MISSING
from berth.engine.cluster.value_totals import ValueTotals, fold, followed_totals
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod, TopologySpreadConstraint
from berth.engine.plugins.pod_topology_spread.counting import (
    NodeInclusion,
    has_all_keys,
    selector_matches,
    tracked_matching_pods,
)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# kube-scheduler's "no domain seen" minimum (math.MaxInt32); only reachable with minDomains <= 0.
_NO_DOMAIN_MINIMUM = 2**31 - 1

# What a node fails on one constraint: kube-scheduler checks the label first, then
# the skew. The numbering only has to keep 0 for "passes" (tables are built fastest
# from a comparison written as 0/1); the arrays below decode it.
_PASSES, _SKEW_EXCEEDED, _LABEL_MISSING = 0, 1, 2
_REASONS = (ERR_REASON_NODE_LABEL_NOT_MATCH, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_CODE_OF_FAILED = np.array(
    [0, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE], dtype=np.int8
)
_REASON_BITS_OF_FAILED = np.array([0, 2, 1], dtype=np.uint64)  # into _REASONS


@dataclass(frozen=True, slots=True)
class DomainCounts:
    """One hard constraint after PreFilter, as a table indexed by topology value id."""

    constraint: TopologySpreadConstraint
    column: NDArray[np.int32]  # value id per slot, MISSING when the node lacks the key
    # The check a node with that value fails; one extra trailing entry, what a
    # MISSING (-1) value reads, is _LABEL_MISSING.
    failed: NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class PreFilterState:
    constraints: tuple[DomainCounts, ...]


def _value_counts(
    cluster: ClusterState,
    pod: Pod,
    constraint: TopologySpreadConstraint,
    constraints: Sequence[TopologySpreadConstraint],
    inclusion: NodeInclusion,
) -> ValueTotals:
    """Matching pods per value of the constraint's key, over the nodes that count."""
    key = constraint.topology_key
    pods = tracked_matching_pods(cluster, constraint.selector, pod.namespace)
    policy = inclusion.mask(constraint)
    if pods is not None and policy is None:
        # The nodes that count are those carrying every constraint's key: labels only.
        return followed_totals(
            cluster,
            key,
            pods,
            counted=lambda: has_all_keys(cluster, constraints),
            counted_as=frozenset(c.topology_key for c in constraints),
        )
    counted = has_all_keys(cluster, constraints)
    if policy is not None:
        counted &= policy
    if pods is None:
        pods = np.zeros(len(cluster.live), dtype=np.int64)
    column = cluster.label_column(key)
    values = np.where(counted, column.values, np.int32(MISSING))
    return fold(values, pods, len(column.vocabulary))


def count_domains(
    cluster: ClusterState, pod: Pod, constraints: Sequence[TopologySpreadConstraint]
) -> PreFilterState:
    """Matching pods per domain for each constraint, over all nodes that count."""
    inclusion = NodeInclusion(cluster, pod)
    results = []
    for constraint in constraints:
        counts = _value_counts(cluster, pod, constraint, constraints, inclusion)
        if counts.domain_count < constraint.min_domains:
            global_min = 0
        else:
            # No domain at all leaves the initial value, kube-scheduler's MaxInt32.
            global_min = int(counts.per_value.min(where=counts.domains, initial=_NO_DOMAIN_MINIMUM))
        self_match = int(selector_matches(constraint.selector, pod.labels))
        size = len(counts.per_value) - 1  # the last entry is what MISSING reads
        failed = np.empty(size + 1, dtype=np.uint8)
        failed[size] = _LABEL_MISSING
        exceeds = failed[:size].view(np.bool_)  # written as 0 (passes) or 1 (_SKEW_EXCEEDED)
        np.greater(
            counts.per_value[:size], constraint.max_skew + global_min - self_match, out=exceeds
        )
        column = cluster.label_column(constraint.topology_key).values
        results.append(DomainCounts(constraint, column, failed))
    return PreFilterState(tuple(results))


def judge_nodes(state: PreFilterState, slots: NodeSlots) -> Verdicts:
    """Per slot, the first constraint the node fails, in constraint order."""
    if not state.constraints:
        return accept_all(len(slots))
    first, *others = state.constraints
    failed = first.failed[first.column[slots]]
    for counts in others:
        failed = np.where(failed != _PASSES, failed, counts.failed[counts.column[slots]])
    return Verdicts(_CODE_OF_FAILED[failed], _REASON_BITS_OF_FAILED[failed], _REASONS)
