"""Offline scheduling: place a list of pods on a list of nodes with the engine, as the live loop would.

Pods go in queue order (higher priority first, file order among equals); each
placement is assumed into the cluster at once, so later pods see it. Nothing
here does I/O: the CLI reads the files and prints the result.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from berth.engine.algorithm import Scheduled, SchedulingError, SearchState, schedule_one
from berth.engine.cluster import ClusterState
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.parsing import brief
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod


@dataclass(frozen=True, slots=True)
class Placement:
    pod: Pod
    node: str | None
    message: str
    # Set when the pod did not fit but preemption found room: where it would go once the
    # victims are gone. The simulation does not evict them; it reports them.
    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()


@dataclass(frozen=True, slots=True)
class SimulationResult:
    placements: list[Placement]
    cluster: ClusterState


def simulate(
    *,
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    existing: Sequence[Pod] = (),
    pdbs: Sequence[PodDisruptionBudget] = (),
    profiles: Mapping[str, Framework] | None = None,
    default: Framework | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Schedule `pods` in queue order.

    With `profiles`, a pod is scheduled by the profile named by its schedulerName
    and skipped when there is none; otherwise every pod uses `default`. `pdbs` are
    honoured by preemption. Names and UIDs must be unique and `existing` pods bound to
    one of `nodes` (the CLI checks its input for that). `progress`, when given, is told
    (pods done, pods in all) after each pod, so that a long run can show how far it is.
    """
    if (profiles is None) == (default is None):
        raise ValueError("pass exactly one of profiles= or default=")
    # Objects read from files usually have no UID, and the cluster keys pods by UID.
    pods = [_with_uid(pod, "pending") for pod in pods]
    existing = [_with_uid(pod, "existing") for pod in existing]
    _require_unique([pod.uid for pod in (*pods, *existing)], "pod UIDs")
    _require_unique([pod.key for pod in (*pods, *existing)], "pod namespace/names")
    _require_unique([node.name for node in nodes], "node names")
    cluster = ClusterState()
    for node in nodes:
        cluster.upsert_node(node)
    for pod in existing:
        if not pod.is_terminal:
            cluster.add_pod(pod)
    for pdb in pdbs:
        cluster.set_pdb(pdb)
    search = SearchState()
    rng = random.Random(seed)
    ordered = sorted(enumerate(pods), key=lambda item: (-item[1].priority, item[0]))
    results: dict[int, Placement] = {}
    # kube-scheduler sums requests in int64 and absurd amounts wrap there without a word;
    # numpy does the same here, and should not warn about it.
    with np.errstate(over="ignore"):
        for done, (index, pod) in enumerate(ordered, start=1):
            results[index] = _place(pod, cluster, profiles, default, search, rng)
            if progress is not None:
                progress(done, len(ordered))
    return SimulationResult([results[i] for i in range(len(pods))], cluster)


def _require_unique(values: Sequence[str], what: str) -> None:
    # Two objects of one identity would share one slot in the cluster and be counted once.
    if len(set(values)) != len(values):
        raise ValueError(f"{what} must be unique")


def _with_uid(pod: Pod, origin: str) -> Pod:
    return pod if pod.uid else replace(pod, uid=f"{origin}:{pod.namespace}/{pod.name}")


def _place(
    pod: Pod,
    cluster: ClusterState,
    profiles: Mapping[str, Framework] | None,
    default: Framework | None,
    search: SearchState,
    rng: random.Random,
) -> Placement:
    if pod.node_name:
        # kube-scheduler never sees a pod created with spec.nodeName: the kubelet of that
        # node runs it. On a node that does not exist, nothing ever will.
        if cluster.slot_of(pod.node_name) is None:
            return Placement(pod, None, _unknown_node_message(pod.node_name))
        cluster.add_pod(pod)
        return Placement(pod, pod.node_name, "already assigned")
    if pod.is_terminal:
        return Placement(pod, None, f"skipped: pod is {pod.phase}")
    framework = default if profiles is None else profiles.get(pod.scheduler_name)
    if framework is None:
        return Placement(
            pod, None, f"skipped: no profile serves schedulerName {pod.scheduler_name!r}"
        )
    if pod.terminating:
        return Placement(pod, None, f"skip schedule deleting pod: {pod.key}")
    gate = framework.run_pre_enqueue(pod)
    if not gate.is_success:
        return Placement(pod, None, gate.message)
    decision = schedule_one(framework, cluster, pod, search=search, rng=rng)
    if isinstance(decision, Scheduled):
        # Assume: account the pod on its node before the next decision.
        cluster.add_pod(pod.assigned_to(decision.node_name))
        return Placement(
            pod, decision.node_name, f"Successfully assigned {pod.key} to {decision.node_name}"
        )
    if isinstance(decision, SchedulingError):
        return Placement(pod, None, decision.message)
    preemption = decision.post_filter
    if preemption is not None and preemption.nominated_node:
        return Placement(pod, None, decision.message, preemption.nominated_node, preemption.victims)
    return Placement(pod, None, decision.message)


def _unknown_node_message(node_name: str) -> str:
    return (
        f"spec.nodeName names node {brief(node_name)}, which does not exist: no scheduler places "
        "this pod and it stays Pending until such a node appears"
    )
