"""Scale: a backlog of 5,000 pending pods on 500 nodes, scheduled by one Berth replica.

Asserts correctness only (every pod bound, no node over its allocatable); the
time to bind them all, the rate and Berth's peak resident memory are measured
and reported (JSON under the test's tmp dir, `record_property`, one printed line).
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest

from berth.controlplane import KubeClient, LocalControlPlane, PodTemplate, create_pods, pod_manifest
from berth.controlplane.berth_process import BerthReplica, install
from tests.cluster.helpers import (
    GROUP_LABEL,
    SCHEDULER,
    BindingRecorder,
    RssSampler,
    capacity_violations,
    list_all,
    make_nodes,
    with_client,
    write_report,
)

pytestmark = pytest.mark.cluster
RUNS_LAST = True  # heavy: see conftest.py

NODES = 500
PODS = 5_000
CREATORS = 30
# 13 pods of 300m fit a 4-cpu node: 6,500 places for 5,000 pods.
NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110"}
POD_REQUESTS = {"cpu": "300m", "memory": "256Mi"}
BIND_TIMEOUT = 600.0


@pytest.fixture(scope="module")
def installed(control_plane: LocalControlPlane) -> None:
    try:
        install(control_plane)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")


def test_5000_pending_pods_on_500_nodes(
    control_plane: LocalControlPlane,
    installed: None,
    namespace: str,
    tmp_path: Path,
    record_property: pytest.RecordProperty,
) -> None:
    group = make_nodes(control_plane, NODES, allocatable=NODE_ALLOCATABLE)
    template = PodTemplate(
        requests=POD_REQUESTS, scheduler_name=SCHEDULER, node_selector={GROUP_LABEL: group}
    )
    names = [f"p-{index:05d}" for index in range(PODS)]

    async def create_backlog(client: KubeClient) -> None:
        await create_pods(client, namespace, (pod_manifest(name, template) for name in names))

    creating = time.monotonic()
    with_client(control_plane, create_backlog, concurrency=CREATORS)
    created_in = time.monotonic() - creating

    started = time.monotonic()
    replica = BerthReplica(control_plane, "scale").start()
    sampler = RssSampler(replica)
    try:

        async def schedule(client: KubeClient) -> tuple[BindingRecorder, float]:
            recorder = BindingRecorder(client, namespace)
            background = [
                asyncio.create_task(recorder.run()),
                asyncio.create_task(sampler.run()),
            ]
            try:
                await asyncio.to_thread(replica.wait_leading)
                leading_at = time.monotonic()
                await recorder.wait_for(PODS, timeout=BIND_TIMEOUT)
                return recorder, leading_at
            finally:
                for task in background:
                    task.cancel()
                await asyncio.gather(*background, return_exceptions=True)

        recorder, leading_at = with_client(control_plane, schedule)
        rss_after = replica.process.rss_bytes()
        sampler.samples.append(rss_after)
    finally:
        replica.stop()

    nodes = list_all(control_plane, "/api/v1/nodes", labelSelector=f"{GROUP_LABEL}={group}")
    pods = list_all(control_plane, "/api/v1/pods")
    ours = [pod for pod in pods if pod["metadata"]["namespace"] == namespace]
    assert len(ours) == PODS
    unbound = [pod["metadata"]["name"] for pod in ours if not pod["spec"].get("nodeName")]
    assert not unbound, f"{len(unbound)} pods unbound: {unbound[:10]}"
    assert not capacity_violations(nodes, pods)

    times = recorder.times()
    first, last = times[0], times[-1]
    numbers = {
        "nodes": NODES,
        "pods": PODS,
        "backlog_created_seconds": round(created_in, 2),
        "start_to_leading_seconds": round(leading_at - started, 2),
        "start_to_first_binding_seconds": round(first - started, 2),
        "start_to_all_bound_seconds": round(last - started, 2),
        "first_to_last_binding_seconds": round(last - first, 2),
        "pods_per_second": round(PODS / (last - first), 1),
        "pods_per_second_from_start": round(PODS / (last - started), 1),
        "rss_peak_bytes": sampler.peak,
        "rss_after_bytes": rss_after,
        "nodes_used": len({node for node, _seen in recorder.bound.values()}),
    }
    write_report(tmp_path, "berth-scale", numbers, record_property)
    print(
        f"\nberth scale: {PODS} pods on {NODES} nodes bound in "
        f"{numbers['start_to_all_bound_seconds']}s from start "
        f"({numbers['pods_per_second']} pods/s first-to-last binding), "
        f"peak RSS {sampler.peak / 2**20:.0f} MiB"
    )
