"""The scheduling loop: one decision at a time, bindings concurrent and bounded.

`Scheduler` owns the cache, the queue and the live profiles. Watch handlers feed
it objects (`on_pod`, `on_node`, ...); while active (the leader) it pops a pod,
decides synchronously on the cache's cluster (no `await` between the decision and
the assumption, so nothing interleaves), assumes the pod and starts its bind as a
task. Binding failures forget the assumption and requeue the pod.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterable, Set

from berth.engine.algorithm import (
    Scheduled,
    SchedulingError,
    SearchState,
    Unschedulable,
    schedule_one,
)
from berth.engine.framework.cycle_state import CycleMetrics
from berth.engine.framework.events import ClusterEvent
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling import cluster_events
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.ports import (
    Binder,
    BindOutcome,
    Clock,
    NullObserver,
    Preemptor,
    Reporter,
    SchedulingObserver,
    SchedulingReason,
)
from berth.scheduling.profiles import LiveProfiles
from berth.scheduling.queue import QueuedPodInfo, SchedulingQueue

logger = logging.getLogger(__name__)

FLUSH_INTERVAL = 1.0
PLUGIN_SAMPLE_RATE = 0.1


class Scheduler:
    def __init__(
        self,
        *,
        binder: Binder,
        reporter: Reporter,
        clock: Clock,
        rng: random.Random,  # test seam: tie-breaks among equal scores
        observer: SchedulingObserver | None = None,
        preemptor: Preemptor | None = None,
        max_binds_in_flight: int = 64,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = 300.0,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        self.cache = SchedulerCache()
        self.profiles = LiveProfiles()
        self.queue = SchedulingQueue(
            clock=clock,
            framework_for=self.profiles.for_pod,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            max_in_unschedulable=max_in_unschedulable,
            on_incoming=observer.incoming if observer is not None else None,
        )
        self._binder = binder
        self._reporter = reporter
        self._clock = clock
        self._rng = rng
        self._observer: SchedulingObserver = observer or NullObserver()
        self._preemptor = preemptor
        # Sampling of per-plugin durations (10% of cycles, as kube-scheduler); its own
        # generator so that sampling never shifts the tie-break sequence.
        self._sampler = random.Random(0)
        self._search = SearchState(percentage_of_nodes_to_score=percentage_of_nodes_to_score)
        self._bind_slots = asyncio.Semaphore(max_binds_in_flight)
        self._binds: set[asyncio.Task[None]] = set()
        # Bumped on every activation change: a bind started under an older epoch
        # must not be posted, so queued work never binds after a pause.
        self._epoch = 0
        self.active = False
        # Unassigned pods naming a schedulerName no live profile serves: they
        # join the queue as soon as a profile for their name appears.
        self._unserved: dict[str, Pod] = {}
        # Pending pods nominated to a node by a preemption: node -> uid -> pod.
        self._nominated: dict[str, dict[str, Pod]] = {}
        # While a full listing is being taken: nodes (names) and pods (UIDs) the watch
        # changed meanwhile, which the listing must not override (see reconcile()).
        self._watched_during_listing: tuple[set[str], set[str]] | None = None
        self._nomination_of: dict[str, str] = {}

    # ------------------------------------------------------------------ watch intake

    def on_pod(self, pod: Pod) -> None:
        """A pod was listed, added or changed."""
        if self._watched_during_listing is not None:
            self._watched_during_listing[1].add(pod.uid)
        self._apply_pod(pod)

    def _apply_pod(self, pod: Pod) -> None:
        if pod.is_terminal:
            self.on_pod_deleted(pod)
            return
        if pod.node_name:
            self._unserved.pop(pod.uid, None)
            self._nominate(pod, "")
            self.queue.delete(pod)
            previous = self.cache.upsert_pod(pod)
            event = (
                cluster_events.ASSIGNED_POD_ADD
                if previous is None
                else cluster_events.assigned_pod_update_event(previous, pod)
            )
            self._notify(event, previous, pod)
            return
        if self.profiles.for_pod(pod) is None or pod.terminating:
            self.queue.delete(pod)
            if pod.terminating:
                self._unserved.pop(pod.uid, None)
            else:
                self._unserved[pod.uid] = pod
            return
        self._unserved.pop(pod.uid, None)
        self._nominate(pod, pod.nominated_node_name)
        if self.cache.is_assumed(pod.uid):
            return  # our bind is in flight; the watch has not caught up yet
        existing = self.queue.get(pod.uid)
        if existing is None:
            self.queue.add(pod)
        else:
            self.queue.update(existing.pod, pod)

    def on_pod_deleted(self, pod: Pod) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[1].add(pod.uid)
        self._unserved.pop(pod.uid, None)
        self._nominate(pod, "")
        self._reporter.forget(pod.uid)
        self.queue.delete(pod)
        removed = self.cache.remove_pod(pod.uid)
        if removed is not None:
            self._notify(cluster_events.ASSIGNED_POD_DELETE, removed, None)

    def on_node(self, node: Node) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[0].add(node.name)
        previous = self.cache.upsert_node(node)
        if previous is None:
            self._notify(cluster_events.NODE_ADD, None, node)
        else:
            self._notify(cluster_events.node_update_event(previous, node), previous, node)

    def on_node_deleted(self, name: str) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[0].add(name)
        previous = self.cache.remove_node(name)
        if previous is not None:
            self._notify(cluster_events.NODE_DELETE, previous, None)

    def begin_listing(self) -> None:
        """A full listing is about to be requested; remember what the watch changes meanwhile."""
        self._watched_during_listing = (set(), set())

    def reconcile(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        """Converge the cache and the queue to a full listing from the API.

        The listing is a snapshot from when it was taken; whatever the watch changed
        since `begin_listing()` is newer and wins over it.
        """
        fresher_nodes, fresher_pods = self._watched_during_listing or (set(), set())
        self._watched_during_listing = None
        pod_list = [pod for pod in pods if pod.uid not in fresher_pods]
        ghosts = self.cache.reconcile(
            nodes, pod_list, fresher_nodes=fresher_nodes, fresher_pods=fresher_pods
        )
        if any(ghosts):
            logger.info("Reconciled the cache: dropped %d ghost node(s), %d ghost pod(s)", *ghosts)
        listed = {pod.uid for pod in pod_list} | fresher_pods
        self._unserved = {uid: pod for uid, pod in self._unserved.items() if uid in listed}
        for info in list(self.queue):
            if info.pod.uid not in listed:
                self.queue.delete(info.pod)
        for pod in pod_list:
            self._apply_pod(pod)

    def _nominate(self, pod: Pod, node_name: str) -> None:
        """Record (or with "" drop) the node a pending pod is nominated to."""
        previous = self._nomination_of.pop(pod.uid, None)
        if previous is not None:
            pods = self._nominated.get(previous, {})
            pods.pop(pod.uid, None)
            if not pods:
                self._nominated.pop(previous, None)
        if node_name:
            self._nomination_of[pod.uid] = node_name
            self._nominated.setdefault(node_name, {})[pod.uid] = pod

    def nominated_pods(self) -> dict[str, tuple[Pod, ...]]:
        return {node: tuple(pods.values()) for node, pods in self._nominated.items()}

    def set_profile(self, framework: Framework) -> None:
        self.profiles.set(framework)
        for pod in [
            p for p in self._unserved.values() if p.scheduler_name == framework.profile_name
        ]:
            self._apply_pod(pod)

    def remove_profile(self, scheduler_name: str) -> None:
        self.profiles.remove(scheduler_name)
        for info in list(self.queue):
            if info.pod.scheduler_name == scheduler_name:
                self.queue.delete(info.pod)
                self._unserved[info.pod.uid] = info.pod

    def _notify(self, event: ClusterEvent | None, old: object, new: object) -> None:
        if event is not None:
            self.queue.on_cluster_event(event, old, new)

    # ------------------------------------------------------------------ leadership

    def activate(self) -> None:
        self._epoch += 1
        self.active = True

    def deactivate(self) -> None:
        """Stop deciding and binding. Binds not yet posted are dropped; the queue is
        emptied because a paused replica stops watching, and the next activation
        rebuilds it from a fresh listing."""
        self._epoch += 1
        self.active = False
        self.queue.clear()

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Pop and schedule forever; the owner starts it on activation and cancels it on pause."""
        flusher = asyncio.create_task(self._flush_forever())
        try:
            while True:
                info = await self.queue.pop()
                try:
                    self.schedule_one(info)
                except Exception as error:  # a bug must cost one pod an attempt, not the loop
                    logger.exception("Scheduling %s failed unexpectedly", info.pod.key)
                    if self.cache.is_assumed(info.pod.uid):
                        self.cache.forget(info.pod.uid)
                    self._fail(info, f"internal error: {error}", profile=info.pod.scheduler_name)
                # Give watch handlers and binds a turn between decisions.
                await asyncio.sleep(0)
        finally:
            flusher.cancel()

    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL)  # wall-clock cadence of the queue's own timers
            self.queue.flush(self._clock.now())
            self._observer.pending(self.queue.pending_counts())
            self._observer.unschedulable(self._unschedulable_by_plugin())
            self._observer.cache_size(
                nodes=self.cache.cluster.node_count,
                pods=self.cache.cluster.pod_total,
                assumed=self.cache.assumed_count,
            )

    def _unschedulable_by_plugin(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        for info in self.queue:
            if self.queue.queue_of(info.pod.uid) != "unschedulable":
                continue
            for plugin in info.rejector_plugins:
                key = (info.pod.scheduler_name, plugin)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One synchronous scheduling cycle for a popped pod."""
        pod = info.pod
        framework = self.profiles.for_pod(pod)
        if framework is None:
            self.queue.done(pod.uid)
            return
        if pod.terminating:
            self.queue.done(pod.uid)
            return
        started = self._clock.now()
        metrics = CycleMetrics(
            self._clock.now, sample_plugins=self._sampler.random() < PLUGIN_SAMPLE_RATE
        )
        decision = schedule_one(
            framework,
            self.cache.cluster,
            pod,
            search=self._search,
            rng=self._rng,
            nominated=self.nominated_pods() if self._nominated else None,
            metrics=metrics,
        )
        self._observer.algorithm(seconds=self._clock.now() - started)
        self._observer.cycle(
            profile=framework.profile_name, points=metrics.points, plugins=metrics.plugins
        )
        if isinstance(decision, Scheduled):
            self._assume_and_bind(info, framework, decision, started)
            return
        if isinstance(decision, SchedulingError):
            self._observer.attempt(
                result="error", profile=framework.profile_name, seconds=self._clock.now() - started
            )
            self._fail(info, decision.message, profile=framework.profile_name)
            return
        self._observer.attempt(
            result="unschedulable",
            profile=framework.profile_name,
            seconds=self._clock.now() - started,
        )
        self._carry_out_post_filter(pod, decision, framework.profile_name)
        self._fail(
            info,
            decision.message,
            profile=framework.profile_name,
            rejected=True,
            rejected_by=decision.diagnosis.unschedulable_plugins,
            pending=decision.diagnosis.pending_plugins,
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
            self._nominate(pod, result.nominated_node)
            self._preemptor.preempt(pod, result.nominated_node, result.victims, profile=profile)
        elif result.nominated_node == "" and pod.nominated_node_name:
            self._nominate(pod, "")
            self._preemptor.nominate(pod, "")

    def _assume_and_bind(
        self, info: QueuedPodInfo, framework: Framework, decision: Scheduled, started: float
    ) -> None:
        pod = info.pod
        node_name = decision.node_name
        self.cache.assume(pod, node_name)
        status = framework.run_reserve(decision.state, pod, node_name)
        if status.is_success:
            status, _timeout = framework.run_permit(decision.state, pod, node_name)
        if not status.is_success:
            # Permit waiting is not offered by any in-tree plugin; treat it as a rejection.
            framework.run_unreserve(decision.state, pod, node_name)
            self.cache.forget(pod.uid)
            self._fail(
                info,
                status.message,
                profile=framework.profile_name,
                rejected=status.is_rejection,
                rejected_by={status.plugin} if status.plugin else set(),
            )
            return
        self._observer.attempt(
            result="scheduled", profile=framework.profile_name, seconds=self._clock.now() - started
        )
        task = asyncio.create_task(self._bind(info, framework, decision, self._epoch))
        self._binds.add(task)
        task.add_done_callback(self._binds.discard)

    async def _bind(
        self, info: QueuedPodInfo, framework: Framework, decision: Scheduled, epoch: int
    ) -> None:
        pod = info.pod
        node_name = decision.node_name
        async with self._bind_slots:
            if epoch != self._epoch or not self.active:
                # Leadership changed while this bind waited: never post it.
                self._undo(info, framework, decision, requeue=False)
                return
            self._observer.bindings_in_flight(len(self._binds))
            started = self._clock.now()
            try:
                result = await self._binder.bind(pod, node_name)
            except Exception as error:  # a binder bug must not kill the loop
                logger.exception("Binding %s to %s failed unexpectedly", pod.key, node_name)
                result_outcome, message = BindOutcome.FAILED, str(error)
            else:
                result_outcome, message = result.outcome, result.message
            self._observer.binding(result=result_outcome.value, seconds=self._clock.now() - started)
        if result_outcome is BindOutcome.BOUND:
            self.cache.finish_binding(pod.uid)
            self.queue.done(pod.uid)
            self._observer.scheduled(
                attempts=info.attempts,
                seconds_since_first_attempt=self._clock.now()
                - (info.initial_attempt_timestamp or started),
            )
            self._reporter.scheduled(pod, node_name, profile=framework.profile_name)
            return
        logger.info(
            "Binding %s to %s failed (%s): %s", pod.key, node_name, result_outcome.value, message
        )
        self._undo(info, framework, decision, requeue=result_outcome is not BindOutcome.GONE)
        if result_outcome is not BindOutcome.GONE:
            self._reporter.failed(
                pod,
                f"Binding rejected: {message}" if message else "Binding rejected",
                reason=SchedulingReason.SCHEDULER_ERROR,
                profile=framework.profile_name,
            )

    def _fail(
        self,
        info: QueuedPodInfo,
        message: str,
        *,
        profile: str,
        rejected: bool = False,
        rejected_by: Set[str] = frozenset(),
        pending: Set[str] = frozenset(),
    ) -> None:
        """Report a failed attempt and put the pod back.

        A rejection (the pod fits nowhere) is reported as Unschedulable and waits for an
        event that may help the rejecting plugins; anything else is a SchedulerError and
        backs off. The queue treats a rejection without plugins like an error, as Go does.
        """
        reason = SchedulingReason.UNSCHEDULABLE if rejected else SchedulingReason.SCHEDULER_ERROR
        self._reporter.failed(info.pod, message, reason=reason, profile=profile)
        self.queue.add_unschedulable(
            info,
            unschedulable_plugins=set(rejected_by),
            pending_plugins=set(pending),
            error=not rejected,
        )

    def _undo(
        self, info: QueuedPodInfo, framework: Framework, decision: Scheduled, *, requeue: bool
    ) -> None:
        pod = info.pod
        framework.run_unreserve(decision.state, pod, decision.node_name)
        forgotten = self.cache.forget(pod.uid)
        if forgotten is not None:
            # Freed capacity may help others, as if an assigned pod were deleted.
            self._notify(cluster_events.ASSIGNED_POD_DELETE, forgotten, None)
        if requeue and self.active:
            self.queue.requeue_after_bind_failure(info)
        else:
            self.queue.done(pod.uid)

    async def drain_binds(self) -> None:
        """Wait for every bind task started so far (tests and graceful shutdown)."""
        while self._binds:
            await asyncio.gather(*list(self._binds), return_exceptions=True)
