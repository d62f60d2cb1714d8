"""Preemption end to end: Berth evicts exactly what kube-scheduler would, the way it would.

Each scheduler gets its own one-node group holding one low-priority pod; a
high-priority pod that only fits by evicting it is given to each. Without a
kubelet the victims never finish terminating, so the preemptors stay pending,
nominated to the node; that is as far as either scheduler can go here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    create_priority_class,
    events,
    get_pod,
    make_nodes,
    pod_body,
    poll,
    wait_berth_sees_all_nodes,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster

ONE_CPU = {"cpu": "1", "memory": "4Gi", "pods": "110"}


@pytest.fixture(scope="module")
def priority_classes(control_plane: LocalControlPlane) -> tuple[str, str]:
    return create_priority_class(control_plane, 10), create_priority_class(control_plane, 1000)


def _scene(
    plane: LocalControlPlane, namespace: str, scheduler: str, group: str, low: str, high: str
) -> tuple[str, str, str]:
    node = f"{group}-n-00000"
    victim = f"victim-{scheduler}"
    preemptor = f"preemptor-{scheduler}"
    # A grace period keeps the evicted victim terminating (no kubelet will finish it), so the
    # preemptor stays pending and nominated, where both schedulers can be compared.
    victim_body = pod_body(victim, group, cpu="800m", nodeName=node, priorityClassName=low)
    victim_body["spec"]["terminationGracePeriodSeconds"] = 300
    create(plane, namespace, victim_body)
    create(
        plane,
        namespace,
        pod_body(preemptor, group, scheduler=scheduler, cpu="800m", priorityClassName=high),
    )
    return node, victim, preemptor


def _anonymous(message: str, node: str) -> str:
    return re.sub(re.escape(node), "<node>", message)


def _disruption(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "DisruptionTarget":
            return dict(condition)
    return None


def test_preemption_matches_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
    priority_classes: tuple[str, str],
) -> None:
    low, high = priority_classes
    our_group = make_nodes(control_plane, 1, allocatable=ONE_CPU)
    their_group = make_nodes(control_plane, 1, allocatable=ONE_CPU)
    wait_berth_sees_all_nodes(control_plane, berth)
    our_node, our_victim, our_preemptor = _scene(
        control_plane, namespace, "berth", our_group, low, high
    )
    their_node, their_victim, their_preemptor = _scene(
        control_plane, namespace, DEFAULT_SCHEDULER, their_group, low, high
    )

    ours = wait_unschedulable(control_plane, namespace, our_preemptor)
    theirs = wait_unschedulable(control_plane, namespace, their_preemptor)
    assert _anonymous(ours, our_node) == _anonymous(theirs, their_node)

    for victim, scheduler in ((our_victim, "berth"), (their_victim, DEFAULT_SCHEDULER)):
        evicted = poll(
            lambda v=victim: (
                (p := get_pod(control_plane, namespace, v))["metadata"].get("deletionTimestamp")
                and p
            ),
            timeout=30,
            description=f"{victim} being deleted",
        )
        condition = _disruption(evicted)
        assert condition is not None
        assert condition["reason"] == "PreemptionByScheduler"
        assert (
            condition["message"] == f"{scheduler}: preempting to accommodate a higher priority pod"
        )

    for preemptor, node in ((our_preemptor, our_node), (their_preemptor, their_node)):
        nominated = poll(
            lambda p=preemptor: get_pod(control_plane, namespace, p)["status"].get(
                "nominatedNodeName"
            ),
            timeout=30,
            description=f"{preemptor} nominated",
        )
        assert nominated == node

    preempted = poll(
        lambda: events(control_plane, namespace, name=our_victim, reason="Preempted"),
        timeout=30,
        description="Preempted event",
    )
    preemptor_uid = get_pod(control_plane, namespace, our_preemptor)["metadata"]["uid"]
    assert preempted[0]["message"] == f"Preempted by pod {preemptor_uid} on node {our_node}"
