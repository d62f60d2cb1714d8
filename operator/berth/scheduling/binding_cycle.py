"""The binding cycle: after Permit, one task per pod, concurrent with the next decisions.

kube-scheduler's bindingCycle: PreBindPreFlight (and, when PreBind will work or
the pod waits, the chosen node published as its nomination) → wait at Permit →
PreBind → Bind → PostBind. Any failure runs Unreserve in reverse order, forgets
the assumption (which may help other pods, like a deleted pod), and sends the pod
back through the failure handler; the cycle ends once the claim releases Unreserve
asked for are written. A pod of an older leadership term is never
bound: its assumption is dropped quietly, and the next leader decides again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from berth.engine.diagnosis import one_node_message
from berth.engine.extenders import is_interested
from berth.engine.framework.events import ClusterEvent
from berth.engine.framework.status import SUCCESS, Code, Status, error
from berth.engine.framework.waiting_pods import WaitingPod, timeout_message
from berth.engine.model.pod import Pod
from berth.scheduling import cluster_events
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.claim_releases import ClaimReleases, settled
from berth.scheduling.failures import FailureHandler
from berth.scheduling.held_changes import HeldChanges
from berth.scheduling.ports import (
    Binder,
    BindOutcome,
    BindResult,
    ExtenderCalls,
    Preemptor,
    Reporter,
    SchedulingObserver,
    TimerClock,
)
from berth.scheduling.queue import SchedulingQueue
from berth.scheduling.scheduling_cycle import Assumed

logger = logging.getLogger(__name__)


class Notify(Protocol):
    def __call__(
        self,
        event: ClusterEvent,
        old: object,
        new: object,
        *,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None: ...


@dataclass(slots=True)
class Term:
    """The leadership term decisions belong to; binds of an older term are never posted."""

    epoch: int = 0
    active: bool = False

    def is_current(self, epoch: int) -> bool:
        return self.active and epoch == self.epoch


def _rejecter(waiting: WaitingPod, plugin: str, seconds: float) -> Callable[[], None]:
    def reject() -> None:
        waiting.reject(plugin, timeout_message(plugin, seconds))

    return reject


class GuardedBinder:
    """The Binding port lent to bind plugins: refuses to post once this replica stopped
    leading, never raises, and remembers pods the API server says no longer exist."""

    def __init__(self, binder: Binder, *, term: Term) -> None:
        self._binder = binder
        self._term = term
        self.gone: set[str] = set()

    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        if not self._term.active:
            return BindResult(BindOutcome.FAILED, "this replica is not leading")
        try:
            result = await self._binder.bind(pod, node_name)
        except Exception as failure:  # a binder bug must cost one bind, not the loop
            logger.exception("Binding %s to %s failed unexpectedly", pod.key, node_name)
            result = BindResult(BindOutcome.FAILED, str(failure))
        if result.outcome is BindOutcome.GONE:
            self.gone.add(pod.uid)
        return result


class BindingCycle:
    def __init__(
        self,
        *,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        notify: Notify,
        failures: FailureHandler,
        reporter: Reporter,
        observer: SchedulingObserver,
        preemptor: Preemptor | None,
        binder: GuardedBinder,
        clock: TimerClock,
        term: Term,
        max_binds_in_flight: int,
        held: HeldChanges,
        releases: ClaimReleases,
        extenders: ExtenderCalls | None = None,
    ) -> None:
        self._releases = releases
        self._held = held
        self._extenders = extenders
        self._cache = cache
        self._queue = queue
        self._notify = notify
        self._failures = failures
        self._reporter = reporter
        self._observer = observer
        self._preemptor = preemptor
        self._binder = binder
        self._clock = clock
        self._term = term
        # Bounds PreBind + Bind (the API writes), not the wait at Permit: a gang
        # larger than the bound must still be able to assemble.
        self._bind_slots = asyncio.Semaphore(max_binds_in_flight)
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, assumed: Assumed) -> None:
        task = asyncio.create_task(self._run(assumed, self._term.epoch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every binding cycle started so far (tests and graceful shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ------------------------------------------------------------------ one pod

    async def _run(self, assumed: Assumed, epoch: int) -> None:
        # Claim releases Unreserve asked for: the cycle waits for them (when a decision
        # holds changes, Unreserve runs later and the releases finish on their own).
        releasing: list[asyncio.Task[str]] = []
        try:
            status = self._pre_flight(assumed)
            if status.is_success:
                status = await self._wait_on_permit(assumed)
            if status.is_success:
                async with self._bind_slots:
                    if not self._term.is_current(epoch):
                        self._held.apply(self._undo, assumed, releasing)
                        return
                    status = await self._pre_bind_and_bind(assumed)
            # What follows changes the cache: it waits while a decision awaits extenders.
            if not self._term.is_current(epoch):
                self._held.apply(self._undo, assumed, releasing)  # leadership changed
            elif status.is_success:
                self._held.apply(self._bound, assumed)
            else:
                self._held.apply(self._failed, assumed, status, releasing)
        except Exception as failure:  # a plugin bug must cost one pod an attempt, not the loop
            logger.exception("Binding cycle of %s failed unexpectedly", assumed.pod.key)
            self._held.apply(self._failed, assumed, error(f"internal error: {failure}"), releasing)
        finally:
            for task in releasing:
                await settled(task)
            metrics = assumed.decision.state.metrics
            if metrics is not None:
                self._observer.cycle(
                    profile=assumed.framework.profile_name,
                    points=metrics.points,
                    plugins=metrics.plugins,
                )

    def _pre_flight(self, assumed: Assumed) -> Status:
        framework, pod, node_name = assumed.framework, assumed.pod, assumed.node_name
        status = framework.run_pre_bind_pre_flight(assumed.decision.state, pod, node_name)
        if status.code is Code.ERROR or status.is_rejection:
            return status
        if (status.is_success or assumed.waiting is not None) and self._preemptor is not None:
            # NominatedNodeNameForExpectation: others see where this pod is about to go.
            self._preemptor.nominate(pod, node_name)
        return SUCCESS

    async def _wait_on_permit(self, assumed: Assumed) -> Status:
        waiting = assumed.waiting
        if waiting is None:
            return SUCCESS
        started = self._clock.now()
        verdict_ready: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        timers = [
            self._clock.call_later(seconds, _rejecter(waiting, plugin, seconds))
            for plugin, seconds in waiting.waits.items()
        ]

        def deliver(verdict: Status) -> None:
            if not verdict_ready.done():
                verdict_ready.set_result(verdict)

        waiting.on_done(deliver)
        try:
            verdict = await verdict_ready
        finally:
            for timer in timers:
                timer.cancel()
            assumed.framework.waiting_pods.remove(assumed.pod.uid)
        self._observer.permit_wait(result=verdict.code.label, seconds=self._clock.now() - started)
        if verdict.is_success or verdict.is_rejection:
            return verdict
        return error(f"waiting on permit for pod: {verdict.message}").with_plugin(verdict.plugin)

    async def _pre_bind_and_bind(self, assumed: Assumed) -> Status:
        framework, pod, node_name = assumed.framework, assumed.pod, assumed.node_name
        state = assumed.decision.state
        status = await framework.run_pre_bind(state, pod, node_name)
        if not status.is_success:
            return status
        bound = await self._extender_bind(assumed)
        if bound is not None:
            return bound
        status = await framework.run_bind(state, pod, node_name)
        if status.is_skip:
            return error(f"no bind plugin bound pod {pod.key}")
        return status

    async def _extender_bind(self, assumed: Assumed) -> Status | None:
        """kube-scheduler's extendersBinding: an interested binding extender binds instead of
        the Bind plugins; its failure fails the binding unless it is ignorable (then the
        next binder, or the plugins, bind). None: no extender bound."""
        pod = assumed.pod
        for extender in assumed.framework.extenders:
            if not extender.is_binder or not is_interested(extender, pod):
                continue
            if self._extenders is None:
                return error(f"no way to call extender {extender.name} to bind pod {pod.key}")
            failed = await self._extenders.bind(extender, pod, assumed.node_name)
            if failed is not None and extender.ignorable:
                logger.info(
                    "Skipping ignorable extender %s that failed to bind %s: %s",
                    extender.name,
                    pod.key,
                    failed.message,
                )
                continue
            return SUCCESS if failed is None else error(failed.message)
        return None

    # ------------------------------------------------------------------ outcomes

    def _bound(self, assumed: Assumed) -> None:
        info, framework, pod = assumed.info, assumed.framework, assumed.pod
        now = self._clock.now()
        self._cache.finish_binding(pod.uid)
        self._queue.done(pod.uid)
        self._observer.attempt(
            result="scheduled", profile=framework.profile_name, seconds=now - assumed.started
        )
        self._observer.scheduled(
            attempts=info.attempts,
            seconds_since_first_attempt=now - (info.initial_attempt_timestamp or assumed.started),
        )
        self._reporter.scheduled(pod, assumed.node_name, profile=framework.profile_name)
        framework.run_post_bind(assumed.decision.state, pod, assumed.node_name)

    def _failed(self, assumed: Assumed, status: Status, releasing: list[asyncio.Task[str]]) -> None:
        info, framework, pod = assumed.info, assumed.framework, assumed.pod
        logger.info("Binding %s to %s failed: %s", pod.key, assumed.node_name, status.message)
        forgotten = self._unreserve_and_forget(assumed, releasing)
        if pod.uid in self._binder.gone:
            # The API server says the pod no longer exists: nothing to retry or report.
            self._binder.gone.discard(pod.uid)
            self._queue.done(pod.uid)
            self._freed(forgotten)
            return
        rejected = status.is_rejection
        if not rejected:
            self._freed(forgotten)
        self._observer.attempt(
            result="unschedulable" if rejected else "error",
            profile=framework.profile_name,
            seconds=self._clock.now() - assumed.started,
        )
        self._failures.fail(
            info,
            one_node_message(assumed.node_name, status) if rejected else status.message,
            profile=framework.profile_name,
            rejected=rejected,
            rejected_by={status.plugin} if rejected and status.plugin else set(),
        )
        if rejected:
            # The capacity it frees helps others, never the rejected pod itself: a plugin
            # said no to it, so it waits for an event that plugin cares about (as upstream).
            self._freed(forgotten, sparing=pod.uid)

    def _undo(self, assumed: Assumed, releasing: list[asyncio.Task[str]]) -> None:
        """Drop the assumption of a pod whose term ended: no report, no requeue."""
        forgotten = self._unreserve_and_forget(assumed, releasing)
        self._queue.done(assumed.pod.uid)
        self._freed(forgotten)

    def _unreserve_and_forget(
        self, assumed: Assumed, releasing: list[asyncio.Task[str]]
    ) -> Pod | None:
        waiting = assumed.waiting
        if waiting is not None:
            # A cycle that ends before its wait did (a failed pre-flight, say) must not leave
            # a waiting pod behind for other plugins to count or allow.
            waiting.reject("", "the binding cycle ended")
            assumed.framework.waiting_pods.remove(assumed.pod.uid)
        state = assumed.decision.state
        assumed.framework.run_unreserve(state, assumed.pod, assumed.node_name)
        task = self._releases.start(assumed.framework.services.claims, state)
        if task is not None:
            releasing.append(task)
        return self._cache.forget(assumed.pod.uid)

    def _freed(self, forgotten: Pod | None, *, sparing: str = "") -> None:
        if forgotten is not None:
            # Freed capacity may help others, as if an assigned pod were deleted.
            self._notify(
                cluster_events.ASSIGNED_POD_DELETE,
                forgotten,
                None,
                pre_check=(lambda other: other.uid != sparing) if sparing else None,
            )
