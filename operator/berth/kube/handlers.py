"""kopf handlers: the only place Berth meets kopf.

Every handler is `async def`: kopf runs plain `def` handlers in a thread pool,
which would mutate the scheduler's cache from several threads at once (and costs
a thread hop per event). Async handlers run on the event loop, one at a time
between awaits, which is exactly the ordering the cache relies on.

Pods, nodes and every other object Berth reads but does not own (namespaces,
workloads, PodDisruptionBudgets, the storage and DRA kinds) are watched with `@kopf.on.event` only:
state-tracking handlers, daemons or timers on them would write annotations or
finalizers onto them. The one daemon is on our own SchedulerProfile resources:
kopf peering stops daemons while this replica is paused, which makes them the
leadership signal for the scheduling loop.

Run with `berth run` (production) or `kopf run -A --peering berth -m berth.kube.handlers`
(development; the same settings loader reads BERTH_* variables, and kopf's own --standalone,
--peering and --priority are the flags).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import kopf

from berth.kube import wiring
from berth.kube.dra_kinds import DRA_KINDS
from berth.kube.storage_kinds import STORAGE_KINDS
from berth.kube.watched_kinds import WatchedKind
from berth.kube.workloads import workload_from_dict

logger = logging.getLogger(__name__)

GROUP = "berth.dev"
VERSION = "v1alpha1"
PROFILES = "schedulerprofiles"


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    await wiring.start(settings, memo)


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    await wiring.stop(memo)


@kopf.on.login()
def login(memo: kopf.Memo, **_: Any) -> kopf.ConnectionInfo | None:
    # The same identity for kopf's watches and for Berth's own API session.
    return wiring.connection_info(memo)


@kopf.on.event("v1", "pods")
async def pod_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.berth.on_pod_event(event["type"], event["object"])


@kopf.on.event("v1", "nodes")
async def node_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.berth.on_node_event(event["type"], event["object"])


@kopf.on.event("v1", "namespaces")
async def namespace_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    raw = event["object"]
    metadata = raw.get("metadata") or {}
    name = metadata.get("name", "")
    if event["type"] == "DELETED":
        memo.berth.scheduler.cache.remove_namespace(name)
    else:
        memo.berth.scheduler.cache.set_namespace(name, dict(metadata.get("labels") or {}))


def _workload_event(kind: str, event: kopf.RawEvent, memo: kopf.Memo) -> None:
    raw = event["object"]
    cache = memo.berth.scheduler.cache
    if event["type"] == "DELETED":
        metadata = raw.get("metadata") or {}
        cache.remove_workload(kind, metadata.get("namespace", ""), metadata.get("name", ""))
    else:
        cache.set_workload(workload_from_dict(kind, raw))


@kopf.on.event("v1", "services")
async def service_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _workload_event("Service", event, memo)


@kopf.on.event("v1", "replicationcontrollers")
async def replication_controller_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _workload_event("ReplicationController", event, memo)


@kopf.on.event("apps", "v1", "replicasets")
async def replica_set_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _workload_event("ReplicaSet", event, memo)


@kopf.on.event("apps", "v1", "statefulsets")
async def stateful_set_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _workload_event("StatefulSet", event, memo)


@kopf.on.event("policy", "v1", "poddisruptionbudgets")
async def pdb_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    # Read by preemption only; like kube-scheduler, a budget change requeues no pod.
    memo.berth.on_pdb_event(event["type"], event["object"])


KindHandler = Callable[..., Awaitable[None]]


def _watch_kind(
    watched: WatchedKind[object], app_method: str, registry: kopf.OperatorRegistry | None
) -> KindHandler:
    """Register an event handler passing `watched`'s events to the app's `app_method`."""

    async def kind_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        getattr(memo.berth, app_method)(watched.kind, event["type"], event["object"])

    kind_event.__name__ = kind_event.__qualname__ = f"{watched.plural}_event"
    if watched.group:
        on_event = kopf.on.event(watched.group, watched.version, watched.plural, registry=registry)
    else:
        on_event = kopf.on.event(watched.version, watched.plural, registry=registry)
    on_event(kind_event)
    return kind_event


def watch_storage(registry: kopf.OperatorRegistry | None = None) -> dict[str, KindHandler]:
    """An event handler per storage kind the volume plugins read (storage_kinds.py), registered
    on `registry` (kopf's default one when None); returned by kind."""
    return {
        watched.kind: _watch_kind(watched, "on_storage_event", registry)
        for watched in STORAGE_KINDS
    }


def watch_dra(registry: kopf.OperatorRegistry | None = None) -> dict[str, KindHandler]:
    """An event handler per DRA kind DynamicResources reads (dra_kinds.py), registered on
    `registry` (kopf's default one when None); returned by kind."""
    return {watched.kind: _watch_kind(watched, "on_dra_event", registry) for watched in DRA_KINDS}


# PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers,
# CSIStorageCapacities and VolumeAttachments, by kind.
STORAGE_HANDLERS = watch_storage()

# DeviceClasses, ResourceClaims, ResourceSlices and DeviceTaintRules, by kind.
DRA_HANDLERS = watch_dra()


@kopf.on.event(GROUP, VERSION, PROFILES)
async def profile_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    raw = event["object"]
    controller = memo.profiles
    if event["type"] == "DELETED":
        controller.delete((raw.get("metadata") or {}).get("name", ""))
        return
    verdict = controller.apply(raw)
    await controller.report(raw, verdict)


# cancellation_backoff: kopf cancels a stopping daemon after a few loop cycles unless told to
# wait; the release (stop the loop, release the Lease) must not be cut off halfway.
@kopf.daemon(GROUP, VERSION, PROFILES, cancellation_backoff=5.0, cancellation_timeout=10.0)
async def leadership(stopped: kopf.DaemonStopped, memo: kopf.Memo, **_: Any) -> None:
    """Runs while this replica is the active peer and the profile exists."""
    app = memo.berth
    await app.acquire()
    try:
        await stopped.wait()
    finally:
        # Shielded: even a forced cancellation lets the Lease be released (a successor then
        # need not wait for it to expire).
        await asyncio.shield(app.release())
