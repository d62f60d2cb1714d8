"""Berth's live wiring: the scheduler, its API session, binder, reporter, metrics and leadership.

One `BerthApp` per process. kopf handlers (handlers.py) feed it watch events;
the leadership daemons (one per SchedulerProfile, stopped by kopf peering on
pause) switch its scheduling loop on and off.

Leading takes two things: kopf peering has this replica active, and it holds the
Lease (lease.py). Peering-active replicas compete for the Lease; the loop starts
when the Lease is acquired (after a fresh listing) and stops as soon as it is
lost, even while peering still says active.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError
from berth.kube.dra_kinds import DRA_KINDS, dra_kind_named
from berth.kube.extender_calls import ExtenderMetrics, HttpExtenders, api_object_reader
from berth.kube.lease import LeaseElector
from berth.kube.observer import PrometheusObserver
from berth.kube.settings import Settings
from berth.kube.storage_kinds import STORAGE_KINDS, storage_kind_named
from berth.kube.watched_kinds import WatchedKind
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import Binder, MonotonicClock, Preemptor, Reporter
from berth.scheduling.source_retention import node_sources_needed, pod_source_needed

logger = logging.getLogger(__name__)


T = TypeVar("T")


def _readable(parse: Callable[[dict[str, Any]], T], raw: dict[str, Any]) -> T | None:
    """The parsed object, or None after a warning: one malformed object never stops the rest."""
    try:
        return parse(raw)
    except InvalidObjectError as error:
        logger.warning("Ignoring an object Berth cannot read: %s", error)
        return None


def _deliver(
    watched: WatchedKind[T] | None,
    kind: str,
    event_type: str | None,
    raw: dict[str, Any],
    *,
    on_object: Callable[[T], None],
    on_deleted: Callable[[str, str], None],
) -> None:
    """A watch event of a storage or DRA kind, parsed and handed on; a deletion by its key."""
    if watched is None:
        raise ValueError(f"not a watched kind: {kind!r}")
    if event_type == "DELETED":
        key = watched.key_of(raw)
        if key is None:
            logger.warning("Ignoring a deleted %s without a readable metadata.name", kind)
        else:
            on_deleted(kind, key)
        return
    obj = _readable(watched.parse, raw)
    if obj is not None:
        on_object(obj)


@dataclass(slots=True)
class Leadership:
    """Running leadership daemons (peering says active while one runs) and loop starts/stops."""

    holders: int = 0


class BerthApp:
    def __init__(
        self,
        *,
        settings: Settings,
        session: ApiSession,
        binder: Binder,
        reporter: Reporter,
        metrics: PrometheusObserver | None = None,
        preemptor: Preemptor | None = None,
        lease: LeaseElector | None = None,  # None: peering alone decides (unit tests)
    ) -> None:
        self.settings = settings
        self.lease = lease
        self.session = session
        self.reporter = reporter
        self.metrics = metrics
        registry = metrics.metrics.registry if metrics is not None else None
        self.extenders = HttpExtenders(
            ExtenderMetrics(registry) if registry is not None else None,
            read=api_object_reader(session),
        )
        self.scheduler = Scheduler(
            binder=binder,
            reporter=reporter,
            clock=MonotonicClock(),
            rng=random.Random(settings.seed),
            observer=metrics,
            preemptor=preemptor,
            max_binds_in_flight=settings.parallel_binds,
            initial_backoff=settings.pod_initial_backoff_seconds,
            max_backoff=settings.pod_max_backoff_seconds,
            max_in_unschedulable=settings.pod_max_in_unschedulable_seconds,
            percentage_of_nodes_to_score=settings.percentage_of_nodes_to_score,
            extenders=self.extenders,
        )
        self.leadership = Leadership()
        self._loop_task: asyncio.Task[None] | None = None
        self._lease_follower: asyncio.Task[None] | None = None
        self._transition = asyncio.Lock()
        self.synced = False

    # ------------------------------------------------------------------ watch intake (never raises)

    def on_pod_event(self, event_type: str | None, raw: dict[str, Any]) -> None:
        if event_type != "DELETED" and self._held_as_is(raw) is not None:
            return  # a re-delivery (a re-list, kopf's listing after Berth's): nothing changed
        pod = self._parse_pod(raw)
        if pod is None:
            return
        if event_type == "DELETED":
            self.scheduler.on_pod_deleted(pod)
        else:
            self.scheduler.on_pod(pod)

    def _held_as_is(self, raw: Mapping[str, Any]) -> Pod | None:
        """The pod Berth already holds (queued, or bound in its cache) at exactly this version.

        A resourceVersion names one stored state of the object, so a pod seen again at the
        version Berth holds needs no parse: a drain after a restart otherwise reads every
        pending pod twice (kopf's listing and the leader's own).
        """
        metadata = raw.get("metadata")
        if not isinstance(metadata, Mapping):
            return None
        uid, version = metadata.get("uid"), metadata.get("resourceVersion")
        if not uid or not version:
            return None
        queued = self.scheduler.queue.get(uid)
        cache = self.scheduler.cache
        if queued is not None:
            held: Pod | None = queued.pod
        elif cache.is_assumed(uid):
            return None  # held as Berth assumes it (on its chosen node), not as stored
        else:
            held = cache.cluster.pod(uid)
        return held if held is not None and held.resource_version == version else None

    def _pod_from_listing(self, raw: dict[str, Any]) -> Pod | None:
        return self._held_as_is(raw) or self._parse_pod(raw)

    def _parse_pod(self, raw: dict[str, Any]) -> Pod | None:
        """The pod, keeping the object as read only if an extender will be sent it."""
        pod = _readable(partial(Pod.from_dict, keep_source=False), raw)
        if pod is not None and pod_source_needed(self.scheduler.profiles, pod):
            pod.remember_source(raw)
        return pod

    def _parse_node(self, raw: dict[str, Any]) -> Node | None:
        """The node, keeping the object as read only if an extender will be sent it."""
        keep = node_sources_needed(self.scheduler.profiles)
        return _readable(partial(Node.from_dict, keep_source=keep), raw)

    def on_node_event(self, event_type: str | None, raw: dict[str, Any]) -> None:
        if event_type == "DELETED":
            metadata = raw.get("metadata")
            name = metadata.get("name") if isinstance(metadata, Mapping) else None
            if isinstance(name, str) and name:
                self.scheduler.on_node_deleted(name)
            else:
                logger.warning("Ignoring a deleted Node without a readable metadata.name")
            return
        node = self._parse_node(raw)
        if node is not None:
            self.scheduler.on_node(node)

    def on_storage_event(self, kind: str, event_type: str | None, raw: dict[str, Any]) -> None:
        """A PV, PVC, storage class or CSI object; an unreadable update keeps the last good one."""
        scheduler = self.scheduler
        _deliver(
            storage_kind_named(kind),
            kind,
            event_type,
            raw,
            on_object=scheduler.on_storage_object,
            on_deleted=scheduler.on_storage_deleted,
        )

    def on_dra_event(self, kind: str, event_type: str | None, raw: dict[str, Any]) -> None:
        """A DeviceClass, ResourceClaim, ResourceSlice or DeviceTaintRule; an unreadable update
        keeps the last good one."""
        scheduler = self.scheduler
        _deliver(
            dra_kind_named(kind),
            kind,
            event_type,
            raw,
            on_object=scheduler.on_dra_object,
            on_deleted=scheduler.on_dra_deleted,
        )

    def on_pdb_event(self, event_type: str | None, raw: dict[str, Any]) -> None:
        """A PodDisruptionBudget for preemption; an unreadable update keeps the last good one."""
        cache = self.scheduler.cache
        if event_type == "DELETED":
            metadata = raw.get("metadata") or {}
            cache.remove_pdb(metadata.get("namespace", ""), metadata.get("name", ""))
            return
        pdb = _readable(PodDisruptionBudget.from_dict, raw)
        if pdb is not None:
            cache.upsert_pdb(pdb)

    # ------------------------------------------------------------------ leadership

    async def acquire(self) -> None:
        """A leadership daemon started: on the first, compete for the Lease (or lead at once)."""
        async with self._transition:
            self.leadership.holders += 1
            if self.leadership.holders > 1:
                return
            if self.lease is None:
                await self._start_loop()
                return
            self.lease.compete()
            self._lease_follower = asyncio.create_task(
                self._follow_lease(self.lease), name="berth-lease-follower"
            )

    async def release(self) -> None:
        async with self._transition:
            self.leadership.holders = max(0, self.leadership.holders - 1)
            if self.leadership.holders:
                return
            await self._stop_following()
            await self._stop_loop()
            if self.lease is not None:
                await self.lease.stand_down()

    @property
    def leading(self) -> bool:
        return self._loop_task is not None

    async def _follow_lease(self, lease: LeaseElector) -> None:
        """Run the loop exactly while the Lease is held (and peering keeps this replica active)."""
        while True:
            term = await lease.wait_until_leading()
            try:
                async with self._transition:
                    await self._start_loop()
            except (ApiError, ApiTransportError) as error:
                logger.warning("Listing the cluster failed; retrying: %s", error)
                await asyncio.sleep(self.settings.lease_retry_period_seconds)
                continue
            await lease.wait_until_lost(term)
            async with self._transition:
                await self._stop_loop()

    async def _stop_following(self) -> None:
        follower, self._lease_follower = self._lease_follower, None
        if follower is not None:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)

    async def _start_loop(self) -> None:
        """Converge the cache from a fresh listing, then schedule."""
        await self._reconcile_from_api()
        self.scheduler.activate()
        self._loop_task = asyncio.create_task(self.scheduler.run(), name="berth-scheduling-loop")
        if self.metrics is not None:
            self.metrics.leader(True)
        logger.info("Leading: the scheduling loop runs")

    async def _stop_loop(self) -> None:
        if self._loop_task is None:
            return
        self.scheduler.deactivate()
        self._loop_task.cancel()
        await asyncio.gather(self._loop_task, return_exceptions=True)
        self._loop_task = None
        if self.metrics is not None:
            self.metrics.leader(False)
        logger.info("Standing by: the scheduling loop is paused")

    async def _reconcile_from_api(self) -> None:
        """List nodes, non-terminal pods and PDBs: a resumed watch never reports what vanished."""
        self.scheduler.begin_listing()
        self.scheduler.cache.begin_pdb_listing()
        nodes = await self._list("/api/v1/nodes", self._parse_node)
        pods = await self._list(
            "/api/v1/pods",
            self._pod_from_listing,
            params={"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"},
        )
        pdbs = await self._list(
            "/apis/policy/v1/poddisruptionbudgets",
            partial(_readable, PodDisruptionBudget.from_dict),
        )
        self.scheduler.reconcile(nodes, pods)
        ghost_pdbs = self.scheduler.cache.reconcile_pdbs(pdbs)
        if ghost_pdbs:
            logger.info("Reconciled the cache: dropped %d ghost disruption budget(s)", ghost_pdbs)
        await self._reconcile_storage_from_api()
        self.synced = True

    async def _reconcile_storage_from_api(self) -> None:
        """List every storage kind the volume plugins read and every DRA kind DynamicResources
        reads; the watch wins over the listing.

        A kind Berth may not list (its ClusterRole predates the plugin) is reported and left
        as the watch has it: kopf cannot watch it either, and scheduling every pod that needs
        none of it beats scheduling none.
        """
        scheduler = self.scheduler
        await self._reconcile_kinds(
            STORAGE_KINDS,
            reader="the volume plugins",
            begin=scheduler.begin_storage_listing,
            cancel=scheduler.cancel_storage_listing,
            reconcile=scheduler.reconcile_storage,
        )
        await self._reconcile_kinds(
            DRA_KINDS,
            reader="DynamicResources",
            begin=scheduler.begin_dra_listing,
            cancel=scheduler.cancel_dra_listing,
            reconcile=scheduler.reconcile_dra,
        )

    async def _reconcile_kinds(
        self,
        kinds: tuple[WatchedKind[T], ...],
        *,
        reader: str,
        begin: Callable[[str], None],
        cancel: Callable[[str], None],
        reconcile: Callable[[str, list[T]], None],
    ) -> None:
        for watched in kinds:
            begin(watched.kind)
            try:
                listed: list[T] = await self._list(
                    watched.list_path, partial(_readable, watched.parse)
                )
            except ApiError as failure:
                if failure.status != 403:
                    raise
                cancel(watched.kind)
                logger.error(
                    "Cannot list %s (%s): %s sees none; Berth's ClusterRole "
                    "needs get, list and watch on %s",
                    watched.plural,
                    failure,
                    reader,
                    watched.plural,
                )
                continue
            reconcile(watched.kind, listed)

    async def _list(
        self,
        path: str,
        read: Callable[[dict[str, Any]], T | None],
        *,
        params: Mapping[str, str] | None = None,
    ) -> list[T]:
        """The readable objects of a collection, each page read before the next is fetched."""
        found: list[T] = []
        async for page, _ in self.session.list_pages(path, params=params):
            found.extend(item for raw in page if (item := read(raw)) is not None)
        return found

    async def close(self) -> None:
        """Graceful shutdown: stop scheduling, let posted binds and claim writes finish, then
        release the Lease."""
        await self._stop_following()
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        await self.scheduler.drain_binds()
        # Unreserve/PostFilter writes still in flight (their cycles may have been cancelled
        # above) finish while this replica still holds the Lease that fences them.
        await self.scheduler.drain_claim_releases()
        await self.extenders.close()
        if self.lease is not None:
            await self.lease.stand_down()
