"""A leader frozen longer than its Lease is fenced: after it resumes it posts no binding.

Two `berth run` replicas ("a" and "b"). The leader binds a first batch, then is
frozen with SIGSTOP (a stalled event loop, a long GC pause or a cut-off network
look the same from outside). A second batch is created while it is frozen; the
standby takes over once both the leader's peering record and its Lease have
expired, and binds that batch. Then the old leader gets SIGCONT: its watch
buffers still show the second batch as pending and peering still says it is
active, so without a fence it would try to bind those pods. With the Lease, its
renew deadline has long passed, so every binding it attempts is refused before a
request is sent; it leads again only after re-acquiring the Lease (the standby
steps back, as kopf peering prefers the higher priority) and listing afresh.

Asserted: every pod bound exactly once, no node over its allocatable, no
Scheduled event from the old leader for the second batch, and the old leader's
own binding counters: every binding attempt it made after resuming was one the
fence refused (attempts minus refusals = 0). Measured and printed, not asserted:
the takeover times.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import KubeClient, LocalControlPlane, PodTemplate, create_pods, pod_manifest
from berth.controlplane.berth_process import NAMESPACE, BerthReplica
from tests.cluster.helpers import (
    GROUP_LABEL,
    SCHEDULER,
    BindingRecorder,
    capacity_violations,
    event_time,
    events,
    leader_and_standby,
    list_all,
    make_nodes,
    metric_samples,
    poll,
    with_client,
    write_report,
)

pytestmark = pytest.mark.cluster
RUNS_LAST = True  # two replicas and two lease expiries: see conftest.py

NODES = 6
FIRST_BATCH = 16
SECOND_BATCH = 24
# 8 pods of 500m fit a 4-cpu node: 48 places for 40 pods, so a double booking would show.
NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110"}
POD_REQUESTS = {"cpu": "500m", "memory": "256Mi"}
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/berth"


def binding_attempts(replica: BerthReplica) -> float:
    """Bindings the replica's loop handed to its binder, whatever the outcome."""
    return sum(metric_samples(replica, "berth_binding_duration_seconds_count").values())


def refused_bindings(replica: BerthReplica) -> float:
    refused = metric_samples(replica, "berth_lease_refused_writes_total")
    return refused.get("write=binding", 0.0)


@pytest.fixture
def frozen_guard(replicas: dict[str, BerthReplica]) -> Iterator[None]:
    """Whatever happens, no replica is left stopped (a stopped process ignores SIGTERM)."""
    yield
    for replica in replicas.values():
        if replica.process.pid is not None and replica.process.exit_code() is None:
            os.kill(replica.process.pid, signal.SIGCONT)


def test_a_leader_frozen_past_its_lease_posts_no_binding_after_it_resumes(
    control_plane: LocalControlPlane,
    replicas: dict[str, BerthReplica],
    frozen_guard: None,
    namespace: str,
    tmp_path: Path,
    record_property: pytest.RecordProperty,
) -> None:
    leader, standby = leader_and_standby(control_plane, replicas)
    group = make_nodes(control_plane, NODES, allocatable=NODE_ALLOCATABLE)
    template = PodTemplate(
        requests=POD_REQUESTS, scheduler_name=SCHEDULER, node_selector={GROUP_LABEL: group}
    )
    first = [f"first-{index:03d}" for index in range(FIRST_BATCH)]
    second = [f"second-{index:03d}" for index in range(SECOND_BATCH)]
    assert leader.process.pid is not None
    measured: dict[str, float] = {}

    def leads_again() -> bool:
        # Its leader gauge is still 1 from before the freeze until it notices the loss,
        # so "again" means: it holds the Lease anew (the standby released it) and schedules.
        holder = control_plane.request("GET", LEASE)["spec"].get("holderIdentity")
        return holder == leader.name and leader.is_leader()

    async def scenario(client: KubeClient) -> BindingRecorder:
        recorder = BindingRecorder(client, namespace)
        following = asyncio.create_task(recorder.run())
        try:
            await create_pods(client, namespace, (pod_manifest(n, template) for n in first))
            await recorder.wait_for(FIRST_BATCH, timeout=120)
            measured["attempts_before"] = await asyncio.to_thread(binding_attempts, leader)
            measured["refused_before"] = await asyncio.to_thread(refused_bindings, leader)

            os.kill(leader.process.pid, signal.SIGSTOP)  # type: ignore[arg-type]
            measured["frozen"] = time.monotonic()
            measured["frozen_wall"] = time.time()
            await create_pods(client, namespace, (pod_manifest(n, template) for n in second))
            await asyncio.to_thread(standby.wait_leading, 120.0)
            measured["standby_leading"] = time.monotonic()
            await recorder.wait_for(FIRST_BATCH + SECOND_BATCH, timeout=120)
            measured["all_bound"] = time.monotonic()

            os.kill(leader.process.pid, signal.SIGCONT)  # type: ignore[arg-type]
            measured["resumed"] = time.monotonic()
            measured["resumed_wall"] = time.time()
            # Peering prefers the old leader's priority: the standby steps back and releases
            # the Lease, and the old leader leads again after listing afresh.
            await asyncio.to_thread(
                poll, leads_again, timeout=120, description=f"{leader.name} leading again"
            )
            measured["leading_again"] = time.monotonic()
            return recorder
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)

    recorder = with_client(control_plane, scenario)

    # Zero bindings posted by the old leader after it resumed: whatever its loop tried
    # after waking up, the fence refused before a request was sent. A refusal returns at
    # once, and it leads again only after a fresh listing, so nothing is still in flight.
    attempted = binding_attempts(leader) - measured["attempts_before"]
    refused = refused_bindings(leader) - measured["refused_before"]
    assert attempted - refused == 0, (
        f"the old leader posted {attempted - refused} bindings after resuming "
        f"({attempted} attempts, {refused} refused by the Lease)"
    )

    pods = list_all(control_plane, "/api/v1/pods")
    ours = {
        pod["metadata"]["name"]: pod for pod in pods if pod["metadata"]["namespace"] == namespace
    }
    assert sorted(ours) == sorted(first + second)
    unbound = sorted(name for name, pod in ours.items() if not pod["spec"].get("nodeName"))
    assert not unbound, f"{len(unbound)} pods unbound: {unbound}"

    def scheduled_events() -> list[dict[str, Any]] | None:
        found = events(control_plane, namespace, reason="Scheduled")
        return found if {e["involvedObject"]["name"] for e in found} == set(ours) else None

    scheduled = poll(scheduled_events, timeout=60, description="a Scheduled event per pod")
    per_uid = Counter(event["involvedObject"]["uid"] for event in scheduled)
    assert not [uid for uid, count in per_uid.items() if count > 1], per_uid
    for event in scheduled:
        pod = ours[event["involvedObject"]["name"]]
        assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
        assert event["message"].endswith(f" to {pod['spec']['nodeName']}"), event["message"]
    by_instance = {e["involvedObject"]["name"]: e.get("reportingInstance") for e in scheduled}
    assert {by_instance[name] for name in second} == {standby.name}, by_instance
    assert not [
        e
        for e in scheduled
        if e.get("reportingInstance") == leader.name and event_time(e) >= measured["resumed_wall"]
    ]

    nodes = list_all(control_plane, "/api/v1/nodes", labelSelector=f"{GROUP_LABEL}={group}")
    violations = capacity_violations(nodes, pods)
    assert not violations, violations

    lease = control_plane.request("GET", LEASE)["spec"]
    assert lease["holderIdentity"] == leader.name  # led again, after the standby released it
    standby_first = min(
        (event_time(e) for e in scheduled if e.get("reportingInstance") == standby.name),
        default=None,
    )
    frozen = measured["frozen"]
    numbers = {
        "frozen_replica": leader.name,
        "standby_replica": standby.name,
        "freeze_to_standby_leading_seconds": round(measured["standby_leading"] - frozen, 2),
        "freeze_to_first_standby_binding_seconds": (
            round(standby_first - measured["frozen_wall"], 2) if standby_first else None
        ),
        "freeze_to_second_batch_bound_seconds": round(measured["all_bound"] - frozen, 2),
        "frozen_seconds": round(measured["resumed"] - frozen, 2),
        "resume_to_old_leader_leading_again_seconds": round(
            measured["leading_again"] - measured["resumed"], 2
        ),
        "old_leader_binding_attempts_after_resume": int(attempted),
        "old_leader_bindings_refused_by_lease": int(refused),
        "old_leader_bindings_posted_after_resume": int(attempted - refused),
        "lease_transitions": int(lease.get("leaseTransitions", 0)),
        "second_batch_first_seen_bound_after_freeze_seconds": round(
            min(recorder.bound[name][1] for name in second) - frozen, 2
        ),
    }
    write_report(tmp_path, "berth-lease-fencing", numbers, record_property)
    print(
        f"\nberth lease fencing: froze {leader.name}; {standby.name} led after "
        f"{numbers['freeze_to_standby_leading_seconds']}s and bound its first pod after "
        f"{numbers['freeze_to_first_standby_binding_seconds']}s; after SIGCONT {leader.name} "
        f"attempted {int(attempted)} bindings, {int(refused)} refused, 0 posted; it led again "
        f"{numbers['resume_to_old_leader_leading_again_seconds']}s after resuming"
    )
