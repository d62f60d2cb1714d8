"""PreFilter and Filter: `DoNotSchedule` constraints as a hard skew limit per topology domain.

PreFilter counts matching pods per domain over every node that carries all the
constraints' topology keys and passes each constraint's inclusion policies.
Filter then rejects a node when it lacks a topology key, or when placing the pod
there would push its domain more than `maxSkew` above the least loaded domain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import MISSING
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts, accept_all, combine_first_failure
from berth.engine.model.pod import Pod, TopologySpreadConstraint
from berth.engine.plugins.pod_topology_spread.counting import (
    Counts,
    Mask,
    NodeInclusion,
    has_all_keys,
    matching_pods_per_slot,
    selector_matches,
)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# kube-scheduler's "no domain seen" minimum (math.MaxInt32); only reachable with minDomains <= 0.
_NO_DOMAIN_MINIMUM = 2**31 - 1


@dataclass(frozen=True, slots=True)
class DomainCounts:
    """One hard constraint after PreFilter: matching pods per topology value id."""

    constraint: TopologySpreadConstraint
    per_value: Counts  # index = value id of the constraint's label column
    global_min: int
    self_match: int


@dataclass(frozen=True, slots=True)
class PreFilterState:
    constraints: tuple[DomainCounts, ...]


def count_domains(
    cluster: ClusterState, pod: Pod, constraints: Sequence[TopologySpreadConstraint]
) -> PreFilterState:
    """Matching pods per domain for each constraint, over all nodes that count."""
    slots = np.flatnonzero(cluster.live).astype(np.intp)
    eligible = has_all_keys(cluster, constraints, slots)
    inclusion = NodeInclusion(cluster, pod, slots)
    results = []
    for constraint in constraints:
        included: Mask = eligible
        policy = inclusion.mask(constraint)
        if policy is not None:
            included = included & policy
        column = cluster.label_column(constraint.topology_key)
        value_ids = column.values[slots][included]
        pods = matching_pods_per_slot(cluster, constraint.selector, pod.namespace)[slots][included]
        size = len(column.vocabulary)
        per_value = np.bincount(value_ids, weights=pods, minlength=size).astype(np.int64)
        domains = np.bincount(value_ids, minlength=size) > 0
        domain_count = int(np.count_nonzero(domains))
        if domain_count < constraint.min_domains:
            global_min = 0
        elif domain_count == 0:
            global_min = _NO_DOMAIN_MINIMUM
        else:
            global_min = int(per_value[domains].min())
        results.append(
            DomainCounts(
                constraint=constraint,
                per_value=per_value,
                global_min=global_min,
                self_match=int(selector_matches(constraint.selector, pod.labels)),
            )
        )
    return PreFilterState(tuple(results))


def judge_nodes(cluster: ClusterState, state: PreFilterState, slots: NodeSlots) -> Verdicts:
    """Per slot, the first constraint the node fails, in constraint order."""
    if not state.constraints:
        return accept_all(len(slots))
    parts: list[tuple[Mask, Code, str]] = []
    for counts in state.constraints:
        constraint = counts.constraint
        values = cluster.label_column(constraint.topology_key).values[slots]
        missing = values == MISSING
        known = (values >= 0) & (values < len(counts.per_value))
        matching = np.zeros(len(slots), dtype=np.int64)
        matching[known] = counts.per_value[values[known]]
        skew = matching + counts.self_match - counts.global_min
        parts.append(
            (missing, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
        )
        parts.append(
            (
                ~missing & (skew > constraint.max_skew),
                Code.UNSCHEDULABLE,
                ERR_REASON_CONSTRAINTS_NOT_MATCH,
            )
        )
    return combine_first_failure(parts, len(slots))
