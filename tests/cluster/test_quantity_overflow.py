"""Quantities beyond 64 bits, against the reference kube-scheduler: a node with `memory: 8Ei`, pods
asking `cpu: 1e30` or a wrapping amount. kube-apiserver accepts them all and kube-scheduler does
not crash: it saturates, reads 0 or wraps. Berth live and `berth simulate` must place them alike."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    get_pod,
    make_nodes,
    pod_body,
    poll,
    wait_berth_sees_all_nodes,
)
from tests.unit.cli.simulate_support import simulate

pytestmark = pytest.mark.cluster

HUGE = {"cpu": "2", "memory": "8Ei", "pods": "110"}
# name -> requests; one pod of each per scheduler, each scheduler on a node of its own.
PODS = {
    "cpu-1e30": {"cpu": "1e30"},  # upstream MilliValue() overflows to 0: fits anywhere
    "mem-8ei": {"cpu": "100m", "memory": "8Ei"},  # saturates at 2^63-1, as the node does
    "cpu-wrap": {"cpu": "100000000000000000k"},  # a wrapping int64 product: 2e17 millicores
}


def _outcome(plane: LocalControlPlane, namespace: str, name: str) -> str:
    """ "placed", or the scheduler's PodScheduled=False message (each scheduler has one node)."""

    def probe() -> str | None:
        pod = get_pod(plane, namespace, name)
        if (pod.get("spec") or {}).get("nodeName"):
            return "placed"
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("message"):
                return str(condition["message"])
        return None

    return poll(probe, timeout=30, description=f"{namespace}/{name} decided")


def test_overflowing_quantities_place_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    namespace: str,
    tmp_path: Path,
) -> None:
    ours, theirs = (make_nodes(control_plane, 1, allocatable=HUGE) for _ in range(2))
    wait_berth_sees_all_nodes(control_plane, berth)
    for name, requests in PODS.items():
        for suffix, group, scheduler in (("b", ours, "berth"), ("k", theirs, DEFAULT_SCHEDULER)):
            body = pod_body(f"{name}-{suffix}", group, scheduler=scheduler)
            body["spec"]["containers"][0]["resources"]["requests"] = requests
            create(control_plane, namespace, body)

    expected = {name: _outcome(control_plane, namespace, f"{name}-k") for name in PODS}
    assert expected["cpu-1e30"] == expected["mem-8ei"] == "placed"
    assert {name: _outcome(control_plane, namespace, f"{name}-b") for name in PODS} == expected

    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        yaml.safe_dump({"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": HUGE}})
    )
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        yaml.safe_dump_all(
            [
                {
                    "kind": "Pod",
                    "metadata": {"name": name},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
                }
                for name, requests in PODS.items()
            ]
        )
    )
    result = simulate("--nodes", nodes, "--pods", pods, "--output", "json")
    assert result.code == 0, result.err
    # The simulated cluster has one node, the live one more: compare where, not the counts.
    simulated = {p["name"]: p["node"] is not None for p in result.json()["pods"]}
    assert simulated == {name: outcome == "placed" for name, outcome in expected.items()}
