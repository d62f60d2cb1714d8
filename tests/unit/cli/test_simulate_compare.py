"""`berth simulate --compare`: the pods two profile sets place differently, and what each leaves behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write


def _profile(scheduler_name: str, *, binpack: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler_name}
    if binpack:
        spec["plugins"] = {
            "score": {
                "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
            }
        }
        spec["pluginConfig"] = [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [
                            {"name": "cpu", "weight": 1},
                            {"name": "memory", "weight": 1},
                        ],
                    }
                },
            }
        ]
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": f"{scheduler_name}-{'binpack' if binpack else 'spread'}"},
        "spec": spec,
    }


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Three empty nodes of 4 cpu and 8Gi, three pods of 1 cpu and 1Gi."""
    return {
        "nodes": write(
            tmp_path / "nodes.yaml",
            *(make_node(name).capacity(cpu="4", memory="8Gi", pods=110).obj() for name in "abc"),
        ),
        "pods": write(
            tmp_path / "pods.yaml",
            *(make_pod(f"p{i}").req(cpu="1", memory="1Gi").obj() for i in (1, 2, 3)),
        ),
        "spread": write(tmp_path / "spread.yaml", _profile("default-scheduler", binpack=False)),
        "binpack": write(tmp_path / "binpack.yaml", _profile("default-scheduler", binpack=True)),
        "other": write(tmp_path / "other.yaml", _profile("someone-else", binpack=False)),
    }


def _compare(files: dict[str, Path], *argv: str | Path) -> dict[str, Any]:
    outcome = simulate(
        "--nodes", files["nodes"], "--pods", files["pods"], *argv, "--output", "json"
    )
    assert outcome.code == 0, outcome.err
    return outcome.json()


def test_binpacking_fills_one_node_where_the_default_spreads(files: dict[str, Path]) -> None:
    result = _compare(files, "--compare", files["binpack"])
    assert result["totals"]["profile"] == {
        "profiles": "default",
        "nodesUsed": 3,
        "nodesEmpty": 0,
        "podsPending": 0,
        # Every free unit (3 cpu, 7Gi per node) sits on a used node.
        "fragmentation": {"cpu": 1.0, "memory": 1.0},
    }
    assert result["totals"]["compare"] == {
        "profiles": str(files["binpack"]),
        "nodesUsed": 1,
        "nodesEmpty": 2,
        "podsPending": 0,
        # Free on the used node / free on all: cpu 1 / (1+4+4), memory 5Gi / (5+8+8)Gi.
        "fragmentation": {"cpu": round(1 / 9, 4), "memory": round(5 / 21, 4)},
    }
    # Both runs place p1 first on equally scored empty nodes with one seed: the same node. The
    # default then spreads p2 and p3 to the other two; bin-packing puts them beside p1.
    differences = result["differences"]
    assert [d["name"] for d in differences] == ["p2", "p3"]
    packed = {d["compare"]["node"] for d in differences}
    assert len(packed) == 1
    spread = {d["profile"]["node"] for d in differences}
    assert len(spread) == 2
    assert packed.isdisjoint(spread)


def test_the_same_profiles_place_everything_alike(files: dict[str, Path]) -> None:
    result = _compare(files, "--profile", files["spread"], "--compare", files["spread"])
    assert result["differences"] == []
    assert result["totals"]["profile"] == result["totals"]["compare"] | {
        "profiles": str(files["spread"])
    }


def test_a_pod_pending_under_one_set_only_is_a_difference(files: dict[str, Path]) -> None:
    result = _compare(files, "--compare", files["other"])
    assert [(d["name"], d["compare"]["node"]) for d in result["differences"]] == [
        ("p1", None),
        ("p2", None),
        ("p3", None),
    ]
    assert result["differences"][0]["compare"]["message"] == (
        "skipped: no profile serves schedulerName 'default-scheduler'"
    )
    compared = result["totals"]["compare"]
    assert (compared["podsPending"], compared["nodesUsed"], compared["nodesEmpty"]) == (3, 0, 3)
    # Nothing runs anywhere: no free unit is stranded on a used node.
    assert compared["fragmentation"] == {"cpu": 0.0, "memory": 0.0}


def test_table_lists_the_differences_then_the_totals(files: dict[str, Path]) -> None:
    outcome = simulate(
        "--nodes", files["nodes"], "--pods", files["pods"], "--compare", files["binpack"]
    )
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert lines[0].split() == ["POD", "NODE", "(default)", "NODE", f"({files['binpack']})"]
    assert [line.split()[0] for line in lines[1:3]] == ["default/p2", "default/p3"]
    assert "2/3 pods placed differently" in lines
    totals = lines[lines.index("2/3 pods placed differently") + 2 :]
    assert [line.split()[-2:] for line in totals] == [
        ["default", str(files["binpack"])],
        ["3", "1"],
        ["0", "2"],
        ["0", "0"],
        ["1.000", "0.111"],
        ["1.000", "0.238"],
    ]


def test_a_bad_compare_file_is_refused_naming_it(files: dict[str, Path], tmp_path: Path) -> None:
    broken = write(
        tmp_path / "broken.yaml",
        {"apiVersion": "berth.dev/v1alpha1", "kind": "SchedulerProfile", "metadata": {"name": "x"}},
    )
    outcome = simulate("--nodes", files["nodes"], "--pods", files["pods"], "--compare", broken)
    assert outcome.code == 2
    assert outcome.out == ""
    assert outcome.err.startswith(f"berth simulate: {broken}: SchedulerProfile")
