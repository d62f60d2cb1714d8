"""What the driver observes of a trial: its own pod watch, the creators, metrics, validation.

Shared by the trials whose pods arrive while the scheduler runs (driver.py) and the
backlog drain (backlog.py), so that both are timed and checked the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from bench import metrics
from bench.procstat import ProcessSampler
from bench.schedulers import SchedulerUnderTest
from bench.validator import validate
from bench.workloads import MEASURED_NAMESPACE, Workload, node_template_for
from berth.controlplane import KubeClient, NodeTemplate, create_nodes
from berth.controlplane.client import ApiError

if TYPE_CHECKING:
    from bench.driver import TrialResult

__all__ = [
    "CREATORS",
    "PodRecorder",
    "create_with_creators",
    "create_workload_nodes",
    "diagnostics",
    "fill_metrics",
    "stop_watching",
    "validate_trial",
]

logger = logging.getLogger("bench")

CREATORS = 30  # scheduler_perf's ParallelizeUntil(ctx, 30, ...)


class PodRecorder:
    """The driver's own watch on all pods: first-seen and first-bound times per pod."""

    def __init__(self, client: KubeClient, namespaces: tuple[str, ...]) -> None:
        self.client = client
        self.namespaces = namespaces
        self.added: dict[tuple[str, str], float] = {}
        self.bound: dict[tuple[str, str], float] = {}
        self._bound_count: dict[str, int] = dict.fromkeys(namespaces, 0)
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listed = asyncio.Event()

    def _record(self, pod: dict[str, Any], now: float) -> None:
        metadata = pod["metadata"]
        namespace = metadata.get("namespace")
        if namespace not in self._bound_count:
            return
        key = (namespace, metadata["name"])
        self.added.setdefault(key, now)
        if pod["spec"].get("nodeName") and key not in self.bound:
            self.bound[key] = now
            self._bound_count[namespace] += 1
            self._changed.set()

    async def _follow(self) -> None:
        path = "/api/v1/pods"
        while True:
            items, version = await self.client.list(path)
            now = time.monotonic()
            for item in items:
                self._record(item, now)
            self._listed.set()
            try:
                while True:
                    async for event in self.client.watch(
                        path, resource_version=version, timeout_seconds=1800
                    ):
                        now = time.monotonic()
                        obj = event["object"]
                        version = obj.get("metadata", {}).get("resourceVersion", version)
                        kind = event["type"]
                        if kind in ("ADDED", "MODIFIED"):
                            self._record(obj, now)
            except ApiError as error:
                if error.status != 410:
                    raise
                logger.warning("pod watch expired (410); re-listing")

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._follow())
        await self._listed.wait()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait_bound(self, namespace: str, count: int, *, timeout: float) -> float:
        """Wait until `count` pods of `namespace` are bound; the time the last one was seen."""
        deadline = time.monotonic() + timeout
        while self._bound_count[namespace] < count:
            if self._task is not None and self._task.done():
                self._task.result()  # the watch failed: raise its error
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{count - self._bound_count[namespace]} of {count} pods in {namespace} "
                    f"not bound within {timeout:.0f}s"
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 1.0))
        return max(t for (ns, _), t in self.bound.items() if ns == namespace)

    def bound_in(self, namespace: str) -> int:
        return self._bound_count[namespace]


async def create_workload_nodes(
    client: KubeClient, workload: Workload, phases: dict[str, float]
) -> None:
    """The workload's nodes from node-default.yaml; the time it took goes to `phases`."""
    began = time.monotonic()
    await create_nodes(client, NodeTemplate(**node_template_for(workload)), workload.nodes)
    phases["create_nodes"] = time.monotonic() - began


async def create_with_creators(
    client: KubeClient, namespace: str, manifests: list[dict[str, Any]]
) -> None:
    """POST the pods with CREATORS parallel workers (scheduler_perf's 30)."""
    queue = iter(manifests)
    path = f"/api/v1/namespaces/{namespace}/pods"

    async def creator() -> None:
        for manifest in queue:
            await client.create(path, manifest)

    await asyncio.gather(*(creator() for _ in range(CREATORS)))


def diagnostics(pods: list[dict[str, Any]], scheduler: SchedulerUnderTest) -> dict[str, Any]:
    """Why a run failed: a few pending measured pods' PodScheduled condition and the log tail."""
    pending = []
    for pod in pods:
        metadata = pod["metadata"]
        if metadata.get("namespace") != MEASURED_NAMESPACE or pod["spec"].get("nodeName"):
            continue
        conditions = (pod.get("status") or {}).get("conditions") or []
        scheduled = [c for c in conditions if c.get("type") == "PodScheduled"]
        pending.append({"pod": metadata["name"], "PodScheduled": scheduled})
        if len(pending) >= 5:
            break
    return {
        "pending_measured_pods": pending,
        "scheduler_log_problems": scheduler.log_problems(),
        "scheduler_log_tail": scheduler.log_tail(),
    }


def fill_metrics(result: TrialResult, recorder: PodRecorder, *, start: float, end: float) -> None:
    bound = {k: t for k, t in recorder.bound.items() if k[0] == MEASURED_NAMESPACE}
    samples = metrics.throughput_samples(bound.values(), start=start, end=end)
    result.throughput_samples = samples
    summary = metrics.summarize_throughput(samples)
    result.throughput = asdict(summary) if summary is not None else None
    result.makespan_seconds = end - start
    latencies = [t - recorder.added.get(k, t) for k, t in bound.items()]
    latency = metrics.summarize_latencies(latencies)
    result.latency_seconds = asdict(latency) if latency is not None else None
    result.binds_per_second = metrics.per_interval_counts(bound.values(), start=start)


async def validate_trial(
    client: KubeClient, result: TrialResult, scheduler: SchedulerUnderTest
) -> None:
    """List the final pods and nodes, void the trial on a violation, keep diagnostics."""
    began = time.monotonic()
    pods, _ = await client.list("/api/v1/pods")
    nodes, _ = await client.list("/api/v1/nodes")
    validation = validate(pods, nodes)
    result.phases_seconds["validate"] = time.monotonic() - began
    result.validation = {
        "ok": validation.ok,
        "violations": validation.violations,
        "pending_pods": validation.pending,
        "pods_on_deleted_nodes": validation.bound_to_missing_nodes,
    }
    if not validation.ok and result.status == "ok":
        result.status = "void"
    if result.status != "ok":
        result.diagnostics = diagnostics(pods, scheduler)


async def stop_watching(
    recorder: PodRecorder, sampler: ProcessSampler, result: TrialResult
) -> None:
    """End the driver's pod watch and the memory sampling; the scheduler's peak RSS."""
    await recorder.stop()
    await sampler.stop()
    result.peak_rss_bytes = sampler.peak_rss
    result.rss_high_water_mark_bytes = sampler.high_water_mark
