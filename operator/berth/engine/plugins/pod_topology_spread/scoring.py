"""PreScore, Score and NormalizeScore: `ScheduleAnyway` constraints as a preference for emptier domains.

A node's raw score is the sum over constraints of (matching pods in its domain
x the constraint's weight + maxSkew - 1), rounded; the weight ln(domains + 2)
keeps small topologies from being drowned by big ones. Fewer pods is better,
so normalisation reverses the scale: 100 x (max + min - raw) / max.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import MISSING
from berth.engine.framework.interfaces import MAX_NODE_SCORE, Scores
from berth.engine.model.pod import Pod, TopologySpreadConstraint
from berth.engine.plugins.pod_topology_spread.constraints import HOSTNAME_LABEL
from berth.engine.plugins.pod_topology_spread.counting import (
    Counts,
    Mask,
    NodeInclusion,
    has_all_keys,
    matching_pods_per_slot,
)


@dataclass(frozen=True, slots=True)
class ScoreTerm:
    """One soft constraint after PreScore.

    For the hostname key `counts` holds matching pods per slot (each node is its
    own domain); otherwise matching pods per domain id, where id `len(vocabulary)`
    stands for "label missing" when that is allowed to form a domain.
    """

    constraint: TopologySpreadConstraint
    per_hostname: bool
    counts: Counts
    weight: float


@dataclass(frozen=True, slots=True)
class PreScoreState:
    terms: tuple[ScoreTerm, ...]
    ignored: Mask  # per slot (all slots): the node lacks a topology key and scores 0


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def _domain_ids(cluster: ClusterState, key: str, slots: NodeSlots) -> NDArray[np.int64]:
    """Value ids of `key` at `slots`, a missing label read as the value "" (as Go's map lookup does)."""
    column = cluster.label_column(key)
    values = column.values[slots].astype(np.int64)
    empty_id = column.ids.get("", len(column.vocabulary))
    return np.where(values == MISSING, empty_id, values)


def count_for_scoring(
    cluster: ClusterState,
    pod: Pod,
    constraints: Sequence[TopologySpreadConstraint],
    feasible: NodeSlots,
    *,
    require_all_topologies: bool,
) -> PreScoreState:
    """Domains from the feasible nodes, pod counts from every node that passes the policies."""
    ignored = np.zeros(len(cluster.live), dtype=bool)
    scored = feasible
    if require_all_topologies:
        lacking = ~has_all_keys(cluster, constraints, feasible)
        ignored[feasible[lacking]] = True
        scored = feasible[~lacking]
    all_slots = np.flatnonzero(cluster.live).astype(np.intp)
    eligible: Mask | None = (
        has_all_keys(cluster, constraints, all_slots) if require_all_topologies else None
    )
    inclusion = NodeInclusion(cluster, pod, all_slots)
    terms = []
    for constraint in constraints:
        pods = matching_pods_per_slot(cluster, constraint.selector, pod.namespace)
        if constraint.topology_key == HOSTNAME_LABEL:
            weight = topology_normalizing_weight(len(scored))
            terms.append(ScoreTerm(constraint, True, pods, weight))
            continue
        column = cluster.label_column(constraint.topology_key)
        size = len(column.vocabulary) + 1
        domains = (
            np.bincount(_domain_ids(cluster, constraint.topology_key, scored), minlength=size) > 0
        )
        included = eligible
        policy = inclusion.mask(constraint)
        if policy is not None:
            included = policy if included is None else included & policy
        counted = all_slots if included is None else all_slots[included]
        per_domain = np.bincount(
            _domain_ids(cluster, constraint.topology_key, counted),
            weights=pods[counted],
            minlength=size,
        ).astype(np.int64)
        # Only domains of scored nodes exist; the others are never read.
        per_domain[~domains] = 0
        weight = topology_normalizing_weight(int(np.count_nonzero(domains)))
        terms.append(ScoreTerm(constraint, False, per_domain, weight))
    return PreScoreState(tuple(terms), ignored)


def _go_round(values: NDArray[np.float64]) -> Scores:
    """math.Round for non-negative values: halves go up (numpy's round goes to even)."""
    whole = np.floor(values)
    return (whole + (values - whole >= 0.5)).astype(np.int64)


def raw_scores(cluster: ClusterState, state: PreScoreState, slots: NodeSlots) -> Scores:
    total = np.zeros(len(slots), dtype=np.float64)
    for term in state.terms:
        values = cluster.label_column(term.constraint.topology_key).values[slots]
        present = values != MISSING
        if term.per_hostname:
            counts = term.counts[slots]
        else:
            ids = np.where(present, values, 0)
            counts = np.zeros(len(slots), dtype=np.int64)
            inside = ids < len(term.counts)
            counts[inside] = term.counts[ids[inside]]
        # Same float operations, in the same order, as kube-scheduler.
        contribution = counts.astype(np.float64) * term.weight + float(term.constraint.max_skew - 1)
        total = np.where(present, total + contribution, total)
    scores = _go_round(total)
    scores[state.ignored[slots]] = 0
    return scores


def normalize(state: PreScoreState, slots: NodeSlots, scores: Scores) -> Scores:
    """Ignored nodes 0; others 100 x (max + min - s) / max, or 100 when every score is 0."""
    ignored = state.ignored[slots]
    valid = scores[~ignored]
    result = np.zeros(len(scores), dtype=np.int64)
    if valid.size == 0:
        return result
    highest = max(int(valid.max()), 0)
    lowest = int(valid.min())
    if highest == 0:
        result[~ignored] = MAX_NODE_SCORE
        return result
    result[~ignored] = MAX_NODE_SCORE * (highest + lowest - valid) // highest
    return result
