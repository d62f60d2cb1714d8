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

from berth.engine.algorithm import (
    Decision,
    Scheduled,
    SchedulingError,
    SearchState,
    Unschedulable,
    schedule_one,
)
from berth.engine.cluster import ClusterState, Workload
from berth.engine.cluster.storage import StorageObject
from berth.engine.diagnosis import one_node_message
from berth.engine.dra.claims import ResourceClaimTemplate
from berth.engine.explain import Explanation, explain_pod, explain_preemption
from berth.engine.extended_decision import ExtenderCall, schedule_with_extenders
from berth.engine.framework.handle import FrameworkServices
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.parsing import brief
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.nominated import NominatedPods
from berth.scheduling.extender_steps import drive_blocking, drive_without_calls
from berth.scheduling.simulated_binding import create_ephemeral_claims, settle_assumed_bindings
from berth.scheduling.simulated_claims import (
    ClaimDevices,
    DraInputObject,
    claim_templates,
    create_generated_claims,
    placed_devices,
    settle_assumed_allocations,
)

# Answers one extender call of a decision (berth simulate calls the extenders over HTTP).
ExtenderAnswers = Callable[[ExtenderCall], object]


@dataclass(frozen=True, slots=True)
class Placement:
    pod: Pod
    node: str | None
    message: str
    # Set when the pod did not fit but preemption found room: where it would go once the
    # victims are gone. The simulation does not evict them; it reports them.
    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()
    explanation: Explanation | None = None  # with `explain=True`, for pods the scheduler tried
    # For a placed pod with DRA claims: the devices each claim holds once it is placed.
    claims: tuple[ClaimDevices, ...] = ()


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
    `namespaces` and `workloads` are the cluster context affinity and spreading defaults read;
    `storage` the volume plugins' objects, `dra` DynamicResources' (and claim templates).
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
        storage: Sequence[StorageObject] = (),
        dra: Sequence[DraInputObject] = (),
        extenders: ExtenderAnswers | None = None,
    ) -> None:
        if (profiles is None) == (default is None):
            raise ValueError("pass exactly one of profiles= or default=")
        self._extenders = extenders
        existing = [_with_uid(pod, "existing") for pod in existing]
        self.cluster = build_cluster(
            nodes=nodes,
            existing=existing,
            pdbs=pdbs,
            namespaces=namespaces,
            workloads=workloads,
            storage=storage,
            dra=dra,
        )
        self._templates = claim_templates(dra)
        _serve(self.cluster, profiles, default)
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

    def place(self, pod: Pod, *, explain: bool = False) -> Placement:
        """Schedule `pod` now and, when it gets a node, account it there; with `explain`, also
        say why (which changes no decision)."""
        pod = _with_uid(pod, "pending")
        if pod.key in self._keys or pod.uid in self._uids:
            raise ValueError(f"pod {pod.key} (uid {pod.uid}) is already in the simulation")
        self._keys.add(pod.key)
        self._uids.add(pod.uid)
        create_ephemeral_claims(pod, self.cluster.storage)
        pod = create_generated_claims(pod, self.cluster.dra, self._templates)
        framework = _framework_for(pod, self._profiles, self._default)
        # kube-scheduler sums requests in int64 and absurd amounts wrap there without a word;
        # numpy does the same here, and should not warn about it.
        with np.errstate(over="ignore"):
            placement = _place(
                pod,
                self.cluster,
                framework,
                self._search,
                self._rng,
                explain=explain,
                extenders=self._extenders,
            )
        if placement.node is None or not (pod.resource_claims or pod.extended_resource_containers):
            return placement
        return replace(placement, claims=placed_devices(placement.pod, self.cluster.dra))


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
    storage: Sequence[StorageObject] = (),
    dra: Sequence[DraInputObject] = (),
    progress: Callable[[int, int], None] | None = None,
    explain: bool = False,
    extenders: ExtenderAnswers | None = None,
) -> SimulationResult:
    """Schedule `pods` in queue order on a `Simulation` of the other arguments.

    Names and UIDs must be unique and `existing` pods bound to one of `nodes` (the CLI checks
    its input for that). `progress`, when given, is told (pods done, pods in all) after each
    pod, so that a long run can show how far it is. With `explain`, each pod the scheduler
    tries also gets an explanation of its decision (which does not change any decision).
    `extenders` answers the calls to the extenders of profiles that have them (a profile's
    extenders interested in a pod cannot be left out: without it such a pod fails).
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
        storage=storage,
        dra=dra,
        extenders=extenders,
    )
    ordered = sorted(enumerate(pods), key=lambda item: (-item[1].priority, item[0]))
    results: dict[int, Placement] = {}
    for done, (index, pod) in enumerate(ordered, start=1):
        results[index] = simulation.place(pod, explain=explain)
        if progress is not None:
            progress(done, len(ordered))
    return SimulationResult([results[i] for i in range(len(pods))], simulation.cluster)


def build_cluster(
    *,
    nodes: Sequence[Node],
    existing: Sequence[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    pending: Sequence[Pod] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    workloads: Sequence[Workload] = (),
    storage: Sequence[StorageObject] = (),
    dra: Sequence[DraInputObject] = (),
) -> ClusterState:
    """The cluster `nodes`, the bound `existing` pods, `pdbs`, the `storage` objects (PVs,
    claims, classes, CSI objects) and the `dra` objects (classes, claims, slices, taint rules;
    templates are the controller's, not the cluster's) make; identities are checked across
    `pending` pods too, which share the cluster once placed."""
    existing = [_with_uid(pod, "existing") for pod in existing]
    _require_unique([pod.uid for pod in (*pending, *existing)], "pod UIDs")
    _require_unique([pod.key for pod in (*pending, *existing)], "pod namespace/names")
    _require_unique([node.name for node in nodes], "node names")
    cluster = ClusterState()
    for node in nodes:
        cluster.upsert_node(node)
    for pod in existing:
        if not pod.is_terminal:
            cluster.add_pod(pod)
    for pdb in pdbs:
        cluster.set_pdb(pdb)
    for name, labels in (namespaces or {}).items():
        cluster.set_namespace(name, labels)
    for workload in workloads:
        cluster.set_workload(workload)
    for obj in storage:
        cluster.storage.upsert(obj)
    for dra_obj in dra:
        if not isinstance(dra_obj, ResourceClaimTemplate):
            cluster.dra.upsert(dra_obj)
    return cluster


def explain(
    pod: Pod,
    *,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    pdbs: Sequence[PodDisruptionBudget] = (),
    profiles: Mapping[str, Framework] | None = None,
    default: Framework | None = None,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    workloads: Sequence[Workload] = (),
    nominated: NominatedPods | None = None,
    storage: Sequence[StorageObject] = (),
    dra: Sequence[DraInputObject] = (),
) -> Explanation | str:
    """Why `pod` would go where it goes on this cluster; or, as a string, why the scheduler
    would not try it at all (bound already, gated, no profile for its schedulerName...).
    `namespaces` gives namespace labels (for namespace selectors), `workloads` the selectors of
    services and controllers (for default spreading), `nominated` the pending pods nominated to
    each node, `storage` the PVs, claims, classes and CSI objects, `dra` the DRA objects."""
    if (profiles is None) == (default is None):
        raise ValueError("pass exactly one of profiles= or default=")
    pod = _with_uid(pod, "pending")
    cluster = build_cluster(
        nodes=nodes,
        existing=existing,
        pdbs=pdbs,
        pending=[pod],
        namespaces=namespaces,
        workloads=workloads,
        storage=storage,
        dra=dra,
    )
    create_ephemeral_claims(pod, cluster.storage)
    pod = create_generated_claims(pod, cluster.dra, claim_templates(dra))
    _serve(cluster, profiles, default)
    framework = _framework_for(pod, profiles, default)
    if pod.node_name and cluster.slot_of(pod.node_name) is not None:
        return f"already assigned to {pod.node_name}: no scheduler places it"
    skipped = _skip_reason(pod, cluster, framework)
    if skipped is not None or framework is None:
        return skipped or ""
    with np.errstate(over="ignore"):
        return explain_pod(framework, cluster, pod, nominated=nominated)


def _serve(
    cluster: ClusterState, profiles: Mapping[str, Framework] | None, default: Framework | None
) -> None:
    """Plugins that read the cluster outside a cycle (PreEnqueue, queueing hints) read this one;
    nothing else is served offline (no binder, no events)."""
    for framework in (profiles or {}).values() if default is None else (default,):
        framework.serve(FrameworkServices(cluster=cluster))


def _framework_for(
    pod: Pod, profiles: Mapping[str, Framework] | None, default: Framework | None
) -> Framework | None:
    return default if profiles is None else profiles.get(pod.scheduler_name)


def _require_unique(values: Sequence[str], what: str) -> None:
    # Two objects of one identity would share one slot in the cluster and be counted once.
    if len(set(values)) != len(values):
        raise ValueError(f"{what} must be unique")


def _with_uid(pod: Pod, origin: str) -> Pod:
    return pod if pod.uid else replace(pod, uid=f"{origin}:{pod.namespace}/{pod.name}")


def _place(
    pod: Pod,
    cluster: ClusterState,
    framework: Framework | None,
    search: SearchState,
    rng: random.Random,
    *,
    explain: bool,
    extenders: ExtenderAnswers | None,
) -> Placement:
    if pod.node_name and cluster.slot_of(pod.node_name) is not None:
        cluster.add_pod(pod)
        return Placement(pod, pod.node_name, "already assigned")
    skipped = _skip_reason(pod, cluster, framework)
    if skipped is not None or framework is None:
        return Placement(pod, None, skipped or "")
    # Explained first, without PostFilter (whose tie-break would advance): the decision that
    # follows is the one a run without --explain makes.
    explanation = (
        explain_pod(framework, cluster, pod, search=search, run_post_filter=False)
        if explain
        else None
    )
    decision = _decide(pod, cluster, framework, search, rng, extenders)
    if isinstance(decision, Scheduled):
        rejected = _reserve(pod, cluster, framework, decision)
        if rejected is not None:
            return Placement(pod, None, rejected, explanation=explanation)
        return Placement(
            pod,
            decision.node_name,
            f"Successfully assigned {pod.key} to {decision.node_name}",
            explanation=explanation,
        )
    if isinstance(decision, SchedulingError):
        return Placement(pod, None, decision.message, explanation=explanation)
    if explanation is not None:
        explanation = _with_preemption(explanation, framework, cluster, pod, decision)
    preemption = decision.post_filter
    if preemption is not None and preemption.nominated_node:
        return Placement(
            pod,
            None,
            decision.message,
            preemption.nominated_node,
            preemption.victims,
            explanation=explanation,
        )
    return Placement(pod, None, decision.message, explanation=explanation)


def _reserve(
    pod: Pod, cluster: ClusterState, framework: Framework, decision: Scheduled
) -> str | None:
    """Assume the pod on its node and run Reserve, as the scheduling cycle does; None when
    it holds, else the failure message (and the assumption undone).

    Reserve is where plugins assume what the pod will hold (VolumeBinding its volume
    bindings, DynamicResources its allocations); with no API to write them to, they are then
    settled as the cluster would settle them, so later pods see them (see simulated_binding
    and simulated_claims).
    """
    node_name = decision.node_name
    cluster.add_pod(pod.assigned_to(node_name))
    status = framework.run_reserve(decision.state, pod, node_name)
    if not status.is_success:
        framework.run_unreserve(decision.state, pod, node_name)
        cluster.remove_pod(pod.uid)
        return one_node_message(node_name, status) if status.is_rejection else status.message
    settle_assumed_bindings(cluster.storage)
    settle_assumed_allocations(pod, cluster.dra)
    return None


def _decide(
    pod: Pod,
    cluster: ClusterState,
    framework: Framework,
    search: SearchState,
    rng: random.Random,
    extenders: ExtenderAnswers | None,
) -> Decision:
    if not framework.extenders:
        return schedule_one(framework, cluster, pod, search=search, rng=rng)
    steps = schedule_with_extenders(
        framework, cluster, pod, extenders=framework.extenders, search=search, rng=rng
    )
    if extenders is None:
        try:
            return drive_without_calls(steps)
        except RuntimeError as error:
            return SchedulingError(str(error))
    return drive_blocking(steps, extenders)


def _with_preemption(
    explanation: Explanation,
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    decision: Unschedulable,
) -> Explanation:
    """The explanation with the decision's own PostFilter result and message."""
    preemption = None
    if decision.post_filter is not None:
        preemption = explain_preemption(
            framework, cluster, pod, decision.diagnosis, decision.post_filter
        )
    return replace(explanation, message=decision.message, preemption=preemption)


def _skip_reason(pod: Pod, cluster: ClusterState, framework: Framework | None) -> str | None:
    """Why the scheduler would not try `pod` (None when it would)."""
    if pod.node_name:
        # kube-scheduler never sees a pod created with spec.nodeName: the kubelet of that
        # node runs it. On a node that does not exist, nothing ever will.
        return _unknown_node_message(pod.node_name)
    if pod.is_terminal:
        return f"skipped: pod is {pod.phase}"
    if framework is None:
        return f"skipped: no profile serves schedulerName {pod.scheduler_name!r}"
    if pod.terminating:
        return f"skip schedule deleting pod: {pod.key}"
    if framework.services.cluster is not cluster:
        # PreEnqueue plugins look the pod's objects up in the cluster their framework serves
        # (DynamicResources its claims): here that is the simulated cluster, ports inert.
        framework.serve(FrameworkServices(cluster=cluster))
    gate = framework.run_pre_enqueue(pod)
    if not gate.is_success:
        return gate.message
    return None


def _unknown_node_message(node_name: str) -> str:
    return (
        f"spec.nodeName names node {brief(node_name)}, which does not exist: no scheduler places "
        "this pod and it stays Pending until such a node appears"
    )
