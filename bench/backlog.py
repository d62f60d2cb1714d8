"""The backlog drain: what a scheduler faces after a restart or a failover.

All measured pods are created, pending, before the scheduler process starts; the
clock starts when it is launched, so the drain includes its start-up, its initial
listing and every decision. Reported: seconds from the launch to the first and to
the last bind, the drain rate (pods / seconds to the last bind), the process's CPU
seconds for the whole drain per 1,000 pods, and its peak RSS.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bench.observe import (
    PodRecorder,
    create_with_creators,
    create_workload_nodes,
    fill_metrics,
    stop_watching,
    validate_trial,
)
from bench.procstat import ProcessSampler
from bench.schedulers import SchedulerUnderTest
from bench.workloads import MEASURED_NAMESPACE, Workload, pod_manifests
from berth.controlplane import LocalControlPlane

if TYPE_CHECKING:
    from bench.driver import TrialResult

__all__ = ["measure_backlog"]

# How often the driver looks for the scheduler's process id while it starts.
PID_POLL_SECONDS = 0.02


async def measure_backlog(
    plane: LocalControlPlane,
    workload: Workload,
    scheduler: SchedulerUnderTest,
    result: TrialResult,
    *,
    timeout: float,
    on_measured: Callable[[str, int | None], None] | None = None,
) -> None:
    phases = result.phases_seconds
    sampler = ProcessSampler(None)
    async with plane.client(concurrency=64) as client:
        await create_workload_nodes(client, workload, phases)
        began = time.monotonic()
        pods = pod_manifests(
            workload.measured_pod, workload.measured_pods, scheduler.scheduler_name
        )
        await create_with_creators(client, MEASURED_NAMESPACE, pods)
        phases["create_backlog"] = time.monotonic() - began
        result.measured_pods = len(pods)
        recorder = PodRecorder(client, (MEASURED_NAMESPACE,))
        await recorder.start()
        try:
            start = time.monotonic()
            # start() blocks until the scheduler is ready (Berth: leading), while it binds.
            starting = asyncio.ensure_future(asyncio.to_thread(scheduler.start, plane))
            while scheduler.pid is None and not starting.done():
                await asyncio.sleep(PID_POLL_SECONDS)
            sampler.pid = scheduler.pid
            sampler.start()
            if on_measured is not None:
                on_measured("start", scheduler.pid)
            try:
                end = await recorder.wait_bound(MEASURED_NAMESPACE, len(pods), timeout=timeout)
            except TimeoutError as error:
                result.status, result.error = "timeout", str(error)
                end = time.monotonic()
            finally:
                cpu = sampler.cpu()  # the process started with the drain: all of its CPU
                if on_measured is not None:
                    on_measured("end", scheduler.pid)
            await starting
            phases["scheduler_start"] = time.monotonic() - start
            phases["measured"] = end - start
            result.measured_bound = recorder.bound_in(MEASURED_NAMESPACE)
            fill_metrics(result, recorder, start=start, end=end)
            bound = [
                t for (namespace, _), t in recorder.bound.items() if namespace == MEASURED_NAMESPACE
            ]
            if bound:
                result.drain = {
                    "first_bind_seconds": min(bound) - start,
                    "last_bind_seconds": max(bound) - start,
                    "pods_per_second": len(bound) / (max(bound) - start),
                }
            if cpu is not None:
                result.cpu_seconds = cpu
                result.cpu_seconds_per_1000_pods = cpu / len(pods) * 1000
            await validate_trial(client, result, scheduler)
        finally:
            await stop_watching(recorder, sampler, result)
