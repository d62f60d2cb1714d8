"""A Permit plugin holding pods until their gang is complete, against the real API server.

The scheduler runs in the test process with a plugin registered by the test (the
way an out-of-tree plugin is): a two-pod gang binds only once both members are
placed, and a lone member is rejected when its Permit wait times out, with
kube-scheduler's message in its FailedScheduling event.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane, PodTemplate, pod_manifest
from berth.controlplane.objects import unique_name
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.registry import Registry
from berth.kube.api import ApiSession
from berth.kube.binder import ApiBinder
from berth.kube.preemption import ApiPreemptor
from berth.kube.reporting import ApiReporter
from berth.profiles import load_profile
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import MonotonicClock
from tests.cluster.in_process_watch import eventually, until
from tests.gang import GANG_LABEL, SIZE_LABEL, GangPermit

pytestmark = pytest.mark.cluster

PROFILE = "berth-gang-test"
TIMEOUT_SECONDS = 3.0


@pytest.fixture
async def admin(control_plane: LocalControlPlane) -> AsyncIterator[ApiSession]:
    async with ApiSession.from_kubeconfig(control_plane.admin_kubeconfig) as api:
        yield api


@dataclasses.dataclass
class InProcessBerth:
    scheduler: Scheduler
    reporter: ApiReporter


@pytest.fixture
async def berth_with_gang(admin: ApiSession) -> AsyncIterator[InProcessBerth]:
    registry = Registry.in_tree({"Gang": lambda _args, handle: GangPermit(handle, TIMEOUT_SECONDS)})
    profile = load_profile(
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": PROFILE},
            "spec": {
                "schedulerName": PROFILE,
                "plugins": {"permit": {"enabled": [{"name": "Gang"}]}},
            },
        },
        registry=registry,
    )
    reporter = ApiReporter(admin, clock=MonotonicClock(), instance="gang-test")
    reporter.start()
    scheduler = Scheduler(
        binder=ApiBinder(admin),
        reporter=reporter,
        rng=random.Random(1),
        preemptor=ApiPreemptor(admin, instance="gang-test"),
    )
    scheduler.set_profile(profile.framework)
    scheduler.activate()
    loop = asyncio.create_task(scheduler.run())
    try:
        yield InProcessBerth(scheduler, reporter)
    finally:
        scheduler.deactivate()
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
        await scheduler.drain_binds()
        await reporter.stop()


async def _node(admin: ApiSession, berth: InProcessBerth, name: str) -> None:
    raw = await admin.post_json(
        "/api/v1/nodes",
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        },
    )
    berth.scheduler.on_node(Node.from_dict(raw))


async def _gang_pod(
    admin: ApiSession, berth: InProcessBerth, namespace: str, name: str, group: str
) -> Pod:
    template = PodTemplate(scheduler_name=PROFILE, labels={GANG_LABEL: group, SIZE_LABEL: "2"})
    raw = await admin.post_json(
        f"/api/v1/namespaces/{namespace}/pods", pod_manifest(name, template)
    )
    pod = Pod.from_dict(raw)
    berth.scheduler.on_pod(pod)
    return pod


async def _node_of(admin: ApiSession, namespace: str, name: str) -> str:
    raw: dict[str, Any] = await admin.get_json(f"/api/v1/namespaces/{namespace}/pods/{name}")
    return str(raw.get("spec", {}).get("nodeName") or "")


def _is_waiting(berth: InProcessBerth, pod: Pod) -> bool:
    framework = berth.scheduler.profiles.get(PROFILE)
    return framework is not None and pod.uid in framework.waiting_pods


async def test_a_two_pod_gang_binds_together_and_a_lone_member_times_out(
    admin: ApiSession, berth_with_gang: InProcessBerth, namespace: str
) -> None:
    berth = berth_with_gang
    for index in range(2):
        await _node(admin, berth, unique_name(f"gang-node-{index}"))

    first = await _gang_pod(admin, berth, namespace, "first", "pair")
    await until(lambda: _is_waiting(berth, first), "the first pod waits at Permit")
    assert await _node_of(admin, namespace, "first") == ""  # held at Permit, not bound

    await _gang_pod(admin, berth, namespace, "second", "pair")
    bound = await eventually(
        lambda: _both_bound(admin, namespace, "first", "second"), "both pods bound"
    )
    assert all(bound)

    lone = await _gang_pod(admin, berth, namespace, "lone", "solo")
    await until(lambda: _is_waiting(berth, lone), "the lone pod waits at Permit")
    message = await eventually(
        lambda: _failed_scheduling(admin, namespace, "lone"), "the lone pod's FailedScheduling"
    )
    assert message == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin Gang."
    )
    assert await _node_of(admin, namespace, "lone") == ""
    assert not berth.scheduler.cache.is_assumed(lone.uid)


async def _both_bound(admin: ApiSession, namespace: str, *names: str) -> tuple[str, ...] | None:
    nodes = tuple([await _node_of(admin, namespace, name) for name in names])
    return nodes if all(nodes) else None


async def _failed_scheduling(admin: ApiSession, namespace: str, pod: str) -> str | None:
    events, _ = await admin.list_json(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        params={"fieldSelector": f"regarding.name={pod}"},
    )
    for event in events:
        if event.get("reason") == "FailedScheduling":
            return str(event.get("note", ""))
    return None
