"""The framework runtime: a profile's plugin lists, and running each extension point.

Construction (`building.py`) mirrors kube-scheduler's (multiPoint expansion,
per-point overrides, score weights); running mirrors its rules (PreFilter merging,
first failing filter per node, Skip, score range checks, weighted sums).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import NodeSlots
from berth.engine.extenders.calls import ExtenderCall, finished_without_calls
from berth.engine.extenders.config import ExtenderConfig, in_call_order
from berth.engine.framework.building import assemble
from berth.engine.framework.cycle_state import CycleState, PointTimer
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.handle import FrameworkServices
from berth.engine.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    FilterDiagnosis,
    FilterFailures,
    FilterPlugin,
    NormalizeScorePlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreBreakdown,
    ScorePlugin,
    Scores,
)
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from berth.engine.framework.waiting_pods import MAX_PERMIT_WAIT_SECONDS, WaitingPods
from berth.engine.model.pod import Pod
from berth.engine.profile import EXTENSION_POINTS, ProfileConfig

if TYPE_CHECKING:
    from berth.engine.registry import Registry

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    """Filters over one batch: the rows that passed, in order, and what failed."""

    feasible: NodeSlots
    failures: list[FilterFailures]
    error: Status | None = None


class Framework:
    """One profile's plugins, ready to run. Immutable once built; swap a whole new one to change it.

    It is also the `Handle` its plugins get from their factories (as in kube-scheduler).
    """

    def __init__(self, config: ProfileConfig, registry: Registry) -> None:
        self.config = config
        self.profile_name = config.scheduler_name
        self.percentage_of_nodes_to_score = config.percentage_of_nodes_to_score
        # In the order kube-scheduler calls them (the non-ignorable first).
        self.extenders = in_call_order(config.extenders)
        self.waiting_pods = WaitingPods()
        # Inert until a scheduler serves this profile (see `serve`).
        self.services = FrameworkServices()
        built = assemble(config, registry, handle=self)
        self.plugins: dict[str, Plugin] = built.plugins
        self.points: dict[str, list[Plugin]] = built.points
        self.pre_enqueue: list[PreEnqueuePlugin] = self._typed("preEnqueue")
        self.pre_filter: list[PreFilterPlugin] = self._typed("preFilter")
        self.filter: list[FilterPlugin] = self._typed("filter")
        self.post_filter: list[PostFilterPlugin] = self._typed("postFilter")
        self.pre_score: list[PreScorePlugin] = self._typed("preScore")
        self.score: list[ScorePlugin] = self._typed("score")
        self.reserve: list[ReservePlugin] = self._typed("reserve")
        self.permit: list[PermitPlugin] = self._typed("permit")
        self.pre_bind: list[PreBindPlugin] = self._typed("preBind")
        self.bind: list[BindPlugin] = self._typed("bind")
        self.post_bind: list[PostBindPlugin] = self._typed("postBind")
        self.queue_sort: QueueSortPlugin = self._typed("queueSort")[0]
        self.score_weights = built.score_weights
        self._events = built.events
        # Protocol isinstance checks are slow; settle them once, not per decision.
        self._scoring: list[tuple[Any, bool, int]] = [
            (plugin, isinstance(plugin, NormalizeScorePlugin), self.score_weights[plugin.name])
            for plugin in self.score
        ]

    def serve(self, services: FrameworkServices) -> None:
        """A scheduler starts running this profile: its plugins now reach the scheduler's ports."""
        self.services = services

    def _typed(self, point: str) -> list[Any]:
        # `assemble` already checked each plugin against the point's Protocol.
        return list(self.points[point])

    # ------------------------------------------------------------------ queueing

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for plugin in self.pre_enqueue:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as failure:
                return _raised("PreEnqueue", plugin.name, failure)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per plugin that says so, the cluster events that may help pods it rejected (asked
        once, when the profile was built)."""
        return {name: list(events) for name, events in self._events.items()}

    # ------------------------------------------------------------------ filtering

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[Status, frozenset[str] | None]:
        """Run PreFilter plugins; returns the merged status and the allowed node names (None = all)."""
        allowed: frozenset[str] | None = None
        narrowing: list[str] = []
        held: Status | None = None
        timer = state.plugin_timer
        for plugin in self.pre_filter:
            started = timer.clock() if timer else 0.0
            try:
                result = plugin.pre_filter(state, pod)
            except Exception as failure:
                return _raised("PreFilter", plugin.name, failure), None
            status = result.status
            if timer:
                timer.plugin_done(plugin.name, "PreFilter", status.code.label, started)
            if status.is_skip:
                state.skip_filter_plugins.add(plugin.name)
                continue
            if not status.is_success:
                status = status.with_plugin(plugin.name)
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return status, None
                if status.code is Code.UNSCHEDULABLE:
                    # Keep going so that preemption sees every plugin's state.
                    held = status
                    continue
                return error(
                    f'running PreFilter plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name), None
            if result.node_names is not None:
                narrowing.append(plugin.name)
                allowed = result.node_names if allowed is None else allowed & result.node_names
                if not allowed:
                    listed = sorted(narrowing)
                    message = (
                        f"node(s) didn't satisfy plugin {listed[0]}"
                        if len(listed) == 1
                        else f"node(s) didn't satisfy plugin(s) [{' '.join(listed)}] simultaneously"
                    )
                    return unresolvable(message), allowed
        state.write(_NARROWING_KEY, tuple(sorted(narrowing)))
        return (held or SUCCESS), allowed

    def narrowing_plugins(self, state: CycleState) -> tuple[str, ...]:
        return state.get(_NARROWING_KEY, tuple) or ()

    def run_filters(self, state: CycleState, pod: Pod, slots: NodeSlots) -> FilterOutcome:
        alive = slots
        failures: list[FilterFailures] = []
        timer = state.plugin_timer
        for plugin in self.filter:
            if plugin.name in state.skip_filter_plugins or alive.size == 0:
                continue
            started = timer.clock() if timer else 0.0
            try:
                verdicts = plugin.filter(state, pod, alive)
            except Exception as failure:
                return FilterOutcome(alive, failures, _raised("Filter", plugin.name, failure))
            if timer:
                # One batch call stands for many per-node calls; record it once.
                timer.plugin_done(plugin.name, "Filter", "Success", started)
            if verdicts.all_pass:
                continue
            rejected = verdicts.codes != 0
            if not rejected.any():
                continue
            codes = verdicts.codes[rejected]
            failures.append(
                FilterFailures(
                    plugin.name,
                    alive[rejected],
                    codes,
                    verdicts.reason_bits[rejected],
                    verdicts.reasons,
                )
            )
            broken = codes == Code.ERROR
            if broken.any():
                reasons = failures[-1].status_at(int(np.flatnonzero(broken)[0])).message
                return FilterOutcome(
                    alive, failures, error(f'running "{plugin.name}" filter plugin: {reasons}')
                )
            alive = alive[~rejected]
        return FilterOutcome(alive, failures)

    def run_post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult:
        steps = self.post_filter_steps(state, pod, diagnosis, extenders=())
        return finished_without_calls(steps, "PostFilter")

    def post_filter_steps(
        self,
        state: CycleState,
        pod: Pod,
        diagnosis: FilterDiagnosis,
        *,
        extenders: tuple[ExtenderConfig, ...],  # interested, with a preemptVerb, in call order
    ) -> Generator[ExtenderCall, object, PostFilterResult]:
        """Run PostFilter plugins until one succeeds; a plugin that consults preempting
        extenders (`post_filter_steps`, DefaultPreemption) yields their calls when there are any."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.post_filter:
            consult = getattr(plugin, "post_filter_steps", None) if extenders else None
            outcome: PostFilterResult
            try:
                if consult is not None:
                    outcome = yield from consult(state, pod, diagnosis, extenders)
                else:
                    outcome = plugin.post_filter(state, pod, diagnosis)
            except Exception as failure:
                return PostFilterResult(_raised("PostFilter", plugin.name, failure))
            status = outcome.status
            if status.is_success:
                return outcome
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return PostFilterResult(status.with_plugin(plugin.name), outcome.nominated_node)
            if not status.is_rejection:
                return PostFilterResult(Status(Code.ERROR, status.reasons, plugin.name))
            if outcome.nominated_node is not None:
                result = outcome
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        nominated = result.nominated_node if result is not None else None
        return PostFilterResult(Status(Code.UNSCHEDULABLE, tuple(reasons), rejector), nominated)

    # ------------------------------------------------------------------ scoring

    def run_pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        timer = state.plugin_timer
        for plugin in self.pre_score:
            started = timer.clock() if timer else 0.0
            try:
                status = plugin.pre_score(state, pod, slots)
            except Exception as failure:
                return _raised("PreScore", plugin.name, failure)
            if timer:
                timer.plugin_done(plugin.name, "PreScore", status.code.label, started)
            if status.is_skip:
                state.skip_score_plugins.add(plugin.name)
            elif not status.is_success:
                return error(f'running PreScore plugin "{plugin.name}": {status.message}')
        return SUCCESS

    def run_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores | Status:
        """Weighted total per node, or an error status naming the plugin at fault."""
        scored = self._score_matrix(state, pod, slots, raw=None)
        if isinstance(scored, Status):
            return scored
        matrix, _names, weights = scored
        if not weights:
            return np.zeros(slots.size, dtype=np.int64)
        total: Scores = np.asarray(weights, dtype=np.int64) @ matrix
        return total

    def score_breakdown(
        self, state: CycleState, pod: Pod, slots: NodeSlots
    ) -> ScoreBreakdown | Status:
        """What `run_score` sums, plugin by plugin: raw, normalized and weighted scores per node.

        For explanations; the scheduling cycle calls `run_score`, which keeps no raw copies.
        """
        raw: list[Scores] = []
        scored = self._score_matrix(state, pod, slots, raw=raw)
        if isinstance(scored, Status):
            return scored
        matrix, names, weights = scored
        return ScoreBreakdown(
            plugins=tuple(names),
            weights=np.asarray(weights, dtype=np.int64),
            raw=np.asarray(raw, dtype=np.int64).reshape(len(names), slots.size),
            normalized=matrix,
        )

    def _score_matrix(
        self, state: CycleState, pod: Pod, slots: NodeSlots, *, raw: list[Scores] | None
    ) -> tuple[NDArray[np.int64], list[str], list[int]] | Status:
        """Each scoring plugin's normalized row (skipped plugins left out), range-checked;
        with `raw`, each plugin's scores before normalizing are appended to it."""
        matrix = np.empty((len(self._scoring), slots.size), dtype=np.int64)
        weights: list[int] = []
        scored: list[str] = []
        timer = state.plugin_timer
        for plugin, normalizes, weight in self._scoring:
            if plugin.name in state.skip_score_plugins:
                continue
            started = timer.clock() if timer else 0.0
            try:
                scores = plugin.score(state, pod, slots)
            except Exception as failure:
                return _raised("Score", plugin.name, failure)
            if timer:
                timer.plugin_done(plugin.name, "Score", "Success", started)
                started = timer.clock()
            if raw is not None:
                raw.append(np.array(scores, dtype=np.int64))  # a copy: normalizing may reuse it
            if normalizes:
                try:
                    scores = plugin.normalize_scores(state, pod, slots, scores)
                except Exception as failure:
                    return _raised("NormalizeScore", plugin.name, failure)
                if timer:
                    timer.plugin_done(plugin.name, "ScoreExtensionNormalize", "Success", started)
            matrix[len(weights)] = scores
            weights.append(weight)
            scored.append(plugin.name)
        matrix = matrix[: len(weights)]
        # One range check over all plugins at once: as unsigned, a negative score is huge too.
        if weights and int(matrix.view(np.uint64).max()) > MAX_NODE_SCORE:
            for row, name in enumerate(scored):
                out_of_range = (matrix[row] > MAX_NODE_SCORE) | (matrix[row] < MIN_NODE_SCORE)
                if out_of_range.any():
                    bad = int(matrix[row][out_of_range.nonzero()[0][0]])
                    return error(
                        f'plugin "{name}" returns an invalid score {bad}, it should in the range '
                        f"of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
        return matrix, scored, weights

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score)

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self.filter)

    @property
    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter)

    # ------------------------------------------------------------------ reserve / permit

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        done = PointTimer(state.metrics, "Reserve")
        for plugin in self.reserve:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as failure:
                return done(_raised("Reserve", plugin.name, failure))
            if not status.is_success:
                return done(_failed("Reserve", plugin.name, status))
        return done(SUCCESS)

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        done = PointTimer(state.metrics, "Unreserve")
        # Unreserve runs in reverse order, like releasing nested locks.
        for plugin in reversed(self.reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                # Nothing to answer, and every other plugin must still release what it holds.
                logger.exception("Unreserve plugin %s failed for pod %s", plugin.name, pod.key)
        done(SUCCESS)

    def run_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, dict[str, float]]:
        """Success; or Wait with each waiting plugin's timeout (capped at 15 min); or the
        first rejection or error."""
        waits: dict[str, float] = {}
        done = PointTimer(state.metrics, "Permit")
        for plugin in self.permit:
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as failure:
                return done(_raised("Permit", plugin.name, failure)), {}
            if status.code is Code.WAIT:
                waits[plugin.name] = min(max(timeout, 0.0), MAX_PERMIT_WAIT_SECONDS)
            elif not status.is_success:
                return done(_failed("Permit", plugin.name, status)), {}
        if waits:
            return done(Status(Code.WAIT)), waits
        return done(SUCCESS), {}

    # ------------------------------------------------------------------ the binding cycle

    def run_pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success when some PreBind plugin will do work; Skip when none will; or an error.

        Plugins that answer Skip are not run at PreBind.
        """
        verdict = SKIP
        done = PointTimer(state.metrics, "PreBindPreFlight")
        for plugin in self.pre_bind:
            try:
                status = plugin.pre_bind_pre_flight(state, pod, node_name)
            except Exception as failure:
                return done(_raised("PreBindPreFlight", plugin.name, failure))
            if status.is_success:
                verdict = SUCCESS
            elif status.is_skip:
                state.skip_pre_bind_plugins.add(plugin.name)
            elif status.code is Code.ERROR:
                return done(error(f'running PreBindPreFlight "{plugin.name}": {status.message}'))
            else:
                return done(
                    error(
                        f'PreBindPreFlight {plugin.name} returned "{status.code.label}", '
                        "which is unsupported. It is supposed to return Success, Skip, "
                        "or Error status"
                    )
                )
        return done(verdict)

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        done = PointTimer(state.metrics, "PreBind")
        for plugin in self.pre_bind:
            if plugin.name in state.skip_pre_bind_plugins:
                continue
            try:
                status = await plugin.pre_bind(state, pod, node_name)
            except Exception as failure:
                return done(_raised("PreBind", plugin.name, failure))
            if not status.is_success:
                return done(_failed("PreBind", plugin.name, status))
        return done(SUCCESS)

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first bind plugin that does not Skip binds; Skip from all of them is Skip."""
        done = PointTimer(state.metrics, "Bind")
        for plugin in self.bind:
            try:
                status = await plugin.bind(state, pod, node_name)
            except Exception as failure:
                return done(_raised("Bind", plugin.name, failure))
            if status.is_skip:
                continue
            if not status.is_success:
                return done(_failed("Bind", plugin.name, status))
            return done(SUCCESS)
        return done(SKIP)

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        done = PointTimer(state.metrics, "PostBind")
        for plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                # Informational, and the pod is bound: nothing to undo or retry.
                logger.exception("PostBind plugin %s failed for pod %s", plugin.name, pod.key)
        done(SUCCESS)

    def plugin_names(self, point: str) -> list[str]:
        return [plugin.name for plugin in self.points[point]]


_NARROWING_KEY = "framework/pre-filter-narrowing"


def _failed(point: str, plugin: str, status: Status) -> Status:
    """A plugin's failure as the point reports it: rejections keep their reasons, errors are
    wrapped with the plugin's name, as kube-scheduler words them."""
    if status.is_rejection:
        return status.with_plugin(plugin)
    return error(f'running {point} plugin "{plugin}": {status.message}').with_plugin(plugin)


def _raised(point: str, plugin: str, failure: Exception) -> Status:
    """A plugin that raised: an Error of that plugin, as if it had returned one, so that it
    costs the pod this attempt (and a backoff), never the scheduler. Plugins are code we do
    not control (out-of-tree packages); the traceback goes to the log for their authors."""
    logger.error("%s plugin %s raised", point, plugin, exc_info=failure)
    return error(
        f'running {point} plugin "{plugin}": {type(failure).__name__}: {failure}'
    ).with_plugin(plugin)


def build_framework(config: ProfileConfig, registry: Registry | None = None) -> Framework:
    """Build a runnable profile; raises `ProfileError` saying where in `config` the fault is."""
    if registry is None:
        # Imported here: the registry imports plugin modules, which import this one.
        from berth.engine.registry import IN_TREE

        registry = IN_TREE
    return Framework(config, registry)


def plugin_summary(framework: Framework) -> dict[str, list[str]]:
    return {point: framework.plugin_names(point) for point in EXTENSION_POINTS}
