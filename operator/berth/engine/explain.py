"""Why a pod goes where it goes, or nowhere: one decision laid open, for `berth explain`.

kube-scheduler reports one aggregate line per pending pod and nothing about the scores behind a
placement. The engine computes every verdict and score anyway; this module runs the same framework
calls as `schedule_one` (PreFilter, Filter with nominated pods, PreScore, Score plugin by plugin,
PostFilter) and keeps what they say instead of only the verdict, so an explanation cannot disagree
with the decision. Two deliberate differences, both reported: every node is judged (the scheduler
stops after `numFeasibleNodesToFind` feasible ones), and scores are over all feasible nodes.
Nothing here changes the cluster or the search state; it may advance a PostFilter plugin's
tie-break generator, so a caller replaying decisions passes `run_post_filter=False`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial

from berth.engine.algorithm import (
    SearchState,
    narrowed_candidates,
    nominated_node_fits,
    num_feasible_nodes_to_find,
    record_failed_plugins,
    unschedulable_outcome,
)
from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.diagnosis import NO_NODES_AVAILABLE
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import FilterDiagnosis, PostFilterResult, ScoreBreakdown
from berth.engine.framework.runtime import Framework
from berth.engine.framework.status import Code, Status
from berth.engine.model.pod import Pod
from berth.engine.nominated import NominatedPods, with_nominated_pods
from berth.engine.plugins.default_preemption.plugin import (
    DefaultPreemption,
    eligibility_refusal,
    potential_nodes,
    select_victims_on_node,
)

__all__ = [
    "Explanation",
    "NodeScore",
    "PreemptionCandidate",
    "PreemptionExplanation",
    "RejectionGroup",
    "explain_pod",
]

EXAMPLE_NODES = 3
PREEMPTION_DRY_RUNS = 100  # potential nodes whose victims an explanation works out


@dataclass(frozen=True, slots=True)
class RejectionGroup:
    """Nodes one plugin rejected with the same code and reasons; `examples` names a few."""

    plugin: str
    code: Code
    reasons: tuple[str, ...]
    count: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeScore:
    """One feasible node: per scoring plugin (in `Explanation.score_plugins` order) its raw,
    normalized and weighted score, and the total the scheduler compares."""

    node: str
    raw: tuple[int, ...]
    normalized: tuple[int, ...]
    weighted: tuple[int, ...]
    total: int


@dataclass(frozen=True, slots=True)
class PreemptionCandidate:
    node: str
    victims: tuple[str, ...]  # namespace/name, most important first
    pdb_violations: int


@dataclass(frozen=True, slots=True)
class PreemptionExplanation:
    """What PostFilter decided, and the DefaultPreemption dry run on each node it could consider."""

    message: str
    nominated_node: str | None
    victims: tuple[str, ...]
    potential_nodes: int = 0  # nodes whose rejection preemption might resolve
    candidates: tuple[PreemptionCandidate, ...] = ()  # of the first `tried` potential nodes
    tried: int = 0
    refusal: str = ""  # why the pod may not preempt at all


@dataclass(frozen=True, slots=True)
class Explanation:
    pod: str
    profile: str
    node_count: int
    sample_size: int  # feasible nodes after which the scheduler stops searching
    feasible_count: int = 0
    message: str = ""  # the FailedScheduling message, or the error, when the pod does not fit
    error: bool = False
    pre_filter: Status | None = None  # a PreFilter rejection: it applies to every node
    rejections: tuple[RejectionGroup, ...] = ()
    score_plugins: tuple[tuple[str, int], ...] = ()  # (plugin, weight)
    ranking: tuple[NodeScore, ...] = ()  # every feasible node, best first
    tie_set: tuple[str, ...] = ()  # the nodes the scheduler picks among (at random)
    nominated_fast_path: str | None = None  # a nominated node that fits is taken unscored
    preemption: PreemptionExplanation | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def explain_pod(
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    *,
    nominated: NominatedPods | None = None,
    search: SearchState | None = None,  # only read: the scheduler's percentageOfNodesToScore
    run_post_filter: bool = True,
    preemption_dry_runs: int = PREEMPTION_DRY_RUNS,
) -> Explanation:
    """Judge `pod` on every node of `cluster` with `framework`, as `schedule_one` would."""
    search = search if search is not None else SearchState()
    state = CycleState(cluster)
    order = cluster.node_order()
    node_count = int(order.size)
    base = Explanation(
        pod=pod.key,
        profile=framework.profile_name,
        node_count=node_count,
        sample_size=_sample_size(framework, search, node_count),
    )
    if node_count == 0:
        return replace(base, message=NO_NODES_AVAILABLE, error=True)
    diagnosis = FilterDiagnosis(node_count=node_count)
    give_up = partial(
        _unschedulable,
        framework,
        state=state,
        pod=pod,
        diagnosis=diagnosis,
        run_post_filter=run_post_filter,
        dry_runs=preemption_dry_runs,
    )
    status, allowed = framework.run_pre_filter(state, pod)
    if not status.is_success:
        if not status.is_rejection:
            return replace(base, message=status.message, error=True)
        diagnosis.absent_status = status
        diagnosis.pre_filter_message = status.message
        diagnosis.record_plugin(status)
        base = replace(
            base,
            pre_filter=status,
            rejections=(
                RejectionGroup(status.plugin, status.code, status.reasons, node_count, ()),
            ),
        )
        return give_up(base=base)

    fits = nominated_node_fits(framework, state, pod, nominated or {})
    fast = pod.nominated_node_name if fits is not None else None
    candidates = narrowed_candidates(framework, state, allowed, diagnosis)
    if framework.has_filter_plugins and candidates.size:
        outcome = with_nominated_pods(
            framework, cluster, pod, framework.run_filters(state, pod, candidates), nominated or {}
        )
        diagnosis.failures.extend(f for f in outcome.failures if f.slots.size)
        if outcome.error is not None:
            return replace(
                base,
                message=outcome.error.message,
                error=True,
                rejections=_groups(cluster, diagnosis),
            )
        feasible: NodeSlots = outcome.feasible
    else:
        feasible = candidates
    record_failed_plugins(diagnosis)
    base = replace(
        base,
        feasible_count=int(feasible.size),
        rejections=_groups(cluster, diagnosis),
        nominated_fast_path=fast,
        notes=_notes(base, int(feasible.size), fast),
    )
    if feasible.size == 0:
        return give_up(base=base)
    return _scored(framework, state, pod, feasible, base)


def _sample_size(framework: Framework, search: SearchState, node_count: int) -> int:
    if not framework.has_score_plugins:
        return min(1, node_count)  # nothing to compare: the first feasible node will do
    return num_feasible_nodes_to_find(
        framework.percentage_of_nodes_to_score, search.percentage_of_nodes_to_score, node_count
    )


def _notes(base: Explanation, feasible: int, fast: str | None) -> tuple[str, ...]:
    notes = [f"evaluated all {base.node_count} nodes"]
    if base.sample_size < base.node_count:
        notes.append(
            f"the scheduler stops after {base.sample_size} feasible nodes, so with more than "
            "that it scores (and normalizes over) a sample that starts where its last search ended"
        )
    if fast is not None:
        notes.append(f"the nominated node {fast} fits: the scheduler takes it without scoring")
    elif feasible == 1:
        notes.append("one feasible node: the scheduler takes it without scoring")
    return tuple(notes)


def _groups(cluster: ClusterState, diagnosis: FilterDiagnosis) -> tuple[RejectionGroup, ...]:
    """Rejected nodes grouped by (plugin, code, reasons), largest group first."""
    slots: dict[tuple[str, int, tuple[str, ...]], list[int]] = {}
    for batch in diagnosis.failures:
        statuses: dict[tuple[int, int], Status] = {}  # by (code, reason bits)
        nodes = batch.slots.tolist()
        for index, key in enumerate(
            zip(batch.codes.tolist(), batch.reason_bits.tolist(), strict=True)
        ):
            status = statuses.get(key)
            if status is None:
                status = statuses[key] = batch.status_at(index)
            slots.setdefault((batch.plugin, int(status.code), status.reasons), []).append(
                nodes[index]
            )
    groups = [
        RejectionGroup(
            plugin,
            Code(code),
            reasons,
            len(members),
            tuple(sorted(cluster.node_at(slot).name for slot in members)[:EXAMPLE_NODES]),
        )
        for (plugin, code, reasons), members in slots.items()
    ]
    absent = diagnosis.absent_status
    missing = diagnosis.node_count - diagnosis.explicit_count
    if absent is not None and missing > 0:
        groups.append(RejectionGroup(absent.plugin, absent.code, absent.reasons, missing, ()))
    groups.sort(key=lambda group: (-group.count, group.plugin, group.reasons))
    return tuple(groups)


def _scored(
    framework: Framework, state: CycleState, pod: Pod, feasible: NodeSlots, base: Explanation
) -> Explanation:
    cluster = state.cluster
    names = [cluster.node_at(slot).name for slot in feasible.tolist()]
    if not framework.has_score_plugins:
        ranking = tuple(NodeScore(name, (), (), (), 1) for name in sorted(names))
        return replace(base, ranking=ranking, tie_set=_tie_set(base, ranking))
    pre_score = framework.run_pre_score(state, pod, feasible)
    if not pre_score.is_success:
        return replace(base, message=pre_score.message, error=True)
    breakdown = framework.score_breakdown(state, pod, feasible)
    if isinstance(breakdown, Status):
        return replace(base, message=breakdown.message, error=True)
    ranking = _ranking(names, breakdown)
    plugins = tuple(zip(breakdown.plugins, breakdown.weights.tolist(), strict=True))
    return replace(base, score_plugins=plugins, ranking=ranking, tie_set=_tie_set(base, ranking))


def _ranking(names: list[str], breakdown: ScoreBreakdown) -> tuple[NodeScore, ...]:
    weighted = breakdown.weighted
    totals = breakdown.totals
    scores = [
        NodeScore(
            name,
            tuple(breakdown.raw[:, column].tolist()),
            tuple(breakdown.normalized[:, column].tolist()),
            tuple(weighted[:, column].tolist()),
            int(totals[column]),
        )
        for column, name in enumerate(names)
    ]
    scores.sort(key=lambda score: (-score.total, score.node))
    return tuple(scores)


def _tie_set(base: Explanation, ranking: tuple[NodeScore, ...]) -> tuple[str, ...]:
    if base.nominated_fast_path is not None:
        return (base.nominated_fast_path,)
    best = ranking[0].total
    return tuple(score.node for score in ranking if score.total == best)


def _unschedulable(
    framework: Framework,
    *,
    state: CycleState,
    pod: Pod,
    diagnosis: FilterDiagnosis,
    base: Explanation,
    run_post_filter: bool,
    dry_runs: int,
) -> Explanation:
    decision = unschedulable_outcome(framework, state, pod, diagnosis, run_post_filter)
    preemption = None
    if decision.post_filter is not None:
        preemption = explain_preemption(
            framework, state.cluster, pod, diagnosis, decision.post_filter, dry_runs=dry_runs
        )
    return replace(base, message=decision.message, preemption=preemption)


def explain_preemption(
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    diagnosis: FilterDiagnosis,
    result: PostFilterResult,
    *,
    dry_runs: int = PREEMPTION_DRY_RUNS,
) -> PreemptionExplanation:
    """PostFilter's `result`, and when the profile preempts with DefaultPreemption, its victim
    search on each of the first `dry_runs` potential nodes (node order; the plugin itself
    starts at a random one and stops once it has enough candidates)."""
    summary = PreemptionExplanation(
        message=result.status.message,
        nominated_node=result.nominated_node or None,
        victims=tuple(victim.key for victim in result.victims),
    )
    if not any(isinstance(plugin, DefaultPreemption) for plugin in framework.post_filter):
        return summary
    refusal = eligibility_refusal(cluster, pod, diagnosis)
    if refusal:
        return replace(summary, refusal=refusal)
    potential = potential_nodes(cluster, diagnosis, cluster.node_order())
    tried = potential[:dry_runs].tolist()
    pdbs = list(cluster.pdbs())
    candidates = []
    with cluster.trial():
        for slot in tried:
            victims, violations, status = select_victims_on_node(
                cluster, pod, slot, pdbs, framework
            )
            if status.is_success and victims:
                candidates.append(
                    PreemptionCandidate(
                        cluster.node_at(slot).name,
                        tuple(victim.key for victim in victims),
                        violations,
                    )
                )
    return replace(
        summary, potential_nodes=int(potential.size), candidates=tuple(candidates), tried=len(tried)
    )


def rejection_histogram(explanation: Explanation) -> Mapping[str, int]:
    """Per reason, how many nodes it applies to (a node may count under several reasons)."""
    counts: dict[str, int] = {}
    for group in explanation.rejections:
        for reason in group.reasons:
            counts[reason] = counts.get(reason, 0) + group.count
    return counts
