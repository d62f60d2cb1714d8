"""`berth simulate --pods` with workloads: the controllers' pods are placed like written-out pods."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write
from tests.unit.cli.test_workload_expansion import SUFFIX, workload


def _requesting(raw: dict[str, Any], cpu: str) -> dict[str, Any]:
    raw["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return raw


def test_a_deployment_a_stateful_set_and_a_daemon_set_are_placed_as_their_pods(
    tmp_path: Path,
) -> None:
    nodes = write(
        tmp_path / "nodes.yaml",
        make_node("a").capacity(cpu="2", pods=110).obj(),
        make_node("b").capacity(cpu="2", pods=110).obj(),
        make_node("gpu").capacity(cpu="2", pods=110).taint("dedicated", "gpu").obj(),
    )
    pods = write(
        tmp_path / "pods.yaml",
        _requesting(workload("DaemonSet", "agent"), "500m"),
        _requesting(workload("StatefulSet", "db", replicas=2), "1"),
        _requesting(workload("Deployment", "web", replicas=3), "500m"),
        make_pod("loose").obj(),
    )
    outcome = simulate("--nodes", nodes, "--pods", pods, "--output", "json")
    assert outcome.code == 0, outcome.err
    placed = {pod["name"]: pod["node"] for pod in outcome.json()["pods"]}
    agents = sorted((name, node) for name, node in placed.items() if name.startswith("agent-"))
    # One daemon pod per node it tolerates, each on its own node.
    assert sorted(node for _, node in agents) == ["a", "b"]
    assert all(re.fullmatch(f"agent-{SUFFIX}", name) for name, _ in agents)
    assert placed["db-0"] in ("a", "b") and placed["db-1"] in ("a", "b")
    web = [name for name in placed if name.startswith("web-")]
    assert len(web) == 3
    # 2 CPUs per node: 500m daemon + 1 CPU db leaves 500m each, so one web pod fits per node.
    assert sorted(str(node) for name, node in placed.items() if name in web) == ["None", "a", "b"]
    assert placed["loose"] in ("a", "b")
    assert len(placed) == 2 + 2 + 3 + 1


def test_a_bad_workload_field_exits_2_naming_file_object_and_field(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("a").obj())
    raw = workload("StatefulSet", "db")
    raw["spec"]["replicas"] = -1
    pods = write(tmp_path / "pods.yaml", raw)
    outcome = simulate("--nodes", nodes, "--pods", pods)
    assert outcome.code == 2
    assert outcome.err.strip().endswith(
        "pods.yaml: StatefulSet shop/db: spec.replicas: must be greater than or equal to 0, got -1"
    )


def test_a_workload_pod_named_like_a_written_pod_is_refused(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("a").obj())
    pods = write(
        tmp_path / "pods.yaml",
        workload("StatefulSet", "db"),
        make_pod("db-0", namespace="shop").obj(),
    )
    outcome = simulate("--nodes", nodes, "--pods", pods)
    assert outcome.code == 2
    assert "Pod shop/db-0: metadata.name: another pod" in outcome.err
