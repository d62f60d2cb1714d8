"""Berth end to end on the real API server: placements, messages, events, requeueing, profiles.

Berth runs as a `berth run` child process under the ServiceAccount and RBAC of
`manifests/`. Every test makes its own nodes, labelled with a per-test key that
its pods select, so tests do not see each other's capacity.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane, NodeTemplate, create_nodes, wait_for_pods_bound
from berth.controlplane.berth_process import BerthReplica, install
from berth.controlplane.objects import unique_name

pytestmark = pytest.mark.cluster

SCHEDULER = "berth"


@pytest.fixture(scope="module")
def berth(control_plane: LocalControlPlane) -> Iterator[BerthReplica]:
    install(control_plane)
    replica = BerthReplica(control_plane, "e2e-0").start()
    try:
        replica.wait_leading()
        yield replica
    finally:
        replica.stop()


def _nodes(plane: LocalControlPlane, count: int, **template: Any) -> str:
    """Creates `count` nodes carrying a fresh `test-group` label; returns the label value."""
    group = unique_name("g")
    labels = {"test-group": group, **template.pop("labels", {})}

    async def create() -> None:
        async with plane.client() as client:
            await create_nodes(
                client, NodeTemplate(name_prefix=group, labels=labels, **template), count
            )

    asyncio.run(create())
    return group


def _pod(
    name: str, group: str, *, scheduler: str = SCHEDULER, cpu: str = "100m", **spec: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "c",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu}},
    }
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    labels = spec.pop("labels", {})
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {"test-group": group},
            "containers": [container],
            **spec,
        },
    }
    return body


def _create(plane: LocalControlPlane, namespace: str, *pods: dict[str, Any]) -> None:
    for pod in pods:
        plane.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)


def _bound(
    plane: LocalControlPlane, namespace: str, names: list[str], timeout: float = 60
) -> dict[str, str]:
    async def wait() -> dict[str, str]:
        async with plane.client() as client:
            return await wait_for_pods_bound(client, namespace, names, timeout=timeout)

    return asyncio.run(wait())


def _pod_state(plane: LocalControlPlane, namespace: str, name: str) -> dict[str, Any]:
    pod: dict[str, Any] = plane.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return pod


def _condition_message(
    plane: LocalControlPlane, namespace: str, name: str, timeout: float = 30
) -> str:
    deadline = time.monotonic() + timeout
    while True:
        status = _pod_state(plane, namespace, name).get("status") or {}
        for condition in status.get("conditions") or []:
            if (
                condition.get("type") == "PodScheduled"
                and condition.get("status") == "False"
                and condition.get("message")
            ):
                return str(condition["message"])
        if time.monotonic() > deadline:
            raise TimeoutError(f"{namespace}/{name} never got PodScheduled=False")
        time.sleep(0.2)  # wait-ok: polling the API for a condition, with a deadline


def test_binds_a_pod_and_posts_scheduled_event(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = _nodes(control_plane, 2)
    _create(control_plane, namespace, _pod("web", group))
    placement = _bound(control_plane, namespace, ["web"])
    assert placement["web"].startswith(group)
    pod = _pod_state(control_plane, namespace, "web")
    assert not (pod["metadata"].get("annotations") or {}), "Berth must not annotate pods"
    assert not pod["metadata"].get("finalizers"), "Berth must not add finalizers to pods"


def test_failed_scheduling_message_equals_kube_schedulers(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = _nodes(control_plane, 2, allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    ours = _pod("too-big-berth", group, cpu="2")
    theirs = _pod("too-big-default", group, cpu="2", scheduler="default-scheduler")
    _create(control_plane, namespace, ours, theirs)
    expected = _condition_message(control_plane, namespace, "too-big-default")
    actual = _condition_message(control_plane, namespace, "too-big-berth")
    assert actual == expected
    assert "Insufficient cpu" in actual


def test_pending_pod_is_placed_when_a_fitting_node_arrives(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = _nodes(control_plane, 1, allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    _create(control_plane, namespace, _pod("waits", group, cpu="3"))
    _condition_message(control_plane, namespace, "waits")

    async def add_big_node() -> None:
        async with control_plane.client() as client:
            big = NodeTemplate(
                name_prefix=f"{group}-big",
                labels={"test-group": group},
                allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"},
            )
            await create_nodes(client, big, 1)

    asyncio.run(add_big_node())
    # Far below the 5-minute unschedulable flush: only the node-add event can explain it.
    placement = _bound(control_plane, namespace, ["waits"], timeout=30)
    assert placement["waits"].startswith(f"{group}-big")
