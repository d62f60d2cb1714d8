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
    """One hard constraint after PreFilter, as tables indexed by topology value id."""

    constraint: TopologySpreadConstraint
    per_value: Counts  # matching pods per value id (0 for values that are no domain)
    global_min: int
    self_match: int
    # Whether a node with that value breaks maxSkew; one extra trailing False is
    # what a MISSING (-1) value reads, the missing label being judged separately.
    exceeds: Mask


@dataclass(frozen=True, slots=True)
class PreFilterState:
    constraints: tuple[DomainCounts, ...]


def count_domains(
    cluster: ClusterState, pod: Pod, constraints: Sequence[TopologySpreadConstraint]
) -> PreFilterState:
    """Matching pods per domain for each constraint, over all nodes that count."""
    eligible = has_all_keys(cluster, constraints)
    inclusion = NodeInclusion(cluster, pod)
    results = []
    for constraint in constraints:
        included = eligible
        policy = inclusion.mask(constraint)
        if policy is not None:
            included = included & policy
        column = cluster.label_column(constraint.topology_key)
        size = len(column.vocabulary)
        value_ids = column.values[included]
        pods = matching_pods_per_slot(cluster, constraint.selector, pod.namespace)[included]
        per_value = np.bincount(value_ids, weights=pods, minlength=size).astype(np.int64)
        domains = np.bincount(value_ids, minlength=size) > 0
        domain_count = int(np.count_nonzero(domains))
        if domain_count < constraint.min_domains:
            global_min = 0
        elif domain_count == 0:
            global_min = _NO_DOMAIN_MINIMUM
        else:
            global_min = int(per_value[domains].min())
        self_match = int(selector_matches(constraint.selector, pod.labels))
        exceeds = np.zeros(size + 1, dtype=bool)
        exceeds[:size] = per_value + self_match - global_min > constraint.max_skew
        results.append(DomainCounts(constraint, per_value, global_min, self_match, exceeds))
    return PreFilterState(tuple(results))


def judge_nodes(cluster: ClusterState, state: PreFilterState, slots: NodeSlots) -> Verdicts:
    """Per slot, the first constraint the node fails, in constraint order."""
    if not state.constraints:
        return accept_all(len(slots))
    parts: list[tuple[Mask, Code, str]] = []
    for counts in state.constraints:
        values = cluster.label_column(counts.constraint.topology_key).values[slots]
        parts.append(
            (
                values == MISSING,
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ERR_REASON_NODE_LABEL_NOT_MATCH,
            )
        )
        parts.append(
            (np.take(counts.exceeds, values), Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        )
    return combine_first_failure(parts, len(slots))
