"""`berth capacity`: how many copies of a pod fit, where they land, and what stops the next one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import Outcome, berth, write

NO_VICTIMS = (
    "preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."
)


def _nodes(count: int, **capacity: str | int) -> list[dict[str, Any]]:
    return [make_node(f"n{i}").capacity(**capacity).obj() for i in range(1, count + 1)]


@dataclass(frozen=True)
class Case:
    id: str
    nodes: list[dict[str, Any]]
    pod: dict[str, Any]
    fit: int
    per_node: dict[str, int]
    message: str | None  # None: stopped by --max
    existing: list[dict[str, Any]] = field(default_factory=list)
    argv: tuple[str, ...] = ()


CASES = [
    Case(
        "three 4-cpu nodes take twelve 1-cpu copies, the 13th is Insufficient cpu",
        _nodes(3, cpu="4", memory="8Gi", pods=110),
        make_pod("web").req(cpu="1").obj(),
        fit=12,
        per_node={"n1": 4, "n2": 4, "n3": 4},
        message=f"0/3 nodes are available: 3 Insufficient cpu. {NO_VICTIMS.format(n=3)}",
    ),
    Case(
        "bound pods take their share first",
        _nodes(2, cpu="4", memory="8Gi", pods=110),
        make_pod("web").req(cpu="1").obj(),
        existing=[make_pod("big").req(cpu="3").node("n1").obj()],
        fit=5,
        per_node={"n1": 1, "n2": 4},
        message=f"0/2 nodes are available: 2 Insufficient cpu. {NO_VICTIMS.format(n=2)}",
    ),
    Case(
        "a pod asking for nothing stops at the pod limit",
        _nodes(2, cpu="4", memory="8Gi", pods=3),
        make_pod("tiny").obj(),
        fit=6,
        per_node={"n1": 3, "n2": 3},
        message=f"0/2 nodes are available: 2 Too many pods. {NO_VICTIMS.format(n=2)}",
    ),
    Case(
        "anti-affinity to its own replicas: one per node",
        _nodes(3, cpu="4", memory="8Gi", pods=110),
        make_pod("db").labels(app="db").anti_affinity("kubernetes.io/hostname", app="db").obj(),
        fit=3,
        per_node={"n1": 1, "n2": 1, "n3": 1},
        message=(
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
            f"{NO_VICTIMS.format(n=3)}"
        ),
    ),
    Case(
        "a selector no node matches: none fit",
        _nodes(2, cpu="4", memory="8Gi", pods=110),
        make_pod("gpu").node_selector(accelerator="yes").obj(),
        fit=0,
        per_node={},
        message=(
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        ),
    ),
    Case(
        "--max bounds the count",
        _nodes(3, cpu="4", memory="8Gi", pods=110),
        make_pod("web").req(cpu="1").obj(),
        argv=("--max", "5"),
        fit=5,
        per_node={"n1": 2, "n2": 1, "n3": 2},
        message=None,
    ),
]


def _run(tmp_path: Path, case: Case, *extra: str) -> Outcome:
    argv: list[str | Path] = [
        "--nodes",
        write(tmp_path / "nodes.yaml", *case.nodes),
        "--pod",
        write(tmp_path / "pod.yaml", case.pod),
        *case.argv,
        *extra,
    ]
    if case.existing:
        argv += ["--existing", write(tmp_path / "existing.yaml", *case.existing)]
    return berth("capacity", *argv)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_counts_copies_until_one_fails(tmp_path: Path, case: Case) -> None:
    outcome = _run(tmp_path, case, "--output", "json")
    assert outcome.code == 0, outcome.err
    result = outcome.json()
    assert result["fit"] == case.fit
    per_node = {entry["node"]: entry["replicas"] for entry in result["perNode"]}
    if case.message is None:
        assert sum(per_node.values()) == case.fit
        assert result["stop"] == {
            "reason": "LimitReached",
            "pod": None,
            "message": "--max 5 reached",
        }
    else:
        assert per_node == case.per_node
        name = case.pod["metadata"]["name"]
        assert result["stop"] == {
            "reason": "Unschedulable",
            "pod": f"{name}-{case.fit + 1}",
            "message": case.message,
        }


def test_table_names_the_count_the_nodes_and_the_first_failure(tmp_path: Path) -> None:
    outcome = _run(tmp_path, CASES[0])
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert lines[:4] == ["NODE  REPLICAS", "n1    4", "n2    4", "n3    4"]
    assert "12 more replica(s) of default/web fit" in lines
    assert f"stopped: Unschedulable: web-13: {CASES[0].message}" in lines


def test_copies_skip_names_that_bound_pods_hold(tmp_path: Path) -> None:
    case = Case(
        "",
        _nodes(1, cpu="2", memory="8Gi", pods=110),
        make_pod("web").req(cpu="1").obj(),
        existing=[make_pod("web-1").node("n1").obj()],
        fit=2,
        per_node={"n1": 2},
        message=None,
    )
    result = _run(tmp_path, case, "--output", "json").json()
    assert result["fit"] == 2
    assert result["stop"]["pod"] == "web-4"


def test_a_pod_higher_than_bound_ones_reports_the_preemption_it_would_need(
    tmp_path: Path,
) -> None:
    case = Case(
        "",
        _nodes(1, cpu="2", memory="8Gi", pods=110),
        make_pod("urgent").req(cpu="1").priority(100).obj(),
        existing=[make_pod("batch").req(cpu="1").node("n1").obj()],
        fit=1,
        per_node={"n1": 1},
        message=None,
    )
    stop = _run(tmp_path, case, "--output", "json").json()["stop"]
    assert stop["pod"] == "urgent-2"
    assert stop["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert stop["nominatedNode"] == "n1"
    assert stop["victims"] == ["default/batch"]


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        (
            [make_pod("a").obj(), make_pod("b").obj()],
            "pod.yaml: expected one Pod or one Deployment, ReplicaSet, StatefulSet or Job "
            "creating pods, found 2 pod(s)",
        ),
        ([], "creating pods, found 0 pod(s)"),
        (
            [make_pod("pinned").node("n1").obj()],
            "pod.yaml: Pod default/pinned: spec.nodeName: must be empty",
        ),
        (
            [make_pod("bad").req(cpu="lots").obj()],
            "pod.yaml: Pod default/bad: spec.containers[0].resources.requests.cpu: invalid quantity",
        ),
    ],
    ids=["two pods", "no pod", "bound pod", "bad quantity"],
)
def test_bad_pod_file_is_refused_naming_file_and_field(
    tmp_path: Path, pods: list[dict[str, Any]], expected: str
) -> None:
    nodes = write(tmp_path / "nodes.yaml", *_nodes(1))
    outcome = berth("capacity", "--nodes", nodes, "--pod", write(tmp_path / "pod.yaml", *pods))
    assert outcome.code == 2
    assert outcome.out == ""
    assert outcome.err.startswith("berth capacity: ")
    assert expected in outcome.err


def test_negative_max_is_refused(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", *_nodes(1))
    pod = write(tmp_path / "pod.yaml", make_pod("web").obj())
    with pytest.raises(SystemExit) as stopped:
        berth("capacity", "--nodes", nodes, "--pod", pod, "--max", "-1")
    assert stopped.value.code == 2


def _deployment(name: str, *, replicas: int, cpu: str) -> dict[str, Any]:
    template = make_pod(name).label("app", name).req(cpu=cpu).obj()
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": template["metadata"], "spec": template["spec"]},
        },
    }


def test_a_workload_is_counted_by_its_pod_template(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", *_nodes(2, cpu="4", memory="8Gi", pods=110))
    # Three replicas in the file, but capacity asks how many pods of the template fit.
    pod = write(tmp_path / "web.yaml", _deployment("web", replicas=3, cpu="1"))
    document = berth("capacity", "--nodes", nodes, "--pod", pod, "--output", "json").json()
    assert document["fit"] == 8
    assert document["stop"]["reason"] == "Unschedulable"
    assert document["stop"]["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_a_daemon_set_has_no_replicas_to_count(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", *_nodes(1))
    daemon = _deployment("agent", replicas=1, cpu="1")
    daemon["kind"] = "DaemonSet"
    del daemon["spec"]["replicas"]
    outcome = berth("capacity", "--nodes", nodes, "--pod", write(tmp_path / "ds.yaml", daemon))
    assert outcome.code == 2
    assert "DaemonSet agent: runs one pod on each eligible node" in outcome.err
