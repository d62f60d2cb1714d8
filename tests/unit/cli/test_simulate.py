"""`berth simulate`: placements, the JSON format, profiles by schedulerName, and clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.main import main
from tests.builders import make_node, make_pod

EXAMPLES = Path(__file__).parents[3] / "examples"


def _write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects))
    return path


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["simulate", *argv, "--output", "json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_places_pods_in_priority_order_and_accounts_each_placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = _write(
        tmp_path / "nodes.yaml", make_node("only").capacity(cpu="1", memory="4Gi", pods=110).obj()
    )
    pods = _write(
        tmp_path / "pods.yaml",
        make_pod("low").req(cpu="600m").obj(),
        make_pod("high").req(cpu="600m").priority(100).obj(),
    )
    result = _run_json(capsys, "--nodes", str(nodes), "--pods", str(pods))
    by_name = {p["name"]: p for p in result["pods"]}
    assert by_name["high"]["node"] == "only"
    assert by_name["low"]["node"] is None
    assert by_name["low"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert result["nodes"] == [
        {
            "name": "only",
            "requested": {"cpu": "600m", "pods": "1"},
            "allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"},
        }
    ]


def test_kind_list_input_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = _write(
        tmp_path / "nodes.yaml",
        {
            "apiVersion": "v1",
            "kind": "NodeList",
            "items": [make_node("a").obj(), make_node("b").obj()],
        },
    )
    pods = _write(tmp_path / "pods.yaml", make_pod("p").obj())
    result = _run_json(capsys, "--nodes", str(nodes), "--pods", str(pods))
    assert result["pods"][0]["node"] in {"a", "b"}


def test_with_profiles_pods_of_other_schedulers_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = _write(tmp_path / "nodes.yaml", make_node("a").obj())
    pods = _write(
        tmp_path / "pods.yaml", make_pod("mine").scheduler("berth").obj(), make_pod("theirs").obj()
    )
    profile = _write(
        tmp_path / "profile.yaml",
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "berth"},
            "spec": {"schedulerName": "berth"},
        },
    )
    result = _run_json(
        capsys, "--nodes", str(nodes), "--pods", str(pods), "--profile", str(profile)
    )
    by_name = {p["name"]: p for p in result["pods"]}
    assert by_name["mine"]["node"] == "a"
    assert by_name["theirs"] == {
        "namespace": "default",
        "name": "theirs",
        "node": None,
        "message": "skipped: no profile serves schedulerName 'default-scheduler'",
    }


def test_same_seed_same_placements(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = _write(tmp_path / "nodes.yaml", *(make_node(f"n{i}").obj() for i in range(5)))
    pods = _write(tmp_path / "pods.yaml", *(make_pod(f"p{i}").obj() for i in range(5)))
    first = _run_json(capsys, "--nodes", str(nodes), "--pods", str(pods), "--seed", "7")
    second = _run_json(capsys, "--nodes", str(nodes), "--pods", str(pods), "--seed", "7")
    assert first == second


@pytest.mark.parametrize(
    ("pods_doc", "expected"),
    [
        (
            {
                "kind": "Pod",
                "metadata": {"name": "bad"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]},
            },
            "pods.yaml: Pod default/bad: spec.containers[0].resources.requests.cpu: invalid quantity 'lots'",
        ),
        (
            {"kind": "Node", "metadata": {"name": "oops"}},
            "pods.yaml: object 1: expected kind Pod, Deployment, ReplicaSet, StatefulSet, Job or "
            "DaemonSet, got 'Node'",
        ),
        (
            {
                "kind": "Pod",
                "metadata": {"name": "t"},
                "spec": {"tolerations": [{"key": "k", "effect": "Sometimes"}]},
            },
            "pods.yaml: Pod default/t: spec.tolerations[0].effect: unknown taint effect 'Sometimes'",
        ),
    ],
    ids=["bad-quantity", "wrong-kind", "bad-effect"],
)
def test_bad_input_exits_2_naming_file_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pods_doc: dict[str, Any], expected: str
) -> None:
    nodes = _write(tmp_path / "nodes.yaml", make_node("a").obj())
    pods = _write(tmp_path / "pods.yaml", pods_doc)
    assert main(["simulate", "--nodes", str(nodes), "--pods", str(pods)]) == 2
    assert expected in capsys.readouterr().err


def test_invalid_profile_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = _write(tmp_path / "nodes.yaml", make_node("a").obj())
    pods = _write(tmp_path / "pods.yaml", make_pod("p").obj())
    profile = _write(
        tmp_path / "profile.yaml",
        {
            "kind": "SchedulerProfile",
            "metadata": {"name": "broken"},
            "spec": {
                "schedulerName": "x",
                "plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}},
            },
        },
    )
    assert (
        main(["simulate", "--nodes", str(nodes), "--pods", str(pods), "--profile", str(profile)])
        == 2
    )
    assert (
        "SchedulerProfile broken: spec.plugins.filter.enabled[0].name: unknown plugin 'NoSuchPlugin'"
        in capsys.readouterr().err
    )


def test_the_shipped_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_json(
        capsys,
        "--nodes",
        str(EXAMPLES / "nodes.yaml"),
        "--pods",
        str(EXAMPLES / "pods.yaml"),
        "--existing",
        str(EXAMPLES / "existing-pods.yaml"),
        "--seed",
        "1",
    )
    by_name = {p["name"]: p for p in result["pods"]}
    assert by_name["trainer"]["node"] == "node-6"
    assert by_name["too-big"]["node"] is None
    assert (
        by_name["gated"]["message"] == "waiting for scheduling gates: [example.com/wait-for-quota]"
    )
    cache_nodes = [by_name[f"cache-{i}"]["node"] for i in range(3)]
    assert len(set(cache_nodes)) == 3
