"""DefaultPreemption (PostFilter): find a node where evicting lower-priority pods lets the pod fit.

It only decides; the scheduling layer evicts the victims and records the
nomination. The dry run takes victims out of the `ClusterState` inside
`cluster.trial()`, so the cluster is exactly as before once `post_filter` returns.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Generator, Mapping, Sequence

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.diagnosis import fit_error_message
from berth.engine.extenders import ExtenderConfig
from berth.engine.extenders.calls import ExtenderCall, ExtenderFailed
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.framework.handle import Handle, PluginsRunner
from berth.engine.framework.interfaces import FilterDiagnosis, FilterFailures, PostFilterResult
from berth.engine.framework.status import (
    SUCCESS,
    Code,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_preemption.args import DefaultPreemptionArgs
from berth.engine.plugins.default_preemption.extenders import consult_extenders
from berth.engine.plugins.default_preemption.selection import (
    Candidate,
    aggregate_errors,
    by_importance,
    pick_candidate,
    split_by_pdb_violation,
)

MESSAGE_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
NO_VICTIMS = "No preemption victims found for incoming pod"
PREEMPT_NEVER = "Never"


def found_message(node_name: str, victims: int) -> str:
    return f"found a potential placement for pod on node {node_name}, preempting {victims} victims"


def _skip_after_assigned_pod_deletion(pod: Pod, old: object, new: object) -> QueueingHint:
    # The plugins that rejected the pod decide when it is worth retrying.
    return QueueingHint.SKIP


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION

    def __init__(
        self,
        args: DefaultPreemptionArgs,
        handle: Handle,
        *,
        rng: random.Random | None = None,  # test seam: search offset and the last tie-break
    ) -> None:
        self.args = args
        # The dry run filters with this profile's own PreFilter and Filter plugins.
        self._runner: PluginsRunner = handle
        self.rng = rng if rng is not None else random.Random(0)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE),
                _skip_after_assigned_pod_deletion,
            )
        ]

    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult:
        found = self._candidates(state.cluster, pod, diagnosis, self._runner)
        if isinstance(found, PostFilterResult):
            return _prefixed(found)
        return _prefixed(self._chosen(found))

    def post_filter_steps(
        self,
        state: CycleState,
        pod: Pod,
        diagnosis: FilterDiagnosis,
        extenders: tuple[ExtenderConfig, ...],  # interested, with a preemptVerb, in call order
    ) -> Generator[ExtenderCall, object, PostFilterResult]:
        """`post_filter` with the candidates put to `extenders` before one is chosen: the
        extender calls are yielded and their answers sent back (berth.engine.extended_decision)."""
        found = self._candidates(state.cluster, pod, diagnosis, self._runner)
        if isinstance(found, PostFilterResult):
            return _prefixed(found)
        kept = yield from consult_extenders(state.cluster, pod, found, extenders)
        if isinstance(kept, ExtenderFailed):
            return _prefixed(PostFilterResult(Status(Code.ERROR, (kept.message,))))
        return _prefixed(self._chosen(kept))

    # ------------------------------------------------------------------ the evaluation

    def _candidates(
        self, cluster: ClusterState, pod: Pod, diagnosis: FilterDiagnosis, runner: PluginsRunner
    ) -> PostFilterResult | list[Candidate]:
        """The dry run's candidates, or the result when there are none."""
        refusal = eligibility_refusal(cluster, pod, diagnosis)
        if refusal:
            # No result: the pod keeps whatever nomination it has.
            return PostFilterResult(unschedulable(refusal))
        order = cluster.node_order()
        potential = potential_nodes(cluster, diagnosis, order)
        candidates: list[Candidate] = []
        statuses: dict[int, Status] = {}
        errors: list[str] = []
        if potential.size:
            offset = self.rng.randrange(potential.size)
            wanted = self.args.num_candidates(int(potential.size))
            candidates, statuses, errors = self._dry_run(
                cluster, pod, runner, potential, offset, wanted
            )
        if errors and not candidates:
            return PostFilterResult(Status(Code.ERROR, (aggregate_errors(errors),)))
        if not candidates:
            message = fit_error_message(_dry_run_diagnosis(int(order.size), statuses))
            # An empty nomination clears the pod's nominatedNodeName.
            return PostFilterResult(unschedulable(message), nominated_node="")
        return candidates

    def _chosen(self, candidates: list[Candidate]) -> PostFilterResult:
        if not candidates:
            # Extenders kept none: the pod keeps whatever nomination it has.
            return PostFilterResult(unschedulable(NO_CANDIDATE))
        best = pick_candidate(candidates, self.rng)
        return PostFilterResult(
            Status(Code.SUCCESS, (found_message(best.node_name, len(best.victims)),)),
            nominated_node=best.node_name,
            victims=best.victims,
        )

    def _dry_run(
        self,
        cluster: ClusterState,
        pod: Pod,
        runner: PluginsRunner,
        potential: NodeSlots,
        offset: int,
        wanted: int,
    ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """Try the potential nodes from `offset`, wrapping, until enough candidates are found.

        Candidates that violate no PDB come first. kube-scheduler runs this in parallel
        and cancels once it has `wanted` candidates including a non-violating one; this
        is the same search done in order.
        """
        pdbs = list(cluster.pdbs())
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, Status] = {}
        errors: list[str] = []
        count = int(potential.size)
        with cluster.trial():
            for step in range(count):
                slot = int(potential[(offset + step) % count])
                node_name = cluster.node_at(slot).name
                victims, violations, status = select_victims_on_node(
                    cluster, pod, slot, pdbs, runner
                )
                if status.is_success and victims:
                    bucket = violating if violations else clean
                    if len(bucket) < wanted:
                        bucket.append(Candidate(node_name, victims, violations))
                    if clean and len(clean) + len(violating) >= wanted:
                        break
                    continue
                if status.is_success:
                    status = error(f'expected at least one victim pod on node "{node_name}"')
                if status.code is Code.ERROR:
                    errors.append(status.message)
                statuses[slot] = status
        return clean + violating, statuses, errors


# ---------------------------------------------------------------------- steps, as free functions


def _prefixed(result: PostFilterResult) -> PostFilterResult:
    """kube-scheduler's DefaultPreemption prefixes every message it returns."""
    message = result.status.message
    if not message:
        return result
    status = Status(result.status.code, (MESSAGE_PREFIX + message,))
    return PostFilterResult(status, result.nominated_node, result.victims)


def eligibility_refusal(cluster: ClusterState, pod: Pod, diagnosis: FilterDiagnosis) -> str:
    """Why `pod` may not preempt others now ("" when it may)."""
    if pod.preemption_policy == PREEMPT_NEVER:
        return NOT_ELIGIBLE_NEVER
    if not pod.nominated_node_name:
        return ""
    slot = cluster.slot_of(pod.nominated_node_name)
    status = diagnosis.status_of(slot) if slot is not None else diagnosis.absent_status
    if status is None or status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        # Preemption cannot have helped there: look for another node.
        return ""
    if slot is None:
        return ""
    for other in cluster.pods_on(slot).values():
        if other.priority < pod.priority and other.terminating and other.preempted_by_scheduler:
            # Our earlier victims are still leaving; wait for them.
            return NOT_ELIGIBLE_TERMINATING
    return ""


def potential_nodes(
    cluster: ClusterState, diagnosis: FilterDiagnosis, order: NodeSlots
) -> NodeSlots:
    """Nodes that failed as Unschedulable (not Unresolvable), in node order.

    Nodes without their own status take the absent status: a PreFilter rejection
    applies to every node, a PreFilter node-name result rules the rest out.
    """
    absent = diagnosis.absent_status
    absent_code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if absent is None else absent.code
    codes = np.full(cluster.live.size, np.int8(absent_code), dtype=np.int8)
    for batch in diagnosis.failures:
        codes[batch.slots] = batch.codes
    potential: NodeSlots = order[codes[order] == np.int8(Code.UNSCHEDULABLE)]
    return potential


def select_victims_on_node(
    cluster: ClusterState,
    pod: Pod,
    slot: int,
    pdbs: Sequence[PodDisruptionBudget],
    runner: PluginsRunner,
) -> tuple[tuple[Pod, ...], int, Status]:
    """The fewest pods to evict from node `slot` for `pod` to fit: (victims, PDB violations, status).

    Removes every lower-priority pod; if `pod` then fits, adds them back one by one
    (PDB-violating ones first, most important first) and keeps each that still lets
    it fit. The node's pods are all back in the cluster on return.
    """
    lower = [other for other in cluster.pods_on(slot).values() if other.priority < pod.priority]
    if not lower:
        return (), 0, unresolvable(NO_VICTIMS)
    removed: dict[str, Pod] = {}
    try:
        for victim in lower:
            cluster.remove_pod(victim.uid)
            removed[victim.uid] = victim
        status = _fits(cluster, pod, slot, runner)
        if not status.is_success:
            return (), 0, status

        def reprieve(victim: Pod) -> bool:
            cluster.add_pod(victim)
            del removed[victim.uid]
            if _fits(cluster, pod, slot, runner).is_success:
                return True
            cluster.remove_pod(victim.uid)
            removed[victim.uid] = victim
            return False

        violating, clean = split_by_pdb_violation(by_importance(lower), pdbs)
        victims: list[Pod] = []
        violations = 0
        for victim in violating:
            if not reprieve(victim):
                victims.append(victim)
                violations += 1
        victims += [victim for victim in clean if not reprieve(victim)]
        if violating and clean:
            victims = by_importance(victims)
        return tuple(victims), violations, SUCCESS
    finally:
        for victim in removed.values():
            cluster.add_pod(victim)


def _fits(cluster: ClusterState, pod: Pod, slot: int, runner: PluginsRunner) -> Status:
    """PreFilter (fresh cycle state, over the cluster as it is now) and Filter on one node."""
    state = CycleState(cluster)
    status, _allowed = runner.run_pre_filter(state, pod)
    if not status.is_success:
        return status
    outcome = runner.run_filters(state, pod, np.asarray([slot], dtype=np.intp))
    if outcome.error is not None:
        return outcome.error
    if outcome.feasible.size:
        return SUCCESS
    return outcome.failures[-1].status_at(0)


def _dry_run_diagnosis(node_count: int, statuses: Mapping[int, Status]) -> FilterDiagnosis:
    """The dry run's failures as a diagnosis; every other node was not helped by preemption."""
    by_status: defaultdict[Status, list[int]] = defaultdict(list)
    for slot, status in statuses.items():
        by_status[status].append(slot)
    failures = [
        FilterFailures(
            status.plugin,
            np.asarray(slots, dtype=np.intp),
            np.full(len(slots), np.int8(status.code), dtype=np.int8),
            np.full(len(slots), np.uint64((1 << len(status.reasons)) - 1), dtype=np.uint64),
            status.reasons,
        )
        for status, slots in by_status.items()
    ]
    return FilterDiagnosis(
        node_count=node_count, failures=failures, absent_status=unresolvable(NOT_HELPFUL)
    )
