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
from berth.engine.cluster import ClusterState, Workload
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


class Simulation:
    """A cluster of `nodes` with `existing` pods bound, on which pods are placed one at a time.

    Each placement is assumed at once, so the next pod sees it; `berth simulate` places a list
    of pods, `berth capacity` places copies of one pod until a copy does not fit. With
    `profiles`, a pod is scheduled by the profile named by its schedulerName and skipped when
    there is none; otherwise every pod uses `default`. `pdbs` are honoured by preemption;
    `namespaces` and `workloads` are the cluster context affinity and spreading defaults read.
    """

    def __init__(
        self,
        *,
        nodes: Sequence[Node],
        existing: Sequence[Pod] = (),
        pdbs: Sequence[PodDisruptionBudget] = (),
        profiles: Mapping[str, Framework] | None = None,
        default: Framework | None = None,
        seed: int = 0,
        namespaces: Mapping[str, Mapping[str, str]] | None = None,
        workloads: Sequence[Workload] = (),
    ) -> None:
        if (profiles is None) == (default is None):
            raise ValueError("pass exactly one of profiles= or default=")
        existing = [_with_uid(pod, "existing") for pod in existing]
        _require_unique([pod.uid for pod in existing], "pod UIDs")
        _require_unique([pod.key for pod in existing], "pod namespace/names")
        _require_unique([node.name for node in nodes], "node names")
        self.cluster = ClusterState()
        for node in nodes:
            self.cluster.upsert_node(node)
        for pod in existing:
            if not pod.is_terminal:
                self.cluster.add_pod(pod)
        for pdb in pdbs:
            self.cluster.set_pdb(pdb)
        for name, labels in (namespaces or {}).items():
            self.cluster.set_namespace(name, dict(labels))
        for workload in workloads:
            self.cluster.set_workload(workload)
        self._profiles = profiles
        self._default = default
        self._search = SearchState()
        self._rng = random.Random(seed)
        # Two pods of one identity would share one slot in the cluster and be counted once.
        self._keys = {pod.key for pod in existing}
        self._uids = {pod.uid for pod in existing}

    def holds(self, namespace: str, name: str) -> bool:
        """Whether a pod of this namespace and name is bound or was placed already."""
        return f"{namespace}/{name}" in self._keys

    def place(self, pod: Pod) -> Placement:
        """Schedule `pod` now and, when it gets a node, account it there."""
        pod = _with_uid(pod, "pending")
        if pod.key in self._keys or pod.uid in self._uids:
            raise ValueError(f"pod {pod.key} (uid {pod.uid}) is already in the simulation")
        self._keys.add(pod.key)
        self._uids.add(pod.uid)
        # kube-scheduler sums requests in int64 and absurd amounts wrap there without a word;
        # numpy does the same here, and should not warn about it.
        with np.errstate(over="ignore"):
            return _place(pod, self.cluster, self._profiles, self._default, self._search, self._rng)


def simulate(
    *,
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    existing: Sequence[Pod] = (),
    pdbs: Sequence[PodDisruptionBudget] = (),
    profiles: Mapping[str, Framework] | None = None,
    default: Framework | None = None,
    seed: int = 0,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    workloads: Sequence[Workload] = (),
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Schedule `pods` in queue order on a `Simulation` of the other arguments.

    `namespaces` (name -> labels) are what the namespaceSelector of pod (anti-)affinity terms
    match; `workloads` (Services and controllers) give the selectors of PodTopologySpread's
    system defaults. Names and UIDs must be unique and `existing` pods bound to one of `nodes`
    (the CLI checks its input for that). `progress`, when given, is told (pods done, pods in
    all) after each pod, so that a long run can show how far it is.
    """
    # Objects read from files usually have no UID, and the cluster keys pods by UID.
    pods = [_with_uid(pod, "pending") for pod in pods]
    existing = [_with_uid(pod, "existing") for pod in existing]
    _require_unique([pod.uid for pod in (*pods, *existing)], "pod UIDs")
    _require_unique([pod.key for pod in (*pods, *existing)], "pod namespace/names")
    simulation = Simulation(
        nodes=nodes,
        existing=existing,
        pdbs=pdbs,
        profiles=profiles,
        default=default,
        seed=seed,
        namespaces=namespaces,
        workloads=workloads,
    )
    ordered = sorted(enumerate(pods), key=lambda item: (-item[1].priority, item[0]))
    results: dict[int, Placement] = {}
    for done, (index, pod) in enumerate(ordered, start=1):
        results[index] = simulation.place(pod)
        if progress is not None:
            progress(done, len(ordered))
    return SimulationResult([results[i] for i in range(len(pods))], simulation.cluster)


def _require_unique(values: Sequence[str], what: str) -> None:
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
