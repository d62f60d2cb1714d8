"""Start-up and shutdown of a Berth process inside kopf: settings, login, session, app, servers."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import ipaddress
import logging
import os
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kopf

from berth.engine.errors import PluginPackageError
from berth.engine.registry import Registry
from berth.kube.api import ApiSession, connection_info_from_kubeconfig
from berth.kube.app import BerthApp
from berth.kube.binder import ApiBinder
from berth.kube.claim_writer import ApiClaimWriter
from berth.kube.lease import LeaseElector
from berth.kube.lease_store import ApiLeaseStore
from berth.kube.metrics import SchedulerMetrics
from berth.kube.observer import PrometheusObserver
from berth.kube.preemption import ApiPreemptor
from berth.kube.profile_controller import ProfileController
from berth.kube.reporting import ApiReporter
from berth.kube.server import HealthServer
from berth.kube.settings import Settings, SettingsError, load_settings
from berth.kube.volume_writer import ApiVolumeWriter
from berth.profiles import plugin_registry
from berth.scheduling.ports import MonotonicClock

logger = logging.getLogger(__name__)

FINALIZER = "berth.dev/leadership"
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
# kopf's default pauses between failed API requests grow to 21 s, so its watches could
# resume that long after an API server came back; capped at 3 s they still span about a
# minute of outage (as long as the default) before a request gives up.
API_RETRY_BACKOFFS = (1.0, 1.0, 2.0, 2.0, *(3.0,) * 17)
OWN_GROUP_PREFIX = "berth.dev/"
LIST_PAGE_SIZE = 500
# Generation 0 collects after this many net allocations (default 700); the older
# generations after this many collections of the younger one (defaults 10 and 10).
GC_THRESHOLDS = (50_000, 20, 100)


def identity() -> str:
    return (
        os.environ.get("POD_ID")
        or os.environ.get("POD_NAME")
        or f"{socket.gethostname()}-{os.getpid()}"
    )


def default_priority() -> int:
    """Distinct per replica (equal priorities make kopf pause everyone): the pod IP, else a hash."""
    pod_ip = os.environ.get("POD_IP", "")
    if pod_ip:
        try:
            return int(ipaddress.ip_address(pod_ip)) % 2**31
        except ValueError:
            pass
    return int.from_bytes(hashlib.sha256(identity().encode()).digest()[:4], "big") % 2**31


def kopf_run_flags(kopf_settings: kopf.OperatorSettings) -> dict[str, Any]:
    """What `kopf run`'s own peering options said: the flags of the `kopf run` entry point.

    kopf applies --standalone, --peering NAME and --priority N to its settings
    before the startup handlers run; anything left at kopf's default was not given.
    """
    given = kopf_settings.peering
    default = kopf.OperatorSettings().peering
    return {
        "standalone": True if given.standalone else None,
        "peering_name": given.name if given.mandatory else None,
        "priority": given.priority if given.priority != default.priority else None,
    }


class OwnKindsDiffBase(kopf.AnnotationsDiffBaseStorage):
    """kopf's diff-base (the "last handled" essence) only for kinds of Berth's own group.

    kopf computes an object's essence on every watch event: a deep copy of the body, for
    state-tracking handlers (on.create/update/resume) to diff against. Berth never puts
    such handlers on objects it does not own (they would write annotations onto pods and
    nodes), so for those the copy, half of kopf's cost per event, is never read: they get
    an empty essence. Berth's own kinds keep kopf's default behaviour.
    """

    def build(
        self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None
    ) -> kopf.BodyEssence:
        if _owned(body):
            return super().build(body=body, extra_fields=extra_fields)
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return super().fetch(body=body) if _owned(body) else None


def _owned(body: kopf.Body) -> bool:
    return str(body.get("apiVersion", "")).startswith(OWN_GROUP_PREFIX)


def tune_garbage_collector() -> None:
    """Spare the event path most of the cyclic collector's passes (call once started).

    With Python's default thresholds a collection runs every 700 net allocations, and
    each full one walks every object of the scheduler's cache: under a burst of watch
    events that was about a third of Berth's CPU. What exists at the end of start-up
    (modules, kopf's registry, the plugin registry) is frozen out of the collector's
    sight, and collections run far less often. Reference counting still frees almost
    everything at once; only reference cycles wait longer.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def configure(kopf_settings: kopf.OperatorSettings, memo: kopf.Memo) -> Settings:
    """This process's settings, and kopf's settings that follow from them (no I/O).

    `berth run` has loaded and validated the settings and put them in the memo;
    under `kopf run -m berth.kube.handlers` they are loaded here, by the same loader.
    """
    settings: Settings | None = memo.get("settings")
    if settings is None:
        try:
            settings = load_settings(environ=os.environ, flags=kopf_run_flags(kopf_settings))
        except SettingsError as error:
            raise kopf.PermanentError(f"Berth cannot start: {error}") from None
        memo["settings"] = settings
    kopf_settings.posting.enabled = False  # Berth posts its own events (events.k8s.io/v1)
    kopf_settings.persistence.finalizer = FINALIZER
    kopf_settings.persistence.diffbase_storage = OwnKindsDiffBase()
    kopf_settings.watching.field_selectors["v1", "pods"] = POD_FIELD_SELECTOR
    # kopf's initial LIST is one unpaginated answer unless told otherwise: 10,000 pods
    # at once would be the process's peak memory.
    kopf_settings.watching.chunk_size = LIST_PAGE_SIZE
    kopf_settings.networking.error_backoffs = API_RETRY_BACKOFFS
    configure_peering(kopf_settings, settings)
    return settings


def configure_peering(kopf_settings: kopf.OperatorSettings, settings: Settings) -> None:
    """The one place Berth's leader election is set up (kopf starts peering after startup)."""
    peering = kopf_settings.peering
    peering.clusterwide = True
    peering.lifetime = settings.peering_lifetime_seconds
    peering.standalone = settings.standalone
    # Mandatory: a replica starts paused until peering says it leads. Not when standalone:
    # kopf would then wait forever for a peering object it does not watch.
    peering.mandatory = not settings.standalone
    peering.name = settings.peering_name
    peering.priority = settings.priority if settings.priority is not None else default_priority()


def plugins(memo: kopf.Memo) -> Registry:
    """The one plugin registry of this process: in-tree plugins and installed plugin packages.

    `berth run` has loaded it and put it in the memo; under `kopf run -m berth.kube.handlers`
    it is loaded here, by the same loader. An unusable plugin package stops the start.
    """
    registry: Registry | None = memo.get("registry")
    if registry is None:
        try:
            registry = plugin_registry()
        except PluginPackageError as error:
            raise kopf.PermanentError(f"Berth cannot start: {error}") from None
        memo["registry"] = registry
    return registry


def connection_info(memo: kopf.Memo) -> kopf.ConnectionInfo | None:
    cached = memo.get("connection_info")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    settings: Settings = memo["settings"]  # set by the startup handler, which runs first
    info: kopf.ConnectionInfo | None
    if settings.kubeconfig:
        info, _token_file = connection_info_from_kubeconfig(Path(settings.kubeconfig))
    else:
        info = kopf.login_with_service_account(settings=kopf.OperatorSettings())
    memo["connection_info"] = info
    return info


async def start(kopf_settings: kopf.OperatorSettings, memo: kopf.Memo) -> None:
    settings = configure(kopf_settings, memo)
    registry = plugins(memo)
    info = connection_info(memo)
    if info is None:
        raise kopf.PermanentError("no credentials: set --kubeconfig/KUBECONFIG or run in a pod")
    session = ApiSession.from_connection_info(info)
    metrics = SchedulerMetrics()
    reporter = ApiReporter(session, clock=MonotonicClock(), instance=identity())
    reporter.start()
    lease: LeaseElector | None = None
    if not settings.standalone:  # standalone = no leader election at all (one replica, dev)
        lease = LeaseElector(
            ApiLeaseStore(session, namespace=settings.lease_namespace, name=settings.lease_name),
            identity=identity(),
            timing=settings.lease_timing(),
            on_refused=metrics.count_lease_refused,
        )
        # Runs for the whole process: a paused replica keeps observing the Lease.
        memo["lease_task"] = asyncio.create_task(lease.run(), name="berth-lease")
    preemptor = ApiPreemptor(session, instance=identity(), fence=lease)
    app = BerthApp(
        settings=settings,
        session=session,
        binder=ApiBinder(session, metrics=metrics, fence=lease),
        reporter=reporter,
        metrics=PrometheusObserver(metrics),
        preemptor=preemptor,
        lease=lease,
    )
    # Events plugins record through their handle go out with the scheduler's own.
    app.scheduler.services.events = reporter
    # DynamicResources' PreBind writes claims' allocations and reservations through it.
    app.scheduler.services.claims = ApiClaimWriter(session, fence=lease)
    # VolumeBinding's PreBind writes PV claimRefs and claims' selected nodes through it.
    app.scheduler.services.volumes = ApiVolumeWriter(session, fence=lease)
    profiles = ProfileController(
        app.scheduler, session, registry=registry, extenders=settings.extenders
    )
    server = HealthServer(
        settings.metrics_host,
        settings.metrics_port,
        metrics=metrics,
        ready=lambda: app.synced or not app.leading,
        configz=lambda: {"settings": settings.to_dict(), "profiles": profiles.configz()},
    )
    await server.start()
    memo["berth"] = app
    memo["preemptor"] = preemptor
    memo["profiles"] = profiles
    memo["server"] = server
    memo["reporter"] = reporter
    logger.info("Berth starting with %s", settings.to_dict())
    tune_garbage_collector()


async def stop(memo: kopf.Memo) -> None:
    app: BerthApp | None = memo.get("berth")
    if app is not None:
        await app.close()  # releases the Lease
    preemptor: ApiPreemptor | None = memo.get("preemptor")
    if preemptor is not None:
        await preemptor.drain()  # victims already chosen are evicted before the session closes
    lease_task: asyncio.Task[None] | None = memo.get("lease_task")
    if lease_task is not None:
        lease_task.cancel()
        await asyncio.gather(lease_task, return_exceptions=True)
    reporter: Any = memo.get("reporter")
    if reporter is not None:
        await reporter.stop()
    server: Any = memo.get("server")
    if server is not None:
        await server.stop()
    if app is not None:
        await app.session.close()
