"""The scheduler: intake, queue, scheduling cycle and binding cycle, put together.

kube-scheduler's shape: watch intake (intake.py) feeds the cache and the queue
(which owns the nominator); while this replica leads, the loop pops one pod at a
time and runs its scheduling cycle (scheduling_cycle.py) synchronously; a placed
pod's binding cycle (binding_cycle.py) then runs as its own task, so decisions are
sequential and bindings concurrent.
"""

from __future__ import annotations

import asyncio
import logging
import random

from berth.engine.framework.handle import FrameworkServices
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling.binding_cycle import BindingCycle, GuardedBinder, Term
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.failures import FailureHandler
from berth.scheduling.intake import Intake
from berth.scheduling.ports import (
    Binder,
    MonotonicClock,
    NullObserver,
    Preemptor,
    Reporter,
    SchedulingObserver,
    TimerClock,
)
from berth.scheduling.profiles import LiveProfiles
from berth.scheduling.queue import QueuedPodInfo, SchedulingQueue
from berth.scheduling.scheduling_cycle import SchedulingCycle
from berth.scheduling.storage_intake import StorageIntake

logger = logging.getLogger(__name__)

FLUSH_INTERVAL = 1.0


class Scheduler:
    def __init__(
        self,
        *,
        binder: Binder,
        reporter: Reporter,
        clock: TimerClock | None = None,  # test seam: a fake clock (time and Permit timers)
        rng: random.Random,  # test seam: tie-breaks among equal scores
        observer: SchedulingObserver | None = None,
        preemptor: Preemptor | None = None,
        max_binds_in_flight: int = 64,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = 300.0,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        clock = clock or MonotonicClock()
        self._clock = clock
        self._observer: SchedulingObserver = observer or NullObserver()
        self.term = Term()
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
        self.intake = Intake(
            cache=self.cache, queue=self.queue, profiles=self.profiles, reporter=reporter
        )
        # PVs, PVCs, storage classes and CSI objects: into the cluster, then as cluster events.
        self.storage_intake = StorageIntake(
            storage=self.cache.cluster.storage, notify=self.intake.notify
        )
        failures = FailureHandler(queue=self.queue, reporter=reporter)
        self.scheduling = SchedulingCycle(
            cache=self.cache,
            queue=self.queue,
            profiles=self.profiles,
            failures=failures,
            observer=self._observer,
            preemptor=preemptor,
            clock=clock,
            rng=rng,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        )
        bind_port = GuardedBinder(binder, term=self.term)
        self.binding = BindingCycle(
            cache=self.cache,
            queue=self.queue,
            notify=self.intake.notify,
            failures=failures,
            reporter=reporter,
            observer=self._observer,
            preemptor=preemptor,
            binder=bind_port,
            clock=clock,
            term=self.term,
            max_binds_in_flight=max_binds_in_flight,
        )
        # What every served profile's plugins reach through their handle.
        self.services = FrameworkServices(
            binder=bind_port, nominator=self.queue.nominator, cluster=self.cache.cluster
        )

    # ------------------------------------------------------------------ watch intake

    def on_pod(self, pod: Pod) -> None:
        self.intake.on_pod(pod)

    def on_pod_deleted(self, pod: Pod) -> None:
        self.intake.on_pod_deleted(pod)

    def on_node(self, node: Node) -> None:
        self.intake.on_node(node)

    def on_node_deleted(self, name: str) -> None:
        self.intake.on_node_deleted(name)

    def begin_listing(self) -> None:
        self.intake.begin_listing()

    def reconcile(self, nodes: list[Node], pods: list[Pod]) -> None:
        self.intake.reconcile(nodes, pods)

    # ------------------------------------------------------------------ profiles

    def set_profile(self, framework: Framework) -> None:
        """Serve `framework` (replacing any profile of the same schedulerName)."""
        framework.serve(self.services)
        self.profiles.set(framework)
        self.intake.profile_served(framework)

    def remove_profile(self, scheduler_name: str) -> None:
        self.profiles.remove(scheduler_name)
        self.intake.profile_removed(scheduler_name)

    # ------------------------------------------------------------------ leadership

    @property
    def active(self) -> bool:
        return self.term.active

    def activate(self) -> None:
        self.term.epoch += 1
        self.term.active = True

    def deactivate(self) -> None:
        """Stop deciding and binding. Binding cycles not yet posted are dropped (pods
        waiting at Permit are released so that their cycles end); the queue is emptied
        because a paused replica stops watching, and the next activation rebuilds it
        from a fresh listing."""
        self.term.epoch += 1
        self.term.active = False
        for framework in self.profiles:
            for waiting in framework.waiting_pods:
                waiting.reject("", "the scheduler stopped leading")
        self.queue.clear()

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Pop and schedule forever; the owner starts it on activation and cancels it on pause."""
        flusher = asyncio.create_task(self._flush_forever())
        try:
            while True:
                info = await self.queue.pop()
                self.schedule_next(info)
                # Give watch handlers and binding cycles a turn between decisions.
                await asyncio.sleep(0)
        finally:
            flusher.cancel()

    def schedule_next(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle; a placed pod's binding cycle starts as its own task."""
        try:
            assumed = self.scheduling.schedule_next(info)
        except Exception as failure:  # a bug must cost one pod an attempt, not the loop
            logger.exception("Scheduling %s failed unexpectedly", info.pod.key)
            if self.cache.is_assumed(info.pod.uid):
                self.cache.forget(info.pod.uid)
            self.scheduling.fail_unexpectedly(info, failure)
            return
        if assumed is not None:
            self.binding.start(assumed)

    async def drain_binds(self) -> None:
        """Wait for every binding cycle started so far (tests and graceful shutdown)."""
        await self.binding.drain()

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
