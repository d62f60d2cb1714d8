"""The scheduling cycle: one decision for a popped pod, up to Permit.

kube-scheduler's schedulingCycle: pick the pod's profile, run the engine on the
cache's cluster, carry out what PostFilter decided when no node fits, and for a
chosen node assume the pod, run Reserve and Permit. What happens after Permit
(waiting, PreBind, Bind) is the binding cycle's, and runs concurrently.

A decision is synchronous (nothing interleaves between it and the assumption)
unless an extender of the pod's profile is interested in the pod: then it awaits
the extenders' answers, and the loop holds every change to the cache meanwhile.

A failed attempt whose PostFilter or Unreserve asked for claim releases ends only
when they were written (as upstream's synchronous API calls): its failure is
reported by `settle`, which the loop awaits before the next pod.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

from berth.engine.algorithm import (
    Decision,
    Scheduled,
    SchedulingError,
    SearchState,
    Unschedulable,
    schedule_one,
    unschedulable,
)
from berth.engine.diagnosis import one_node_message
from berth.engine.extended_decision import DecisionSteps, schedule_with_extenders
from berth.engine.extenders import is_interested
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleMetrics, CycleState
from berth.engine.framework.interfaces import PostFilterResult
from berth.engine.framework.runtime import Framework
from berth.engine.framework.status import Code, Status
from berth.engine.framework.waiting_pods import WaitingPod
from berth.engine.model.pod import Pod
from berth.engine.nominated import NominatedPods
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.claim_releases import ClaimReleases, settled
from berth.scheduling.extender_steps import drive_with_calls, drive_without_calls
from berth.scheduling.failures import FailureHandler
from berth.scheduling.ports import Clock, ExtenderCalls, Preemptor, SchedulingObserver
from berth.scheduling.profiles import LiveProfiles
from berth.scheduling.queue import QueuedPodInfo, SchedulingQueue

logger = logging.getLogger(__name__)

PLUGIN_SAMPLE_RATE = 0.1
PREEMPTED_WHILE_WAITING = "preempted"


@dataclass(frozen=True, slots=True)
class Assumed:
    """A pod the scheduling cycle placed: assumed, reserved and permitted (or waiting)."""

    info: QueuedPodInfo
    framework: Framework
    decision: Scheduled
    waiting: WaitingPod | None
    started: float  # when its scheduling attempt began

    @property
    def pod(self) -> Pod:
        return self.info.pod

    @property
    def node_name(self) -> str:
        return self.decision.node_name


@dataclass(frozen=True, slots=True)
class _Unsettled:
    """A failed attempt waiting for its claim releases before it is reported."""

    releases: asyncio.Task[str]
    report: Callable[[str], None]  # called with the deallocation's error, or ""


class SchedulingCycle:
    def __init__(
        self,
        *,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        profiles: LiveProfiles,
        failures: FailureHandler,
        observer: SchedulingObserver,
        preemptor: Preemptor | None,
        clock: Clock,
        rng: random.Random,  # test seam: tie-breaks among equal scores
        releases: ClaimReleases,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        self._releases = releases
        self._unsettled: list[_Unsettled] = []
        self._cache = cache
        self._queue = queue
        self._profiles = profiles
        self._failures = failures
        self._observer = observer
        self._preemptor = preemptor
        self._clock = clock
        self._rng = rng
        # Sampling of per-plugin durations (10% of cycles, as kube-scheduler); its own
        # generator so that sampling never shifts the tie-break sequence.
        self._sampler = random.Random(0)
        self._search = SearchState(percentage_of_nodes_to_score=percentage_of_nodes_to_score)

    def schedule_next(self, info: QueuedPodInfo) -> Assumed | None:
        """Decide for a popped pod; the assumed pod when its binding cycle should start.

        A pod no extender of its profile is interested in is decided here without
        awaiting anything (`calls_extenders` says which pods need `schedule_with_extenders`).
        """
        begun = self._begin(info)
        if begun is None:
            return None
        framework, started, metrics = begun
        if framework.extenders:
            steps = self._steps(info.pod, framework, metrics)
            decision = drive_without_calls(steps)
        else:
            decision = schedule_one(
                framework,
                self._cache.cluster,
                info.pod,
                search=self._search,
                rng=self._rng,
                nominated=self._nominated(),
                metrics=metrics,
            )
        return self._conclude(info, framework, decision, started, metrics)

    def calls_extenders(self, pod: Pod) -> bool:
        """Whether deciding for `pod` calls an extender (its profile has one interested in it)."""
        framework = self._profiles.for_pod(pod)
        return framework is not None and any(
            is_interested(extender, pod) for extender in framework.extenders
        )

    async def schedule_with_extenders(
        self, info: QueuedPodInfo, calls: ExtenderCalls
    ) -> Assumed | None:
        """`schedule_next` for a pod whose decision calls extenders. The caller holds every
        change to the cache until this returns (see HeldChanges): the decision awaits."""
        begun = self._begin(info)
        if begun is None:
            return None
        framework, started, metrics = begun
        steps = self._steps(info.pod, framework, metrics)
        decision = await drive_with_calls(steps, calls)
        return self._conclude(info, framework, decision, started, metrics)

    def _begin(self, info: QueuedPodInfo) -> tuple[Framework, float, CycleMetrics] | None:
        pod = info.pod
        framework = self._profiles.for_pod(pod)
        if framework is None or pod.terminating:
            self._queue.done(pod.uid)
            return None
        started = self._clock.now()
        metrics = CycleMetrics(
            self._clock.now, sample_plugins=self._sampler.random() < PLUGIN_SAMPLE_RATE
        )
        return framework, started, metrics

    def _nominated(self) -> NominatedPods | None:
        nominator = self._queue.nominator
        return nominator.nominated_pods() if nominator else None

    def _steps(self, pod: Pod, framework: Framework, metrics: CycleMetrics) -> DecisionSteps:
        return schedule_with_extenders(
            framework,
            self._cache.cluster,
            pod,
            extenders=framework.extenders,
            search=self._search,
            rng=self._rng,
            nominated=self._nominated(),
            metrics=metrics,
        )

    def _conclude(
        self,
        info: QueuedPodInfo,
        framework: Framework,
        decision: Decision,
        started: float,
        metrics: CycleMetrics,
    ) -> Assumed | None:
        self._observer.algorithm(seconds=self._clock.now() - started)
        profile = framework.profile_name
        self._observer.cycle(profile=profile, points=metrics.points, plugins=metrics.plugins)
        if isinstance(decision, Scheduled):
            # Reserve onwards is timed apart and reported when the binding cycle ends.
            decision.state.metrics = CycleMetrics(
                self._clock.now, sample_plugins=metrics.sample_plugins
            )
            return self._assume(info, framework, decision, started)
        if isinstance(decision, SchedulingError):
            self._observe_attempt("error", profile, started)
            self._failures.fail(info, decision.message, profile=profile)
            return None
        self._after_releases(
            framework,
            decision.state,
            lambda failed: self._unschedulable(info, profile, decision, started, failed),
        )
        return None

    def _unschedulable(
        self,
        info: QueuedPodInfo,
        profile: str,
        decision: Unschedulable,
        started: float,
        failed: str,  # the error of PostFilter's claim deallocation, or ""
    ) -> None:
        if failed:
            # Upstream's PostFilter returns the failed write as its (error) status.
            logger.error(
                "Status after running PostFilter plugins for pod %s: %s", info.pod.key, failed
            )
            failure = Status(Code.ERROR, (failed,), names.DYNAMIC_RESOURCES)
            decision = unschedulable(decision.state, decision.diagnosis, PostFilterResult(failure))
        self._observe_attempt("unschedulable", profile, started)
        self._carry_out_post_filter(info.pod, decision, profile)
        self._failures.fail(
            info,
            decision.message,
            profile=profile,
            rejected=True,
            rejected_by=decision.diagnosis.unschedulable_plugins,
            pending=decision.diagnosis.pending_plugins,
        )

    def _after_releases(
        self, framework: Framework, state: CycleState, report: Callable[[str], None]
    ) -> None:
        """`report` now, or once the claim releases the cycle asked for are written."""
        task = self._releases.start(framework.services.claims, state)
        if task is None:
            report("")
        else:
            self._unsettled.append(_Unsettled(task, report))

    @property
    def unsettled(self) -> bool:
        """Whether a failed attempt still waits for its claim writes (see `settle`)."""
        return bool(self._unsettled)

    async def settle(self) -> None:
        """Wait for the claim releases of failed attempts, then report those attempts."""
        while self._unsettled:
            waiting = self._unsettled.pop(0)
            try:
                failed = await settled(waiting.releases)
            except Exception as failure:  # a bug in a port: the write is lost, not the pod
                logger.error("Claim releases failed unexpectedly", exc_info=failure)
                failed = f"internal error: {failure}"
            waiting.report(failed)

    def _assume(
        self, info: QueuedPodInfo, framework: Framework, decision: Scheduled, started: float
    ) -> Assumed | None:
        """Assume → Reserve → Permit; on failure undo in reverse and report like upstream."""
        pod = info.pod
        node_name = decision.node_name
        state = decision.state
        self._cache.assume(pod, node_name)
        status = framework.run_reserve(state, pod, node_name)
        waits: dict[str, float] = {}
        if status.is_success:
            status, waits = framework.run_permit(state, pod, node_name)
        if not (status.is_success or waits):
            framework.run_unreserve(state, pod, node_name)
            self._cache.forget(pod.uid)
            self._report_points(framework, state)
            # Unreserve's writes only log their failures: the report waits, nothing else.
            self._after_releases(
                framework,
                state,
                lambda _failed: self._not_reserved(info, framework, node_name, status, started),
            )
            return None
        waiting: WaitingPod | None = None
        if waits:
            waiting = WaitingPod(pod, node_name, waits)
            framework.waiting_pods.add(waiting)
        # The attempt counts as scheduled once the binding cycle has bound it, as upstream.
        return Assumed(info, framework, decision, waiting, started)

    def _not_reserved(
        self,
        info: QueuedPodInfo,
        framework: Framework,
        node_name: str,
        status: Status,
        started: float,
    ) -> None:
        result = "unschedulable" if status.is_rejection else "error"
        self._observe_attempt(result, framework.profile_name, started)
        self._failures.fail(
            info,
            one_node_message(node_name, status) if status.is_rejection else status.message,
            profile=framework.profile_name,
            rejected=status.is_rejection,
            rejected_by={status.plugin} if status.plugin else set(),
        )

    def _carry_out_post_filter(self, pod: Pod, decision: Unschedulable, profile: str) -> None:
        result = decision.post_filter
        if result is None:
            return
        found = result.status.is_success and bool(result.nominated_node)
        self._observer.preemption(victims=len(result.victims) if found else None)
        if self._preemptor is None:
            return
        if found and result.nominated_node:
            self._queue.nominator.nominate(pod, result.nominated_node)
            evicted = [victim for victim in result.victims if not self._stop_waiting(victim)]
            self._preemptor.preempt(pod, result.nominated_node, evicted, profile=profile)
        elif result.nominated_node == "" and pod.nominated_node_name:
            self._queue.nominator.nominate(pod, "")
            self._preemptor.nominate(pod, "")

    def _stop_waiting(self, victim: Pod) -> bool:
        """A victim still waiting at Permit is not in the API as bound: end its wait instead."""
        framework = self._profiles.for_pod(victim)
        waiting = framework.waiting_pods.get(victim.uid) if framework is not None else None
        return waiting is not None and waiting.preempt(
            names.DEFAULT_PREEMPTION, PREEMPTED_WHILE_WAITING
        )

    def _report_points(self, framework: Framework, state: CycleState) -> None:
        metrics = state.metrics
        if metrics is not None:
            self._observer.cycle(
                profile=framework.profile_name, points=metrics.points, plugins=metrics.plugins
            )

    def fail_unexpectedly(self, info: QueuedPodInfo, failure: Exception) -> None:
        self._failures.fail(info, f"internal error: {failure}", profile=info.pod.scheduler_name)

    def _observe_attempt(self, result: str, profile: str, started: float) -> None:
        self._observer.attempt(result=result, profile=profile, seconds=self._clock.now() - started)
