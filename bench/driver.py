"""One benchmark trial: one workload against one scheduler on a fresh control plane.

The same code path for every scheduler under test:
1. a fresh etcd (tmpfs) + kube-apiserver; namespaces and the PriorityClass;
2. the scheduler is started (before any node exists, as in scheduler_perf);
3. the driver's own watch on all pods starts; every timestamp below is the
   driver's monotonic clock at the moment a watch event arrived;
4. nodes from node-default.yaml; init pods, created by 30 parallel creators and
   waited on until bound;
5. the measured phase: churn (if the workload has it) and the measured pods,
   again 30 parallel creators, until every measured pod is seen bound;
6. the final Pods and Nodes are listed and validated; metrics are computed by
   bench.metrics from the watch timestamps and /proc readings.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.backlog import measure_backlog
from bench.observe import (
    CREATORS,
    PodRecorder,
    create_with_creators,
    create_workload_nodes,
    fill_metrics,
    stop_watching,
    validate_trial,
)
from bench.procstat import ProcessSampler
from bench.schedulers import SchedulerUnderTest
from bench.workloads import (
    CHURN_NAMESPACE,
    HIGH_PRIORITY_CLASS,
    INIT_NAMESPACE,
    MEASURED_NAMESPACE,
    Workload,
    churn_node_manifest,
    pod_manifests,
    service_manifest,
)
from berth.controlplane import KubeClient, LocalControlPlane
from berth.controlplane.client import ApiError

__all__ = ["CREATORS", "TrialResult", "run_trial"]

logger = logging.getLogger("bench")

# Called with ("start" | "end", scheduler pid) around the measured phase.
MeasuredPhaseHook = Callable[[str, int | None], None]


@dataclass
class TrialResult:
    workload: str
    scheduler: str
    repetition: int
    status: str = "ok"  # ok | void (validator) | timeout | error
    error: str | None = None
    throughput: dict[str, float] | None = None
    throughput_samples: list[float] = field(default_factory=list)
    makespan_seconds: float | None = None
    latency_seconds: dict[str, float] | None = None
    cpu_seconds: float | None = None
    cpu_seconds_per_1000_pods: float | None = None
    peak_rss_bytes: int | None = None
    # Backlog drain only: seconds from the scheduler's launch to its first and last bind.
    drain: dict[str, float] | None = None
    rss_high_water_mark_bytes: int | None = None
    measured_pods: int = 0
    measured_bound: int = 0
    binds_per_second: list[int] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)
    phases_seconds: dict[str, float] = field(default_factory=dict)
    scheduler_info: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # 1-min load average before and after: the machine is shared, so say how busy it was.
    load_average: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def run_churn(client: KubeClient, workload: Workload, scheduler_name: str) -> None:
    """scheduler_perf's churn op: runs until cancelled."""
    churn = workload.churn
    assert churn is not None
    pods_path = f"/api/v1/namespaces/{CHURN_NAMESPACE}/pods"
    background: set[asyncio.Task[Any]] = set()

    def fire(coroutine: Any) -> None:
        # The cadence must not wait on the API: every call runs on its own.
        task = asyncio.get_running_loop().create_task(coroutine)
        background.add(task)
        task.add_done_callback(background.discard)

    async def ignore_missing(coroutine: Any) -> None:
        with contextlib.suppress(ApiError):
            await coroutine

    previous: list[str] = []
    try:
        for index in itertools.count(1):
            pod = churn.pod(f"pod-h-{index:05d}", scheduler_name)
            if churn.mode == "create":
                fire(ignore_missing(client.create(pods_path, pod)))
            else:  # recreate: delete the previous set, create a new one
                for path in previous:
                    fire(ignore_missing(client.delete(path, grace_period_seconds=0)))
                node_name = f"node-churn-{index:05d}"
                service_name = f"service-churn-{index:05d}"
                previous = [
                    f"/api/v1/nodes/{node_name}",
                    f"{pods_path}/{pod['metadata']['name']}",
                    f"/api/v1/namespaces/{CHURN_NAMESPACE}/services/{service_name}",
                ]
                fire(ignore_missing(client.create("/api/v1/nodes", churn_node_manifest(node_name))))
                fire(ignore_missing(client.create(pods_path, pod)))
                fire(
                    ignore_missing(
                        client.create(
                            f"/api/v1/namespaces/{CHURN_NAMESPACE}/services",
                            service_manifest(service_name),
                        )
                    )
                )
            await asyncio.sleep(churn.interval_seconds)
    finally:
        for task in list(background):
            task.cancel()


def _prepare_api(plane: LocalControlPlane) -> None:
    for namespace in (INIT_NAMESPACE, MEASURED_NAMESPACE, CHURN_NAMESPACE):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        plane.request("POST", "/api/v1/namespaces", body, ok_statuses=(409,))
    priority_class = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": HIGH_PRIORITY_CLASS},
        "value": 10,
    }
    plane.request(
        "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority_class, ok_statuses=(409,)
    )


def _timeout_for(pods: int) -> float:
    return max(60.0, pods / 10.0)


async def _measure(
    plane: LocalControlPlane,
    workload: Workload,
    scheduler: SchedulerUnderTest,
    result: TrialResult,
    on_measured: MeasuredPhaseHook | None,
) -> None:
    sampler = ProcessSampler(scheduler.pid)
    sampler.start()
    phases = result.phases_seconds
    async with plane.client(concurrency=64) as client:
        recorder = PodRecorder(client, (INIT_NAMESPACE, MEASURED_NAMESPACE))
        await recorder.start()
        try:
            await create_workload_nodes(client, workload, phases)

            began = time.monotonic()
            init = pod_manifests(workload.init_pod, workload.init_pods, scheduler.scheduler_name)
            await create_with_creators(client, INIT_NAMESPACE, init)
            if init:
                await recorder.wait_bound(
                    INIT_NAMESPACE, len(init), timeout=_timeout_for(len(init))
                )
            phases["init_pods"] = time.monotonic() - began

            measured = pod_manifests(
                workload.measured_pod, workload.measured_pods, scheduler.scheduler_name
            )
            result.measured_pods = len(measured)
            churn_task = None
            if on_measured is not None:
                on_measured("start", scheduler.pid)
            cpu_before = sampler.cpu()
            start = time.monotonic()
            if workload.churn is not None:
                churn_task = asyncio.get_running_loop().create_task(
                    run_churn(client, workload, scheduler.scheduler_name)
                )
            try:
                await create_with_creators(client, MEASURED_NAMESPACE, measured)
                phases["create_measured"] = time.monotonic() - start
                end = await recorder.wait_bound(
                    MEASURED_NAMESPACE, len(measured), timeout=_timeout_for(len(measured))
                )
            except TimeoutError as error:
                result.status, result.error = "timeout", str(error)
                end = time.monotonic()
            finally:
                cpu_after = sampler.cpu()
                if on_measured is not None:
                    on_measured("end", scheduler.pid)
                if churn_task is not None:
                    churn_task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await churn_task
            phases["measured"] = end - start
            result.measured_bound = recorder.bound_in(MEASURED_NAMESPACE)
            fill_metrics(result, recorder, start=start, end=end)
            if cpu_before is not None and cpu_after is not None:
                result.cpu_seconds = cpu_after - cpu_before
                result.cpu_seconds_per_1000_pods = result.cpu_seconds / len(measured) * 1000

            await validate_trial(client, result, scheduler)
        finally:
            await stop_watching(recorder, sampler, result)


def run_trial(
    workload: Workload,
    scheduler: SchedulerUnderTest,
    repetition: int,
    *,
    on_measured: MeasuredPhaseHook | None = None,  # e.g. attach a profiler; None in benchmarks
) -> TrialResult:
    """Run one trial end to end; never raises for a scheduler's failure (status says it)."""
    result = TrialResult(workload=workload.name, scheduler=scheduler.key, repetition=repetition)
    result.load_average.append(os.getloadavg()[0])
    plane = LocalControlPlane()
    began = time.monotonic()
    try:
        # etcd + kube-apiserver only: no workload here has volumes, so nothing needs the PV
        # controller, and kube-controller-manager's garbage collector (which watches every kind)
        # would take CPU from the scheduler under test on a 2-core box and make the numbers
        # incomparable with earlier runs. bench/volume_burst.py starts it, as its claims need it.
        plane.start()
        _prepare_api(plane)
        result.phases_seconds["control_plane"] = time.monotonic() - began
        if workload.backlog:
            scheduler.prepare(plane)  # e.g. Berth's CRDs and RBAC: not part of the drain
            result.scheduler_info = scheduler.describe(plane)
            timeout = _timeout_for(workload.measured_pods)
            drain = measure_backlog(
                plane, workload, scheduler, result, timeout=timeout, on_measured=on_measured
            )
            asyncio.run(drain)
        else:
            began = time.monotonic()
            scheduler.start(plane)
            result.phases_seconds["scheduler_start"] = time.monotonic() - began
            result.scheduler_info = scheduler.describe(plane)
            asyncio.run(_measure(plane, workload, scheduler, result, on_measured))
    except Exception as error:  # a trial's failure is data, not a crash of the whole bench
        logger.exception("trial %s / %s failed", workload.name, scheduler.key)
        result.status = "error"
        result.error = f"{type(error).__name__}: {error}\n{scheduler.log_tail()}"
    finally:
        result.load_average.append(os.getloadavg()[0])
        scheduler.stop()
        plane.stop()
    return result
