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
class PreScoreState:
    """Raw scores for every slot, computed once in PreScore; Score only reads them."""

    raw_by_slot: Scores
    ignored: Mask | None  # per slot: lacks a topology key and scores 0; None when no node does


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def _hostname_contribution(
    cluster: ClusterState, constraint: TopologySpreadConstraint, pods: Counts, weight: float
) -> NDArray[np.float64]:
    # Each node is its own domain: its own matching pods count, whatever the policies say.
    contribution = np.multiply(pods, weight, dtype=np.float64)
    contribution += float(constraint.max_skew - 1)
    contribution[cluster.label_column(constraint.topology_key).values == MISSING] = 0.0
    return contribution


def _domain_contribution(
    cluster: ClusterState,
    constraint: TopologySpreadConstraint,
    pods: Counts,
    *,
    scored: NodeSlots,
    counted: Mask | None,
    missing_is_empty_value: bool,
) -> NDArray[np.float64]:
    """Per slot: matching pods in the node's domain x weight + maxSkew - 1 (0 without the label).

    Value ids are shifted by one so that bucket 0 collects nodes without the
    label; when those count as the value "" (Go reads a missing map key as ""),
    bucket 0 is folded into the "" bucket.
    """
    column = cluster.label_column(constraint.topology_key)
    size = len(column.vocabulary) + 1
    shifted = column.values + 1
    present = np.bincount(np.take(shifted, scored), minlength=size) > 0
    if counted is None:
        per_domain = np.bincount(shifted, weights=pods, minlength=size)
    else:
        per_domain = np.bincount(shifted[counted], weights=pods[counted], minlength=size)
    empty = column.ids.get("")
    if missing_is_empty_value and empty is not None:
        present[empty + 1] |= present[0]
        per_domain[empty + 1] += per_domain[0]
        present[0] = False
    weight = topology_normalizing_weight(int(np.count_nonzero(present)))
    # Only domains of scored nodes are ever read, so the others need no zeroing.
    table = np.multiply(per_domain, weight, dtype=np.float64)
    table += float(constraint.max_skew - 1)
    table[0] = 0.0
    contribution: NDArray[np.float64] = np.take(table, shifted)
    return contribution


def count_for_scoring(
    cluster: ClusterState,
    pod: Pod,
    constraints: Sequence[TopologySpreadConstraint],
    feasible: NodeSlots,
    *,
    require_all_topologies: bool,
) -> PreScoreState:
    """Domains from the feasible nodes, pod counts from every node that passes the policies."""
    ignored: Mask | None = None
    scored = feasible
    eligible: Mask | None = None
    if require_all_topologies:
        eligible = has_all_keys(cluster, constraints)
        lacking = ~eligible[feasible]
        if lacking.any():
            ignored = np.zeros(len(cluster.live), dtype=bool)
            ignored[feasible[lacking]] = True
            scored = feasible[~lacking]
    inclusion = NodeInclusion(cluster, pod)
    total = np.zeros(len(cluster.live), dtype=np.float64)
    for constraint in constraints:
        pods = matching_pods_per_slot(cluster, constraint.selector, pod.namespace)
        if constraint.topology_key == HOSTNAME_LABEL:
            weight = topology_normalizing_weight(len(scored))
            total += _hostname_contribution(cluster, constraint, pods, weight)
            continue
        counted = eligible
        policy = inclusion.mask(constraint)
        if policy is not None:
            counted = policy if counted is None else counted & policy
        total += _domain_contribution(
            cluster,
            constraint,
            pods,
            scored=scored,
            counted=counted,
            missing_is_empty_value=not require_all_topologies,
        )
    # Go's math.Round (halves away from zero). floor(x + 0.5) equals it for every
    # reachable x: 0, or at least ln 2 (one pod times the smallest weight); the
    # addition can only be inexact near a power of two, where both agree.
    raw = np.floor(total + 0.5).astype(np.int64)
    if ignored is not None:
        raw[ignored] = 0
    return PreScoreState(raw, ignored)


def raw_scores(state: PreScoreState, slots: NodeSlots) -> Scores:
    scores: Scores = state.raw_by_slot[slots]
    return scores


def normalize(state: PreScoreState, slots: NodeSlots, scores: Scores) -> Scores:
    """Ignored nodes 0; others 100 x (max + min - s) / max, or 100 when every score is 0."""
    if state.ignored is None:
        if scores.size == 0:
            return scores.copy()
        highest = max(int(scores.max()), 0)
        if highest == 0:
            return np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        normalized: Scores = MAX_NODE_SCORE * (highest + int(scores.min()) - scores) // highest
        return normalized
    ignored = state.ignored[slots]
    valid = scores[~ignored]
    result = np.zeros(len(scores), dtype=np.int64)
    if valid.size == 0:
        return result
    highest = max(int(valid.max()), 0)
    if highest == 0:
        result[~ignored] = MAX_NODE_SCORE
        return result
    result[~ignored] = MAX_NODE_SCORE * (highest + int(valid.min()) - valid) // highest
    return result
