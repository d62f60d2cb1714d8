"""Running PodTopologySpread's extension points directly on a small cluster, for its tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from berth.engine.cluster import ClusterState, Workload
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.pod_topology_spread import PodTopologySpread

Verdict = tuple[Code, str] | None


def build_cluster(
    nodes: Iterable[Node | dict[str, Any]],
    pods: Iterable[Pod | dict[str, Any]] = (),
    workloads: Iterable[Workload] = (),
) -> ClusterState:
    cluster = ClusterState(capacity=4)
    for node in nodes:
        cluster.upsert_node(node if isinstance(node, Node) else Node.from_dict(node))
    for pod in pods:
        cluster.add_pod(pod if isinstance(pod, Pod) else Pod.from_dict(pod))
    for workload in workloads:
        cluster.set_workload(workload)
    return cluster


def slots_of(cluster: ClusterState, names: Sequence[str]) -> np.ndarray[Any, np.dtype[np.intp]]:
    slots = [cluster.slot_of(name) for name in names]
    assert all(s is not None for s in slots)
    return np.asarray(slots, dtype=np.intp)


def run_filter(
    plugin: PodTopologySpread, cluster: ClusterState, pod: Pod, names: Sequence[str] | None = None
) -> dict[str, Verdict] | None:
    """Verdict per node name; None when PreFilter skipped (every node passes)."""
    names = list(names) if names is not None else [n.name for n in cluster.nodes()]
    state = CycleState(cluster)
    result = plugin.pre_filter(state, pod)
    if result.status.is_skip:
        return None
    assert result.status.is_success and result.node_names is None
    verdicts = plugin.filter(state, pod, slots_of(cluster, names))
    out: dict[str, Verdict] = {}
    for index, name in enumerate(names):
        if verdicts.codes[index] == 0:
            out[name] = None
        else:
            (reason,) = verdicts.reasons_at(index)
            out[name] = (Code(int(verdicts.codes[index])), reason)
    return out


def run_score(
    plugin: PodTopologySpread,
    cluster: ClusterState,
    pod: Pod,
    feasible: Sequence[str] | None = None,
    *,
    raw: bool = False,
) -> dict[str, int] | None:
    """Normalised (or raw) score per feasible node name; None when PreScore skipped."""
    feasible = list(feasible) if feasible is not None else [n.name for n in cluster.nodes()]
    state = CycleState(cluster)
    slots = slots_of(cluster, feasible)
    status = plugin.pre_score(state, pod, slots)
    if status.is_skip:
        return None
    assert status.is_success
    scores = plugin.score(state, pod, slots)
    if not raw:
        scores = plugin.normalize_scores(state, pod, slots, scores)
    return dict(zip(feasible, scores.tolist(), strict=True))
