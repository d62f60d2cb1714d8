"""Start-up and shutdown of a Berth process inside kopf: settings, login, session, app, servers."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import os
import socket
from pathlib import Path
from typing import Any

import kopf

from berth.kube.api import ApiSession, connection_info_from_kubeconfig
from berth.kube.app import BerthApp, Settings
from berth.kube.binder import ApiBinder
from berth.kube.lease import LeaseElector
from berth.kube.lease_store import ApiLeaseStore
from berth.kube.metrics import SchedulerMetrics
from berth.kube.observer import PrometheusObserver
from berth.kube.preemption import ApiPreemptor
from berth.kube.profile_controller import ProfileController
from berth.kube.reporting import ApiReporter
from berth.kube.server import HealthServer
from berth.scheduling.ports import MonotonicClock

logger = logging.getLogger(__name__)

FINALIZER = "berth.dev/leadership"
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


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


def settings_from_env() -> Settings:
    """Settings for `kopf run -m berth.kube.handlers`, from BERTH_* variables."""
    env = os.environ

    def number(name: str, default: float) -> float:
        return float(env.get(name, default))

    return Settings(
        metrics_port=int(number("BERTH_METRICS_PORT", 10260)),
        parallel_binds=int(number("BERTH_PARALLEL_BINDS", 64)),
        pod_initial_backoff_seconds=number("BERTH_POD_INITIAL_BACKOFF_SECONDS", 1.0),
        pod_max_backoff_seconds=number("BERTH_POD_MAX_BACKOFF_SECONDS", 10.0),
        peering_name=env.get("BERTH_PEERING", "berth"),
        peering_lifetime_seconds=int(number("BERTH_PEERING_LIFETIME_SECONDS", 15)),
        kubeconfig=env.get("KUBECONFIG", ""),
    )


def connection_info(memo: kopf.Memo) -> kopf.ConnectionInfo | None:
    cached = memo.get("connection_info")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    settings: Settings = memo.get("settings") or settings_from_env()
    info: kopf.ConnectionInfo | None
    if settings.kubeconfig:
        info, _token_file = connection_info_from_kubeconfig(Path(settings.kubeconfig))
    else:
        info = kopf.login_with_service_account(settings=kopf.OperatorSettings())
    memo["connection_info"] = info
    return info


async def start(kopf_settings: kopf.OperatorSettings, memo: kopf.Memo) -> None:
    settings: Settings = memo.get("settings") or settings_from_env()
    memo["settings"] = settings
    kopf_settings.posting.enabled = False  # Berth posts its own events (events.k8s.io/v1)
    kopf_settings.persistence.finalizer = FINALIZER
    kopf_settings.watching.field_selectors["v1", "pods"] = POD_FIELD_SELECTOR
    kopf_settings.peering.lifetime = settings.peering_lifetime_seconds
    if not settings.standalone:
        kopf_settings.peering.name = settings.peering_name
        kopf_settings.peering.mandatory = True
        kopf_settings.peering.priority = (
            settings.priority if settings.priority is not None else default_priority()
        )
    kopf_settings.peering.clusterwide = True

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
    app = BerthApp(
        settings=settings,
        session=session,
        binder=ApiBinder(session, fence=lease),
        reporter=reporter,
        metrics=PrometheusObserver(metrics),
        preemptor=ApiPreemptor(session, instance=identity(), fence=lease),
        lease=lease,
    )
    profiles = ProfileController(app.scheduler, session)
    server = HealthServer(
        settings.metrics_host,
        settings.metrics_port,
        metrics=metrics,
        ready=lambda: app.synced or not app.leading,
        configz=lambda: {"settings": settings.to_dict(), "profiles": profiles.configz()},
    )
    await server.start()
    memo["berth"] = app
    memo["profiles"] = profiles
    memo["server"] = server
    memo["reporter"] = reporter
    logger.info("Berth starting with %s", settings.to_dict())


async def stop(memo: kopf.Memo) -> None:
    app: BerthApp | None = memo.get("berth")
    if app is not None:
        await app.close()  # releases the Lease
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
