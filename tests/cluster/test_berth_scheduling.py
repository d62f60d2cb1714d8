"""Berth end to end on the real API server: placements, messages, events, requeueing, profiles.

Berth runs as a `berth run` child process under the ServiceAccount and RBAC of
`manifests/` (the `berth` fixture in conftest.py). Every test makes its own
nodes, labelled with a per-test key that its pods select, so tests do not see
each other's capacity.
"""

from __future__ import annotations

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    get_pod,
    make_nodes,
    node_kind,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster

SMALL = {"cpu": "1", "memory": "4Gi", "pods": "110"}


def test_binds_a_pod_and_posts_scheduled_event(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 2)
    create(control_plane, namespace, pod_body("web", group))
    placement = wait_bound(control_plane, namespace, ["web"])
    assert placement["web"].startswith(group)
    pod = get_pod(control_plane, namespace, "web")
    assert not (pod["metadata"].get("annotations") or {}), "Berth must not annotate pods"
    assert not pod["metadata"].get("finalizers"), "Berth must not add finalizers to pods"


def test_failed_scheduling_message_equals_kube_schedulers(
    control_plane: LocalControlPlane, berth: BerthReplica, kube_scheduler: object, namespace: str
) -> None:
    group = make_nodes(control_plane, 2, allocatable=SMALL)
    wait_berth_sees_all_nodes(control_plane, berth)
    ours = pod_body("too-big-berth", group, cpu="2")
    theirs = pod_body("too-big-default", group, cpu="2", scheduler=DEFAULT_SCHEDULER)
    create(control_plane, namespace, ours, theirs)
    expected = wait_unschedulable(control_plane, namespace, "too-big-default")
    actual = wait_unschedulable(control_plane, namespace, "too-big-berth")
    assert actual == expected
    assert "Insufficient cpu" in actual


def test_pending_pod_is_placed_when_a_fitting_node_arrives(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 1, allocatable=SMALL)
    create(control_plane, namespace, pod_body("waits", group, cpu="3"))
    wait_unschedulable(control_plane, namespace, "waits")
    make_nodes(
        control_plane,
        1,
        group=group,
        kind="big",
        allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"},
    )
    # Far below the 5-minute unschedulable flush: only the node-add event can explain it.
    placement = wait_bound(control_plane, namespace, ["waits"], timeout=30)
    assert node_kind(placement["waits"], group) == "big"
