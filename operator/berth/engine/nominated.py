"""Nominated pods: capacity promised by a preemption is not handed to someone else.

kube-scheduler filters a node twice when pods of equal or higher priority are
nominated to it (`status.nominatedNodeName`, set after a preemption): once as if
those pods were already there, once as it is. A node must pass both. Nominations
are rare, so the second look is a per-node trial on the cluster, not a batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import NominatedPods
from berth.engine.framework.interfaces import FilterFailures
from berth.engine.framework.runtime import FilterOutcome, Framework
from berth.engine.framework.status import Status
from berth.engine.model.pod import Pod

__all__ = ["NominatedPods", "with_nominated_pods"]


def _rivals(pod: Pod, nominated: Sequence[Pod]) -> list[Pod]:
    return [other for other in nominated if other.uid != pod.uid and other.priority >= pod.priority]


def _failure(plugin: str, slot: int, status: Status) -> FilterFailures:
    return FilterFailures(
        plugin,
        np.asarray([slot], dtype=np.intp),
        np.asarray([int(status.code)], dtype=np.int8),
        np.asarray([(1 << len(status.reasons)) - 1], dtype=np.uint64),
        status.reasons,
    )


def with_nominated_pods(
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    outcome: FilterOutcome,
    nominated: NominatedPods,
) -> FilterOutcome:
    """Re-judge the feasible nodes that have rivals nominated to them, with the rivals placed."""
    if not nominated or outcome.error is not None or outcome.feasible.size == 0:
        return outcome
    keep = np.ones(outcome.feasible.size, dtype=bool)
    failures = list(outcome.failures)
    for index, slot in enumerate(outcome.feasible.tolist()):
        node_name = cluster.node_at(slot).name
        rivals = _rivals(pod, nominated.get(node_name, ()))
        if not rivals:
            continue
        with cluster.trial():
            for rival in rivals:
                cluster.add_pod(rival.assigned_to(node_name))
            state = CycleState(cluster)
            status, allowed = framework.run_pre_filter(state, pod)
            if not status.is_success:
                failures.append(_failure(status.plugin, slot, status))
                keep[index] = False
                continue
            if allowed is not None and node_name not in allowed:
                continue  # the first pass already accepted this node; narrowing adds nothing here
            second = framework.run_filters(state, pod, np.asarray([slot], dtype=np.intp))
        if second.error is not None:
            return FilterOutcome(outcome.feasible[:0], [*failures, *second.failures], second.error)
        if second.feasible.size == 0:
            failures.extend(second.failures)
            keep[index] = False
    feasible: NodeSlots = outcome.feasible[keep]
    return FilterOutcome(feasible, failures)
