"""The API server going away: kube-apiserver SIGKILLed in the middle of a 2,000-pod burst.

2,000 pods wait for one Berth replica; once some hundreds are bound, kube-apiserver
is killed with SIGKILL (etcd keeps running), left down for 5 s and started again
with the same flags. Berth sees its watches and keep-alive connections reset and
every request refused, binds in flight lose their answers (some may have landed
in etcd anyway), and the events and conditions it was writing fail.

Asserted: every pod ends up bound, never moves, and has exactly one `Scheduled`
event naming its node and a PodScheduled=True condition; Berth counted exactly
one successful binding per pod; no node is over its allocatable; the replica is
still running, still leads, and binds a pod created after the outage.
Measured and reported (JSON under the test's tmp dir and `record_property`):
how long the apiserver took to come back, until Berth bound again, until its
node watch delivered again, until everything was bound, and the bind failures.

The control plane is this module's own: killing the session's shared one would
make every later test depend on its clean recovery, and 2,100 objects more would
slow the ones after it.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import (
    KubeClient,
    LocalControlPlane,
    NodeTemplate,
    PodTemplate,
    create_nodes,
    create_pods,
    pod_manifest,
)
from berth.controlplane.berth_process import BerthReplica, install
from tests.cluster.helpers import (
    GROUP_LABEL,
    SCHEDULER,
    BindingRecorder,
    capacity_violations,
    events,
    list_all,
    make_nodes,
    poll,
    scheduled_condition,
    wait_bound,
    with_client,
    write_report,
)

pytestmark = pytest.mark.cluster
RUNS_LAST = True  # heavy: see conftest.py

NODES = 100
PODS = 2_000
CREATORS = 30
KILL_AFTER_BOUND = 300
DOWN_SECONDS = 5.0
# 21 pods of 190m fit a 4-cpu node: 2,100 places for 2,000 pods, so capacity is tight
# and a binding Berth forgot while it had landed would show as an overfull node.
NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110"}
POD_REQUESTS = {"cpu": "190m", "memory": "256Mi"}
NAMESPACE = "burst"


@pytest.fixture(scope="module")
def plane() -> Iterator[LocalControlPlane]:
    """This module's own control plane (see the module docstring for why)."""
    with LocalControlPlane(build=True) as own:
        try:
            install(own)
        except subprocess.CalledProcessError as error:
            pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")
        own.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        )
        yield own


def _binding_results(replica: BerthReplica) -> dict[str, int]:
    """Berth's own count of binding answers, by outcome (bound, conflict, gone, failed)."""
    prefix = 'berth_binding_duration_seconds_count{result="'
    results = {}
    for line in (replica.http_get("/metrics") or "").splitlines():
        if line.startswith(prefix):
            outcome = line[len(prefix) :].split('"', 1)[0]
            results[outcome] = int(float(line.rsplit(" ", 1)[1]))
    return results


def _node_cache_holds(replica: BerthReplica, count: int) -> bool:
    sample = 'scheduler_cache_size{type="nodes"}'
    for line in (replica.http_get("/metrics") or "").splitlines():
        if line.startswith(sample):
            return float(line.rsplit(" ", 1)[1]) >= count
    return False


def test_every_pod_bound_exactly_once_across_an_apiserver_restart(
    plane: LocalControlPlane, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    group = make_nodes(plane, NODES, allocatable=NODE_ALLOCATABLE)
    template = PodTemplate(
        requests=POD_REQUESTS, scheduler_name=SCHEDULER, node_selector={GROUP_LABEL: group}
    )
    names = [f"p-{index:05d}" for index in range(PODS)]

    async def create_backlog(client: KubeClient) -> None:
        await create_pods(client, NAMESPACE, (pod_manifest(name, template) for name in names))

    with_client(plane, create_backlog, concurrency=CREATORS)

    replica = BerthReplica(plane, "restart").start()
    measured: dict[str, float] = {}
    results: dict[str, int] = {}
    try:

        async def burst(client: KubeClient) -> BindingRecorder:
            recorder = BindingRecorder(client, NAMESPACE)
            following = asyncio.create_task(recorder.run())
            try:
                await asyncio.to_thread(replica.wait_leading)
                await recorder.wait_for(KILL_AFTER_BOUND, timeout=120)
                measured["killed"] = time.monotonic()
                await asyncio.to_thread(plane.kill_apiserver)
                measured["bound_at_kill"] = len(recorder.bound)
                await asyncio.sleep(DOWN_SECONDS)  # wait-ok: the length of the outage under test
                measured["restart_ready_seconds"] = await asyncio.to_thread(
                    plane.start_apiserver_again
                )
                measured["ready"] = time.monotonic()
                measured["bound_at_ready"] = len(recorder.bound)
                # A node created now reaches Berth only through a resumed node watch.
                probe = NodeTemplate(name_prefix=f"{group}-probe", allocatable=NODE_ALLOCATABLE)
                await create_nodes(client, probe, 1)
                await asyncio.to_thread(
                    poll,
                    lambda: _node_cache_holds(replica, NODES + 1),
                    timeout=120,
                    description="Berth's node watch delivering a node created after the restart",
                )
                measured["node_watch_resumed"] = time.monotonic()
                await recorder.wait_for(PODS, timeout=180)
                return recorder
            finally:
                following.cancel()
                await asyncio.gather(following, return_exceptions=True)

        recorder = with_client(plane, burst)

        # The loop is alive: a pod created after the outage is bound too.
        late = pod_manifest("late", template)
        plane.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", late)
        wait_bound(plane, NAMESPACE, ["late"], timeout=60)
        assert replica.process.exit_code() is None, replica.log_tail()
        assert replica.is_leader()

        pods = list_all(plane, "/api/v1/pods")
        ours = {pod["metadata"]["name"]: pod for pod in pods}
        assert len(ours) == PODS + 1
        unbound = sorted(name for name, pod in ours.items() if not pod["spec"].get("nodeName"))
        assert not unbound, f"{len(unbound)} pods unbound: {unbound[:10]}"
        assert not recorder.moved, f"pods seen on two nodes: {recorder.moved}"
        nodes = list_all(plane, "/api/v1/nodes")
        violations = capacity_violations(nodes, pods)
        assert not violations, violations

        # Exactly once, from Berth's side: one successful binding per pod, one Scheduled
        # event per pod naming the node it is on, and PodScheduled=True left on every pod.
        results.update(_binding_results(replica))
        assert results.get("bound") == PODS + 1, results

        def all_scheduled_events() -> list[dict[str, Any]] | None:
            found = events(plane, NAMESPACE, reason="Scheduled")
            return found if len({e["involvedObject"]["uid"] for e in found}) > PODS else None

        try:
            scheduled = poll(all_scheduled_events, timeout=90, description="Scheduled events")
        except TimeoutError:
            scheduled = events(plane, NAMESPACE, reason="Scheduled")
        per_uid = Counter(event["involvedObject"]["uid"] for event in scheduled)
        missing = sorted(name for name, pod in ours.items() if per_uid[pod["metadata"]["uid"]] == 0)
        assert not missing, f"{len(missing)} pods without a Scheduled event: {missing[:10]}"
        twice = {uid: count for uid, count in per_uid.items() if count > 1}
        assert not twice, f"pods reported Scheduled more than once: {twice}"
        for event in scheduled:
            pod = ours[event["involvedObject"]["name"]]
            assert event["message"].endswith(f" to {pod['spec']['nodeName']}"), event["message"]
        not_true = sorted(
            name
            for name, pod in ours.items()
            if (scheduled_condition(pod) or {}).get("status") != "True"
        )
        assert not not_true, f"{len(not_true)} bound pods not PodScheduled=True: {not_true[:10]}"
    finally:
        replica.stop()
        # Kept with the report: the run directory goes when the control plane stops.
        for log in (replica.process.log_path, plane.run_dir / "kube-apiserver.log"):
            shutil.copyfile(log, tmp_path / log.name)

    killed, ready = measured["killed"], measured["ready"]
    after_ready = [seen for _node, seen in recorder.bound.values() if seen > ready]
    log = (tmp_path / replica.process.log_path.name).read_text(errors="replace")
    numbers = {
        "nodes": NODES,
        "pods": PODS,
        "pods_bound_at_kill": int(measured["bound_at_kill"]),
        "pods_bound_when_apiserver_ready": int(measured["bound_at_ready"]),
        "apiserver_down_seconds": round(ready - killed, 2),
        "apiserver_restart_to_ready_seconds": round(measured["restart_ready_seconds"], 2),
        "ready_to_first_new_binding_seconds": (
            round(min(after_ready) - ready, 2) if after_ready else None
        ),
        "ready_to_node_watch_resumed_seconds": round(measured["node_watch_resumed"] - ready, 2),
        "kill_to_all_bound_seconds": round(recorder.times()[-1] - killed, 2),
        "binding_results": results,
        "bind_failures_logged": log.count("failed (failed)"),
        "bind_conflicts_logged": log.count("failed (conflict)"),
    }
    write_report(tmp_path, "berth-apiserver-restart", numbers, record_property)
    print(
        f"\nberth apiserver restart: killed with {numbers['pods_bound_at_kill']} of {PODS} bound, "
        f"down {numbers['apiserver_down_seconds']}s; bound again "
        f"{numbers['ready_to_first_new_binding_seconds']}s and node watch back "
        f"{numbers['ready_to_node_watch_resumed_seconds']}s after ready; all bound "
        f"{numbers['kill_to_all_bound_seconds']}s after the kill; bindings {numbers['binding_results']}"
    )
