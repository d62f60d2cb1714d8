"""The scheduler: intake, queue, scheduling cycle and binding cycle, put together.

kube-scheduler's shape: watch intake (intake.py) feeds the cache and the queue
(which owns the nominator); while this replica leads, the loop pops one pod at a
time and runs its scheduling cycle (scheduling_cycle.py) synchronously, or, when
extenders of its profile are interested in the pod, awaiting their answers with
every change to the cache held meanwhile (held_changes.py); a placed pod's
binding cycle (binding_cycle.py) then runs as its own task, so decisions are
sequential and bindings concurrent. A failed attempt whose claim releases are still
being written (claim_releases.py) is settled before the next pod is popped.
"""

from __future__ import annotations

import asyncio
import logging
import random

from berth.engine.cluster.dra import DraObject
from berth.engine.cluster.storage import StorageObject
from berth.engine.dra.claims import ResourceClaim
from berth.engine.framework.events import Action
from berth.engine.framework.handle import FrameworkServices
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling.binding_cycle import BindingCycle, GuardedBinder, Term
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.claim_releases import ClaimReleases
from berth.scheduling.cluster_events import watched_event
from berth.scheduling.failures import FailureHandler
from berth.scheduling.intake import Intake
from berth.scheduling.object_intake import DraIntake, StorageIntake
from berth.scheduling.ports import (
    Binder,
    ExtenderCalls,
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
        extenders: ExtenderCalls | None = None,  # None: profiles with extenders cannot run
    ) -> None:
        clock = clock or MonotonicClock()
        self._extenders = extenders
        self._clock = clock
        self._observer: SchedulingObserver = observer or NullObserver()
        self.term = Term()
        self.cache = SchedulerCache()
        # Changes to the cache wait here while a decision awaits its extenders.
        self.held = self.cache.held
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
        # DeviceClasses, ResourceClaims, ResourceSlices and DeviceTaintRules, the same way.
        self.dra_intake = DraIntake(dra=self.cache.cluster.dra, notify=self.intake.notify)
        # Claims DynamicResources assumes from its writes, or restores, are claim updates too.
        self.cache.cluster.dra.on_claim_assumption = self._claim_assumption_changed
        failures = FailureHandler(queue=self.queue, reporter=reporter)
        self.releases = ClaimReleases()
        self.scheduling = SchedulingCycle(
            cache=self.cache,
            queue=self.queue,
            profiles=self.profiles,
            failures=failures,
            observer=self._observer,
            preemptor=preemptor,
            clock=clock,
            rng=rng,
            releases=self.releases,
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
            held=self.held,
            releases=self.releases,
            extenders=extenders,
        )
        # What every served profile's plugins reach through their handle.
        self.services = FrameworkServices(
            binder=bind_port, nominator=self.queue.nominator, cluster=self.cache.cluster
        )

    # ------------------------------------------------------------------ watch intake

    def on_pod(self, pod: Pod) -> None:
        self.held.apply(self.intake.on_pod, pod)

    def on_pod_deleted(self, pod: Pod) -> None:
        self.held.apply(self.intake.on_pod_deleted, pod)

    def on_node(self, node: Node) -> None:
        self.held.apply(self.intake.on_node, node)

    def on_node_deleted(self, name: str) -> None:
        self.held.apply(self.intake.on_node_deleted, name)

    def begin_listing(self) -> None:
        self.held.apply(self.intake.begin_listing)

    def reconcile(self, nodes: list[Node], pods: list[Pod]) -> None:
        self.held.apply(self.intake.reconcile, nodes, pods)

    # Storage objects go through the same hold: a decision awaiting its extenders must not
    # see a claim or volume change half-way.

    def on_storage_object(self, obj: StorageObject) -> None:
        self.held.apply(self.storage_intake.on_object, obj)

    def on_storage_deleted(self, kind: str, key: str) -> None:
        self.held.apply(self.storage_intake.on_deleted, kind, key)

    def begin_storage_listing(self, kind: str) -> None:
        self.held.apply(self.storage_intake.begin_listing, kind)

    def cancel_storage_listing(self, kind: str) -> None:
        self.held.apply(self.storage_intake.cancel_listing, kind)

    def reconcile_storage(self, kind: str, listed: list[StorageObject]) -> None:
        self.held.apply(self.storage_intake.reconcile, kind, listed)

    # DRA objects too: a claim allocated half-way through a decision would be counted wrong.

    def on_dra_object(self, obj: DraObject) -> None:
        self.held.apply(self.dra_intake.on_object, obj)

    def on_dra_deleted(self, kind: str, key: str) -> None:
        self.held.apply(self.dra_intake.on_deleted, kind, key)

    def begin_dra_listing(self, kind: str) -> None:
        self.held.apply(self.dra_intake.begin_listing, kind)

    def cancel_dra_listing(self, kind: str) -> None:
        self.held.apply(self.dra_intake.cancel_listing, kind)

    def reconcile_dra(self, kind: str, listed: list[DraObject]) -> None:
        self.held.apply(self.dra_intake.reconcile, kind, listed)

    def _claim_assumption_changed(self, old: ResourceClaim, new: ResourceClaim) -> None:
        # Held like the watch's events: a decision awaiting extenders sees the queue unmoved.
        self.held.apply(self.intake.notify, watched_event("ResourceClaim", Action.UPDATE), old, new)

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
                if self._extenders is not None and self.scheduling.calls_extenders(info.pod):
                    await self.schedule_with_extenders(info, self._extenders)
                else:
                    self.schedule_next(info)
                await self.settle()
                # Give watch handlers and binding cycles a turn between decisions.
                await asyncio.sleep(0)
        finally:
            flusher.cancel()

    def schedule_next(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle; a placed pod's binding cycle starts as its own task."""
        try:
            assumed = self.scheduling.schedule_next(info)
        except Exception as failure:  # a bug must cost one pod an attempt, not the loop
            self._failed_unexpectedly(info, failure)
            return
        if assumed is not None:
            self.binding.start(assumed)

    async def schedule_with_extenders(self, info: QueuedPodInfo, calls: ExtenderCalls) -> None:
        """`schedule_next` for a pod whose decision awaits extenders: every change to the
        cache is held until the pod is assumed (or the attempt failed)."""
        with self.held.hold():
            try:
                assumed = await self.scheduling.schedule_with_extenders(info, calls)
            except Exception as failure:  # a bug must cost one pod an attempt, not the loop
                self._failed_unexpectedly(info, failure)
                return
        if assumed is not None:
            self.binding.start(assumed)

    async def settle(self) -> None:
        """Finish the failed attempt whose claim releases are being written, if any."""
        if self.scheduling.unsettled:
            await self.scheduling.settle()

    def _failed_unexpectedly(self, info: QueuedPodInfo, failure: Exception) -> None:
        logger.error("Scheduling %s failed unexpectedly", info.pod.key, exc_info=failure)
        if self.cache.is_assumed(info.pod.uid):
            self.cache.forget(info.pod.uid)
        self.scheduling.fail_unexpectedly(info, failure)

    async def drain_binds(self) -> None:
        """Wait for every binding cycle started so far (tests and graceful shutdown)."""
        await self.binding.drain()

    async def drain_claim_releases(self) -> None:
        """Wait for every claim release started so far: before the Lease goes, so that no
        claim stays allocated or reserved for a pod nobody will bind (graceful shutdown)."""
        await self.releases.drain()

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
