"""NodeDeclaredFeatures side by side with kube-scheduler: pods needing a kubelet feature.

A pod whose container restarts all containers on exit (a beta feature on by default in v1.37)
needs nodes declaring `RestartAllContainersOnContainerExits` in `status.declaredFeatures`;
both schedulers must place it on such a node, refuse it with the same message where there is
none, and place it once a node starts declaring the feature.
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    list_all,
    make_nodes,
    node_kind,
    patch,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster

FEATURE = "RestartAllContainersOnContainerExits"
ROOMY = {"cpu": "16", "memory": "64Gi", "pods": "110"}
SMALL = {"cpu": "1", "memory": "4Gi", "pods": "110"}


def restarting_all(name: str, group: str, *, scheduler: str | None = None) -> dict[str, Any]:
    body = (
        pod_body(name, group) if scheduler is None else pod_body(name, group, scheduler=scheduler)
    )
    container = body["spec"]["containers"][0]
    container["restartPolicy"] = "Never"
    container["restartPolicyRules"] = [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    ]
    return body


def create_pair(plane: LocalControlPlane, namespace: str, group: str) -> None:
    """The same pod twice: "ours" for Berth, "theirs" for kube-scheduler."""
    create(
        plane,
        namespace,
        restarting_all("ours", group),
        restarting_all("theirs", group, scheduler=DEFAULT_SCHEDULER),
    )


def declare(plane: LocalControlPlane, group: str, kind: str, *features: str) -> None:
    for node in list_all(plane, "/api/v1/nodes", labelSelector=f"test-group={group}"):
        name = node["metadata"]["name"]
        if node_kind(name, group) == kind:
            patch(
                plane,
                f"/api/v1/nodes/{name}/status",
                {"status": {"declaredFeatures": list(features)}},
            )


def test_pod_goes_only_to_nodes_declaring_the_feature(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    # Without the feature check, the roomier old nodes would score higher and win.
    group = make_nodes(control_plane, 2, kind="old", allocatable=ROOMY)
    make_nodes(control_plane, 1, group=group, kind="new", allocatable=SMALL)
    declare(control_plane, group, "new", FEATURE)
    wait_berth_sees_all_nodes(control_plane, berth)
    create_pair(control_plane, namespace, group)
    placement = wait_bound(control_plane, namespace, ["ours", "theirs"])
    assert node_kind(placement["theirs"], group) == "new"
    assert node_kind(placement["ours"], group) == "new"


def test_refusal_message_equals_kube_schedulers_and_declaring_requeues(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 2, kind="old")
    wait_berth_sees_all_nodes(control_plane, berth)
    create_pair(control_plane, namespace, group)
    expected = wait_unschedulable(control_plane, namespace, "theirs")
    actual = wait_unschedulable(control_plane, namespace, "ours")
    assert actual == expected
    assert "2 node(s) didn't match Pod's required features" in actual
    declare(control_plane, group, "old", FEATURE)
    # Far below the 5-minute unschedulable flush: only the node update can explain it.
    placement = wait_bound(control_plane, namespace, ["ours", "theirs"], timeout=30)
    assert node_kind(placement["ours"], group) == "old"
