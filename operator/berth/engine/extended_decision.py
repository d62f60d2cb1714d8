"""One scheduling decision for a profile with scheduler extenders, without doing any I/O.

kube-scheduler's schedulePod with extenders in it: after the filter plugins the
interested extenders filter the feasible nodes one after the other (the
non-ignorable first), their failed nodes join the diagnosis (and so the
FailedScheduling message and preemption), and after the score plugins every
interested prioritizing extender's scores are scaled, weighted and added.

The engine does not speak HTTP. `schedule_with_extenders` is a generator: it
yields each call it needs (`FilterCall`, then one `PrioritizeCalls` for the
concurrent prioritize round), is sent the answers, and returns the `Decision`.
The caller decides how to wait for the answers (the scheduler awaits them off
the event loop's critical path; `berth simulate` may wait as it likes) and
guarantees, as for `schedule_one`, that the cluster does not change until the
decision is assumed.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Mapping, Sequence

import numpy as np

from berth.engine.algorithm import (
    Begun,
    Decision,
    SchedulingError,
    SearchState,
    Unschedulable,
    begin_decision,
    nominated_node_fits,
    plugin_totals,
    scheduled_on,
    search_feasible,
    unschedulable,
    unschedulable_outcome,
)
from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.extenders import (
    ExtenderConfig,
    FilterResult,
    HostPriority,
    is_interested,
    scaled_extender_score,
)
from berth.engine.extenders.calls import (
    CandidateVictims,
    ExtenderCall,
    ExtenderFailed,
    FilterCall,
    PreemptCall,
    PrioritizeCalls,
)
from berth.engine.framework.cycle_state import CycleMetrics, CycleState, PointTimer
from berth.engine.framework.interfaces import FilterDiagnosis, FilterFailures
from berth.engine.framework.runtime import Framework
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.nominated import NominatedPods

__all__ = [
    "EXTENDER",
    "CandidateVictims",
    "DecisionSteps",
    "ExtenderCall",
    "ExtenderFailed",
    "FilterCall",
    "PreemptCall",
    "PrioritizeCalls",
    "add_extender_scores",
    "extender_failures",
    "schedule_with_extenders",
]

# The name kube-scheduler records among a pod's unschedulable plugins when extenders
# rejected nodes: any cluster event may then help the pod.
EXTENDER = "Extender"
# A FilterFailures batch selects its reasons with the bits of a uint64.
_REASONS_PER_BATCH = 64


FilterAnswer = FilterResult | ExtenderFailed
PrioritizeAnswer = tuple[HostPriority, ...] | ExtenderFailed
DecisionSteps = Generator[ExtenderCall, object, Decision]


def schedule_with_extenders(
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    *,
    extenders: tuple[ExtenderConfig, ...],  # every extender of the profile, in call order
    search: SearchState,
    rng: random.Random,  # test seam: the tie-break among equal top scores
    run_post_filter: bool = True,
    nominated: NominatedPods | None = None,
    metrics: CycleMetrics | None = None,
) -> DecisionSteps:
    interested = tuple(extender for extender in extenders if is_interested(extender, pod))
    begun = begin_decision(framework, cluster, pod, metrics=metrics)
    if isinstance(begun, Unschedulable):
        return (
            yield from _unschedulable(
                framework, begun.state, pod, begun.diagnosis, run_post_filter, interested
            )
        )
    if not isinstance(begun, Begun):
        return begun
    state, diagnosis = begun.state, begun.diagnosis
    feasible = nominated_node_fits(framework, state, pod, nominated or {})
    if feasible is not None:
        # The nominated node must pass the extenders too; its trial leaves no trace in
        # the diagnosis when it does not (the full search judges that node again).
        trial = FilterDiagnosis(node_count=diagnosis.node_count)
        passed = yield from _extender_filters(interested, pod, cluster, feasible, trial)
        feasible = passed if isinstance(passed, np.ndarray) and passed.size else None
    if feasible is None:
        wants_all = framework.has_score_plugins or any(
            extender.is_filter or extender.is_prioritizer for extender in extenders
        )
        searched = search_feasible(
            framework, begun, pod, search=search, nominated=nominated or {}, wants_all=wants_all
        )
        if isinstance(searched, SchedulingError):
            return searched
        passed = yield from _extender_filters(interested, pod, cluster, searched, diagnosis)
        if isinstance(passed, ExtenderFailed):
            return SchedulingError(passed.message, state)
        if passed.size != searched.size:
            diagnosis.unschedulable_plugins.add(EXTENDER)
        feasible = passed
    if feasible.size == 0:
        return (
            yield from _unschedulable(framework, state, pod, diagnosis, run_post_filter, interested)
        )
    if feasible.size == 1:
        return scheduled_on(begun, feasible, None, rng)
    totals = plugin_totals(framework, state, pod, feasible, always=bool(extenders))
    if isinstance(totals, SchedulingError):
        return totals
    prioritizers = tuple(extender for extender in interested if extender.is_prioritizer)
    if prioritizers:
        nodes = tuple(cluster.node_at(int(slot)) for slot in feasible)
        answers = yield PrioritizeCalls(prioritizers, pod, nodes)
        add_extender_scores(totals, nodes, prioritizers, _as_answers(answers, len(prioritizers)))
    return scheduled_on(begun, feasible, totals, rng)


def _unschedulable(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: FilterDiagnosis,
    run_post_filter: bool,
    interested: tuple[ExtenderConfig, ...],
) -> Generator[ExtenderCall, object, Unschedulable]:
    """`unschedulable_outcome`, with the interested preempting extenders consulted by
    DefaultPreemption (kube-scheduler's callExtenders)."""
    preempting = tuple(extender for extender in interested if extender.supports_preemption)
    if not (preempting and run_post_filter and framework.has_post_filter_plugins):
        return unschedulable_outcome(framework, state, pod, diagnosis, run_post_filter)
    timer = PointTimer(state.metrics, "PostFilter")
    post_filter = yield from framework.post_filter_steps(
        state, pod, diagnosis, extenders=preempting
    )
    timer(post_filter.status)
    return unschedulable(state, diagnosis, post_filter)


def _extender_filters(
    extenders: tuple[ExtenderConfig, ...],
    pod: Pod,
    cluster: ClusterState,
    feasible: NodeSlots,
    diagnosis: FilterDiagnosis,
) -> Generator[ExtenderCall, object, NodeSlots | ExtenderFailed]:
    """findNodesThatPassExtenders: each filtering extender narrows what the previous left."""
    for extender in extenders:
        if feasible.size == 0:
            break
        if not extender.is_filter:
            continue
        nodes = tuple(cluster.node_at(int(slot)) for slot in feasible)
        answer = yield FilterCall(extender, pod, nodes)
        if isinstance(answer, ExtenderFailed):
            if extender.ignorable:
                continue
            return answer
        if not isinstance(answer, FilterResult):
            raise TypeError(f"a FilterCall is answered with a FilterResult, not {answer!r}")
        offered = {node.name: int(slot) for node, slot in zip(nodes, feasible, strict=True)}
        diagnosis.failures.extend(extender_failures(answer, offered))
        kept = [offered[name] for name in answer.node_names if name in offered]
        feasible = np.asarray(kept, dtype=np.intp)
    return feasible


def extender_failures(result: FilterResult, offered: Mapping[str, int]) -> list[FilterFailures]:
    """The statuses an extender gave the nodes it was offered: FailedAndUnresolvableNodes are
    UnschedulableAndUnresolvable and win over FailedNodes, which are Unschedulable. Each
    node's one reason is the extender's text. (Names it was not offered are left out.)"""
    statuses: dict[int, tuple[Code, str]] = {}
    for name, reason in result.failed_and_unresolvable.items():
        if name in offered:
            statuses[offered[name]] = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
    for name, reason in result.failed.items():
        if name in offered and name not in result.failed_and_unresolvable:
            statuses[offered[name]] = (Code.UNSCHEDULABLE, reason)
    batches: list[FilterFailures] = []
    items = list(statuses.items())
    while items:
        reasons: dict[str, int] = {}
        taken = 0
        for _slot, (_code, reason) in items:
            if reason not in reasons:
                if len(reasons) == _REASONS_PER_BATCH:
                    break
                reasons[reason] = len(reasons)
            taken += 1
        batch, items = items[:taken], items[taken:]
        batches.append(
            FilterFailures(
                "",  # kube-scheduler's extender statuses name no plugin
                np.asarray([slot for slot, _ in batch], dtype=np.intp),
                np.asarray([int(code) for _, (code, _) in batch], dtype=np.int8),
                np.asarray([1 << reasons[reason] for _, (_, reason) in batch], dtype=np.uint64),
                tuple(reasons),
            )
        )
    return batches


def add_extender_scores(
    totals: np.ndarray,  # the plugins' weighted totals, one per node; extended in place
    nodes: Sequence[Node],
    extenders: Sequence[ExtenderConfig],
    answers: Sequence[PrioritizeAnswer],
) -> None:
    """Add each extender's scores (x weight, scaled to the node score range) to its hosts'
    totals. A failed extender gives no scores, whether ignorable or not, as upstream."""
    index = {node.name: position for position, node in enumerate(nodes)}
    for extender, answer in zip(extenders, answers, strict=True):
        if isinstance(answer, ExtenderFailed):
            continue
        for priority in answer:
            position = index.get(priority.host)
            if position is not None:
                totals[position] += scaled_extender_score(priority.score, extender.weight)


def _as_answers(answers: object, count: int) -> tuple[PrioritizeAnswer, ...]:
    if not isinstance(answers, tuple) or len(answers) != count:
        raise TypeError(f"PrioritizeCalls is answered with {count} answers, not {answers!r}")
    return answers
