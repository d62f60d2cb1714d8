"""One scheduling decision (kube-scheduler's schedulePod + PostFilter), over a consistent cluster.

The caller guarantees that nothing mutates the `ClusterState` between the start
of `schedule_one` and assuming its result: the decision is synchronous.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.diagnosis import NO_NODES_AVAILABLE, fit_error_message
from berth.engine.framework.cycle_state import CycleMetrics, CycleState, PointTimer
from berth.engine.framework.interfaces import (
    FilterDiagnosis,
    FilterFailures,
    PostFilterResult,
    Scores,
)
from berth.engine.framework.runtime import Framework
from berth.engine.framework.status import SUCCESS, Code, Status, unresolvable
from berth.engine.model.pod import Pod
from berth.engine.nominated import NominatedPods, with_nominated_pods

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


@dataclass(slots=True)
class SearchState:
    """State carried across decisions: where the next node search starts (shared by all profiles)."""

    next_start_index: int = 0
    percentage_of_nodes_to_score: int = 0  # the global setting; 0 = adaptive


@dataclass(frozen=True, slots=True)
class Scheduled:
    node_name: str
    evaluated_nodes: int
    feasible_nodes: int
    state: CycleState


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """No node fits. `message` is the FailedScheduling text; the diagnosis drives requeueing."""

    message: str
    diagnosis: FilterDiagnosis
    post_filter: PostFilterResult | None
    state: CycleState

    @property
    def unschedulable_plugins(self) -> set[str]:
        return self.diagnosis.unschedulable_plugins


@dataclass(frozen=True, slots=True)
class SchedulingError:
    message: str
    state: CycleState | None = None


Decision = Scheduled | Unschedulable | SchedulingError


def num_feasible_nodes_to_find(
    profile_percentage: int | None, global_percentage: int, nodes: int
) -> int:
    if nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return nodes
    percentage = profile_percentage if profile_percentage is not None else global_percentage
    if percentage == 0:
        percentage = max(50 - nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    wanted = nodes * percentage // 100
    return max(wanted, MIN_FEASIBLE_NODES_TO_FIND)


def _find_feasible(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    candidates: NodeSlots,
    search: SearchState,
    diagnosis: FilterDiagnosis,
    nominated: NominatedPods,
    *,
    wants_all: bool,
) -> tuple[NodeSlots, Status | None]:
    """Filter `candidates` from the round-robin start until enough feasible nodes are found."""
    count = candidates.size
    wanted = num_feasible_nodes_to_find(
        framework.percentage_of_nodes_to_score, search.percentage_of_nodes_to_score, count
    )
    if not wants_all:
        wanted = 1
    if count == 0:
        return candidates, None
    start = search.next_start_index % count
    if not framework.has_filter_plugins:
        return _rotated(candidates, start, 0, wanted), None
    found: list[NodeSlots] = []
    found_count = 0
    position = 0
    chunk = wanted
    while found_count < wanted and position < count:
        batch = _rotated(candidates, start, position, min(chunk, count - position))
        outcome = with_nominated_pods(
            framework, state.cluster, pod, framework.run_filters(state, pod, batch), nominated
        )
        if outcome.error is not None:
            diagnosis.failures.extend(outcome.failures)
            return np.empty(0, dtype=np.intp), outcome.error
        feasible = outcome.feasible
        failures = outcome.failures
        if found_count + feasible.size >= wanted and feasible.size < batch.size:
            # Stop right after the last node we need; later nodes in the batch
            # count as never examined, as in a search that stopped there.
            needed = feasible[: wanted - found_count]
            last_position = int((batch == needed[-1]).nonzero()[0][0])
            examined = batch[: last_position + 1]
            failures = [_restrict(f, examined) for f in failures]
            feasible = needed
        elif found_count + feasible.size > wanted:
            feasible = feasible[: wanted - found_count]  # no failures: nothing to restrict
        found.append(feasible)
        found_count += feasible.size
        diagnosis.failures.extend(f for f in failures if f.slots.size)
        position += batch.size
        chunk = max(chunk * 2, 1)
    if not found:
        return np.empty(0, dtype=np.intp), None
    return (found[0] if len(found) == 1 else np.concatenate(found)), None


def _rotated(candidates: NodeSlots, start: int, position: int, size: int) -> NodeSlots:
    """`size` candidates from `position` in the order rotated to begin at `start`.

    A window that does not wrap around the end is a view; only one that does is copied.
    """
    count = candidates.size
    begin = start + position
    if begin >= count:
        begin -= count
    end = begin + size
    if end <= count:
        return candidates[begin:end]
    return np.concatenate((candidates[begin:], candidates[: end - count]))


def _restrict(failures: FilterFailures, examined: NodeSlots) -> FilterFailures:
    seen = np.zeros(
        int(max(failures.slots.max(initial=0), examined.max(initial=0))) + 1, dtype=bool
    )
    seen[examined] = True
    keep = seen[failures.slots]
    return FilterFailures(
        failures.plugin,
        failures.slots[keep],
        failures.codes[keep],
        failures.reason_bits[keep],
        failures.reasons,
    )


def _select_host(slots: NodeSlots, totals: Scores, rng: random.Random) -> int:
    top = (totals == totals.max()).nonzero()[0]
    # Uniform among the best, like kube-scheduler's randomised tie-break.
    return int(slots[top[rng.randrange(top.size)]] if top.size > 1 else slots[top[0]])


@dataclass(slots=True)
class Begun:
    """A decision past PreFilter: its cycle state, the diagnosis so far, PreFilter's node names."""

    state: CycleState
    diagnosis: FilterDiagnosis
    allowed: frozenset[str] | None


def begin_decision(
    framework: Framework, cluster: ClusterState, pod: Pod, *, metrics: CycleMetrics | None
) -> Begun | Decision:
    """Start a decision: no nodes is an error, a PreFilter rejection ends it unschedulable
    (without PostFilter yet: the caller finishes it with `unschedulable_outcome`)."""
    state = CycleState(cluster, metrics)
    node_count = cluster.node_count
    if node_count == 0:
        return SchedulingError(NO_NODES_AVAILABLE, state)
    diagnosis = FilterDiagnosis(node_count=node_count)
    timer = PointTimer(metrics, "PreFilter")
    status, allowed = framework.run_pre_filter(state, pod)
    timer(status)
    if status.is_success:
        return Begun(state, diagnosis, allowed)
    if not status.is_rejection:
        return SchedulingError(status.message, state)
    diagnosis.absent_status = status
    diagnosis.pre_filter_message = status.message
    diagnosis.record_plugin(status)
    return Unschedulable(fit_error_message(diagnosis), diagnosis, None, state)


def search_feasible(
    framework: Framework,
    begun: Begun,
    pod: Pod,
    *,
    search: SearchState,
    nominated: NominatedPods,
    wants_all: bool,
) -> NodeSlots | SchedulingError:
    """The feasible nodes of a full search (from the round-robin start), with the failures
    recorded in the diagnosis. `wants_all`: something scores or filters after the plugins
    (score plugins, extenders), so one feasible node is not enough."""
    state, diagnosis = begun.state, begun.diagnosis
    node_count = state.cluster.node_count
    candidates = narrowed_candidates(framework, state, begun.allowed, diagnosis)
    feasible, failure = _find_feasible(
        framework, state, pod, candidates, search, diagnosis, nominated, wants_all=wants_all
    )
    processed = feasible.size + diagnosis.explicit_count
    search.next_start_index = (search.next_start_index + processed) % node_count
    record_failed_plugins(diagnosis)
    if failure is not None:
        return SchedulingError(failure.message, state)
    return feasible


def plugin_totals(
    framework: Framework, state: CycleState, pod: Pod, feasible: NodeSlots, *, always: bool
) -> Scores | SchedulingError:
    """PreScore and Score over `feasible`: each node's weighted total. Without score plugins
    every node scores 1, unless `always` (extenders will add theirs to the plugins' 0s)."""
    if not (always or framework.has_score_plugins):
        return np.ones(feasible.size, dtype=np.int64)
    metrics = state.metrics
    pre_score = PointTimer(metrics, "PreScore")(framework.run_pre_score(state, pod, feasible))
    if not pre_score.is_success:
        return SchedulingError(pre_score.message, state)
    timer = PointTimer(metrics, "Score")
    scored = framework.run_score(state, pod, feasible)
    timer(scored if isinstance(scored, Status) else SUCCESS)
    if isinstance(scored, Status):
        return SchedulingError(scored.message, state)
    return scored


def scheduled_on(
    begun: Begun, feasible: NodeSlots, totals: Scores | None, rng: random.Random
) -> Scheduled:
    """The decision for a non-empty feasible list: its only node, or the best by `totals`."""
    cluster = begun.state.cluster
    explicit = begun.diagnosis.explicit_count
    if totals is None:
        return Scheduled(cluster.node_at(int(feasible[0])).name, 1 + explicit, 1, begun.state)
    chosen = _select_host(feasible, totals, rng)
    size = int(feasible.size)
    return Scheduled(cluster.node_at(chosen).name, size + explicit, size, begun.state)


def schedule_one(
    framework: Framework,
    cluster: ClusterState,
    pod: Pod,
    *,
    search: SearchState,
    rng: random.Random,  # test seam: the tie-break among equal top scores
    run_post_filter: bool = True,
    nominated: NominatedPods | None = None,
    metrics: CycleMetrics | None = None,
) -> Decision:
    """One decision for a profile without extenders (berth.engine.extended_decision has them)."""
    begun = begin_decision(framework, cluster, pod, metrics=metrics)
    if isinstance(begun, Unschedulable):
        return unschedulable_outcome(framework, begun.state, pod, begun.diagnosis, run_post_filter)
    if not isinstance(begun, Begun):
        return begun
    state = begun.state
    feasible = nominated_node_fits(framework, state, pod, nominated or {})
    if feasible is None:
        searched = search_feasible(
            framework,
            begun,
            pod,
            search=search,
            nominated=nominated or {},
            wants_all=framework.has_score_plugins,
        )
        if isinstance(searched, SchedulingError):
            return searched
        feasible = searched
    if feasible.size == 0:
        return unschedulable_outcome(framework, state, pod, begun.diagnosis, run_post_filter)
    if feasible.size == 1:
        return scheduled_on(begun, feasible, None, rng)
    totals = plugin_totals(framework, state, pod, feasible, always=False)
    if isinstance(totals, SchedulingError):
        return totals
    return scheduled_on(begun, feasible, totals, rng)


def nominated_node_fits(
    framework: Framework, state: CycleState, pod: Pod, nominated: NominatedPods
) -> NodeSlots | None:
    """The pod's nominated node, as one slot, when it passes every filter: the scheduler then
    takes it without searching or scoring."""
    if not pod.nominated_node_name:
        return None
    slot = state.cluster.slot_of(pod.nominated_node_name)
    if slot is None:
        return None
    outcome = with_nominated_pods(
        framework,
        state.cluster,
        pod,
        framework.run_filters(state, pod, np.asarray([slot], dtype=np.intp)),
        nominated,
    )
    if outcome.error is None and outcome.feasible.size:
        return outcome.feasible
    return None


def narrowed_candidates(
    framework: Framework,
    state: CycleState,
    allowed: frozenset[str] | None,
    diagnosis: FilterDiagnosis,
) -> NodeSlots:
    """The nodes, in node order, that PreFilter's node-name result leaves to filter; the others
    take the absent status in `diagnosis`."""
    cluster = state.cluster
    order = cluster.node_order()
    if allowed is None:
        return order
    allowed_slots = [cluster.slot_of(name) for name in allowed]
    narrowing = framework.narrowing_plugins(state)
    diagnosis.absent_status = unresolvable(
        f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}]"
    )
    candidates: NodeSlots = order[
        np.isin(order, [slot for slot in allowed_slots if slot is not None])
    ]
    return candidates


def record_failed_plugins(diagnosis: FilterDiagnosis) -> None:
    """Each plugin that failed a node joins the diagnosis's unschedulable (or pending) plugins."""
    for batch in diagnosis.failures:
        # The codes present, ascending: a count per code (a handful of small non-negative
        # values) rather than np.unique's sort, which also imports numpy.ma on first use.
        for code in np.flatnonzero(np.bincount(batch.codes)).tolist():
            diagnosis.record_plugin(Status(Code(code), (), batch.plugin))


def unschedulable_outcome(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: FilterDiagnosis,
    run_post_filter: bool,
) -> Unschedulable:
    post_filter: PostFilterResult | None = None
    if run_post_filter and framework.has_post_filter_plugins:
        timer = PointTimer(state.metrics, "PostFilter")
        post_filter = framework.run_post_filter(state, pod, diagnosis)
        timer(post_filter.status)
    return unschedulable(state, diagnosis, post_filter)


def unschedulable(
    state: CycleState, diagnosis: FilterDiagnosis, post_filter: PostFilterResult | None
) -> Unschedulable:
    """The decision when no node fits, with what PostFilter (if it ran) said."""
    if post_filter is not None:
        diagnosis.post_filter_message = post_filter.status.message
    return Unschedulable(fit_error_message(diagnosis), diagnosis, post_filter, state)
