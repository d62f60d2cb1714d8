"""Failover: the leader is SIGKILLed in the middle of a 2,000-pod burst; the standby finishes it.

Two `berth run` replicas ("a" and "b") elect a leader with kopf peering. Once a
fifth of the burst is bound the leader is killed (no graceful peering exit),
so the standby takes over only when the dead peer's record expires (the peering
lifetime, 15 s by default). Asserted: every pod ends up bound exactly once and
no node is over its allocatable. Measured and reported (JSON under the test's
tmp dir and `record_property`), not asserted: the takeover time.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import KubeClient, LocalControlPlane, PodTemplate, create_pods, pod_manifest
from berth.controlplane.berth_process import BerthReplica
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
    poll,
    with_client,
    write_report,
)

pytestmark = pytest.mark.cluster
RUNS_LAST = True  # heavy: see conftest.py

NODES = 100
PODS = 2_000
CREATORS = 30
KILL_AFTER_BOUND = 400
# 22 pods of 180m fit a 4-cpu node: 2,200 places for 2,000 pods, so capacity is tight.
NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110"}
POD_REQUESTS = {"cpu": "180m", "memory": "256Mi"}


def test_standby_finishes_a_burst_after_the_leader_is_killed(
    control_plane: LocalControlPlane,
    replicas: dict[str, BerthReplica],
    namespace: str,
    tmp_path: Path,
    record_property: pytest.RecordProperty,
) -> None:
    leader, survivor = leader_and_standby(control_plane, replicas)
    group = make_nodes(control_plane, NODES, allocatable=NODE_ALLOCATABLE)
    template = PodTemplate(
        requests=POD_REQUESTS, scheduler_name=SCHEDULER, node_selector={GROUP_LABEL: group}
    )
    names = [f"p-{index:05d}" for index in range(PODS)]
    measured: dict[str, float] = {}

    async def burst(client: KubeClient) -> BindingRecorder:
        recorder = BindingRecorder(client, namespace)
        following = asyncio.create_task(recorder.run())

        async def create_all() -> None:
            async with control_plane.client(concurrency=CREATORS) as creator:
                await create_pods(creator, namespace, (pod_manifest(n, template) for n in names))

        creating = asyncio.create_task(create_all())
        try:
            measured["burst_started"] = time.monotonic()
            await recorder.wait_for(KILL_AFTER_BOUND, timeout=120)
            measured["killed"] = time.monotonic()
            measured["killed_wall"] = time.time()
            await asyncio.to_thread(leader.stop, kill=True)
            measured["bound_at_kill"] = len(recorder.bound)
            measured["created_at_kill"] = float(not creating.done())
            await asyncio.to_thread(survivor.wait_leading, 120.0)
            measured["survivor_leading"] = time.monotonic()
            await creating
            await recorder.wait_for(PODS, timeout=300)
            return recorder
        finally:
            following.cancel()
            creating.cancel()
            await asyncio.gather(following, creating, return_exceptions=True)

    recorder = with_client(control_plane, burst)
    killed = measured["killed"]

    # Exactly once: every pod bound, and at most one Scheduled event per pod UID, naming
    # the node the pod is actually bound to.
    pods = list_all(control_plane, "/api/v1/pods")
    ours = {
        pod["metadata"]["name"]: pod for pod in pods if pod["metadata"]["namespace"] == namespace
    }
    assert len(ours) == PODS
    unbound = sorted(name for name, pod in ours.items() if not pod["spec"].get("nodeName"))
    assert not unbound, f"{len(unbound)} pods unbound: {unbound[:10]}"

    # Pods first seen bound after the survivor led are surely the survivor's: wait for
    # their Scheduled events (posted asynchronously, rate-limited) before counting.
    survivors_pods = {
        name
        for name, (_node, seen) in recorder.bound.items()
        if seen > measured["survivor_leading"]
    }

    def scheduled_events() -> list[dict[str, Any]] | None:
        found = events(control_plane, namespace, reason="Scheduled")
        named = {event["involvedObject"]["name"] for event in found}
        return found if survivors_pods <= named else None

    scheduled = poll(scheduled_events, timeout=90, description="the survivor's Scheduled events")
    per_uid = Counter(event["involvedObject"]["uid"] for event in scheduled)
    twice = {uid: count for uid, count in per_uid.items() if count > 1}
    assert not twice, f"pods reported Scheduled more than once: {twice}"
    for event in scheduled:
        pod = ours[event["involvedObject"]["name"]]
        assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
        assert event["reportingComponent"] == SCHEDULER
        assert event["message"].endswith(f" to {pod['spec']['nodeName']}"), event["message"]

    nodes = list_all(control_plane, "/api/v1/nodes", labelSelector=f"{GROUP_LABEL}={group}")
    violations = capacity_violations(nodes, pods)
    assert not violations, violations

    # Takeover, measured two ways: the survivor's leader metric (polled), and its first
    # binding (the earliest Scheduled event it reported, and when the watch saw that pod).
    by_survivor = [e for e in scheduled if e.get("reportingInstance") == survivor.name]
    first_event = min(by_survivor, key=event_time) if by_survivor else None
    first_seen = min(
        (recorder.bound[e["involvedObject"]["name"]][1] for e in by_survivor), default=None
    )
    conflicts = survivor.log_tail(100_000).count("failed (conflict)")
    times = recorder.times()
    numbers = {
        "nodes": NODES,
        "pods": PODS,
        "killed_replica": leader.name,
        "surviving_replica": survivor.name,
        "pods_bound_at_kill": int(measured["bound_at_kill"]),
        "burst_still_being_created_at_kill": bool(measured["created_at_kill"]),
        "takeover_leader_metric_seconds": round(measured["survivor_leading"] - killed, 2),
        "kill_to_first_new_binding_event_seconds": (
            round(event_time(first_event) - measured["killed_wall"], 2) if first_event else None
        ),
        "kill_to_first_new_binding_seen_seconds": (
            round(first_seen - killed, 2) if first_seen is not None else None
        ),
        "kill_to_all_bound_seconds": round(times[-1] - killed, 2),
        "burst_to_all_bound_seconds": round(times[-1] - measured["burst_started"], 2),
        "pods_bound_by_survivor_reported": len(by_survivor),
        "survivor_binding_conflicts": conflicts,
    }
    write_report(tmp_path, "berth-failover", numbers, record_property)
    print(
        f"\nberth failover: killed {leader.name} with {numbers['pods_bound_at_kill']} of {PODS} "
        f"bound; {survivor.name} led after {numbers['takeover_leader_metric_seconds']}s, "
        f"first new binding after {numbers['kill_to_first_new_binding_event_seconds']}s, "
        f"all bound {numbers['kill_to_all_bound_seconds']}s after the kill"
    )
