"""`berth explain NAMESPACE/NAME` on the live cluster agrees with the reference kube-scheduler: a
pending pod gets its FailedScheduling message, with per-node reasons that add up to it; a bound
pod's node is in its top-ranked tie set."""

from __future__ import annotations

import io
import json
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest

from berth.cli.main import main
from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.processes import ManagedProcess
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    make_nodes,
    pod_body,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster


def _explain(plane: LocalControlPlane, target: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(
            ["explain", target, "--kubeconfig", str(plane.admin_kubeconfig), "--output", "json"]
        )
    assert code == 0, err.getvalue()
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer


def test_a_pending_pod_gets_the_reference_schedulers_message(
    control_plane: LocalControlPlane,
    kube_scheduler: ManagedProcess,
    berth: BerthReplica,  # Berth's profiles exist in the cluster, serving other schedulerNames
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 2, allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"})
    create(
        control_plane,
        namespace,
        pod_body("too-big", group, scheduler=DEFAULT_SCHEDULER, cpu="3"),
    )
    message = wait_unschedulable(control_plane, namespace, "too-big", timeout=60)
    answer = _explain(control_plane, f"{namespace}/too-big")
    assert answer["message"] == message
    assert any(
        note.startswith("no SchedulerProfile of the cluster serves schedulerName")
        and "default profile" in note
        for note in answer["notes"]
    )
    assert answer["feasibleNodes"] == 0
    histogram: Counter[str] = Counter()
    for group_of_nodes in answer["rejections"]:
        for reason in group_of_nodes["reasons"]:
            histogram[reason] += group_of_nodes["nodes"]
    listed = ", ".join(sorted(f"{count} {reason}" for reason, count in histogram.items()))
    assert message.startswith(f"0/{answer['nodes']} nodes are available: {listed}.")


def test_a_bound_pods_node_is_in_its_tie_set(
    control_plane: LocalControlPlane,
    kube_scheduler: ManagedProcess,
    berth: BerthReplica,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 3, allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
    create(control_plane, namespace, pod_body("web", group, scheduler=DEFAULT_SCHEDULER))
    node = wait_bound(control_plane, namespace, ["web"])["web"]
    answer = _explain(control_plane, f"{namespace}/web")
    assert node in answer["tieSet"]
    assert answer["feasibleNodes"] == 3
    assert any(note.startswith(f"bound to {node}") for note in answer["notes"])
