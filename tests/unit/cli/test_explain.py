"""`berth explain` and `berth simulate --explain`: the answer agrees with `berth simulate`'s, in a
table for people and JSON for tools; bad input is one clear line and status 2."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from berth.cli.main import main
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import Outcome, simulate, write


def explain(*argv: str | Path) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["explain", *map(str, argv)])
    return Outcome(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cluster(tmp_path: Path) -> dict[str, Path]:
    nodes = write(
        tmp_path / "nodes.yaml",
        make_node("small").capacity(cpu="2", memory="4Gi", pods=110).obj(),
        make_node("medium").capacity(cpu="4", memory="8Gi", pods=110).obj(),
        make_node("large").capacity(cpu="4", memory="8Gi", pods=110).obj(),
        make_node("gpu").capacity(cpu="8", memory="8Gi", pods=110).taint("dedicated", "gpu").obj(),
    )
    existing = write(
        tmp_path / "existing.yaml",
        make_pod("batch").req(cpu="2").node("medium").obj(),
        make_pod("cache").req(cpu="3").priority(1000).node("large").obj(),
    )
    return {"nodes": nodes, "existing": existing}


def _args(cluster: dict[str, Path], pod: Path) -> list[str | Path]:
    return ["--pod", pod, "--nodes", cluster["nodes"], "--existing", cluster["existing"]]


def _simulate(cluster: dict[str, Path], pods: Path, *extra: str) -> Outcome:
    files = ["--nodes", cluster["nodes"], "--existing", cluster["existing"]]
    return simulate("--pods", pods, *files, *extra)


def test_a_pending_pod_reads_as_the_failed_scheduling_message_and_grouped_reasons(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("big").req(cpu="3").priority(100).obj())
    outcome = explain(*_args(cluster, pod))
    assert outcome.code == 0, outcome.err
    placed = _simulate(cluster, pod, "--output", "json").json()["pods"][0]
    assert placed["node"] is None
    assert f"  FailedScheduling: {placed['message']}" in outcome.out.splitlines()
    lines = outcome.out.splitlines()
    assert "Filter: 4 of 4 nodes rejected" in lines
    assert any(line.split()[:3] == ["2", "NodeResourcesFit", "Unschedulable"] for line in lines)
    assert any("would nominate medium, evicting: default/batch" in line for line in lines)


def test_json_ranks_the_feasible_nodes_and_the_tie_set_holds_simulates_pick(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("web").req(cpu="500m").obj())
    outcome = explain(*_args(cluster, pod), "--output", "json", "--top", "2")
    assert outcome.code == 0, outcome.err
    answer = outcome.json()
    assert answer["pod"] == "default/web"
    assert answer["profile"] == "default-scheduler"
    assert (answer["nodes"], answer["feasibleNodes"], answer["schedulable"]) == (4, 3, True)
    assert [r["plugin"] for r in answer["rejections"]] == ["TaintToleration"]
    assert answer["rejections"][0]["examples"] == ["gpu"]
    assert len(answer["ranking"]) == 2
    first = answer["ranking"][0]
    weights = {p["name"]: p["weight"] for p in answer["scorePlugins"]}
    assert first["total"] == sum(s["weighted"] for s in first["plugins"].values())
    for name, score in first["plugins"].items():
        assert score["weighted"] == score["normalized"] * weights[name]
    for seed in range(5):
        placed = _simulate(cluster, pod, "--seed", str(seed), "--output", "json").json()
        assert placed["pods"][0]["node"] in answer["tieSet"]


def test_table_shows_each_plugins_scores_for_the_top_nodes(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("web").req(cpu="500m").obj())
    outcome = explain(*_args(cluster, pod), "--top", "1")
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert lines[0] == "Pod default/web (profile default-scheduler)"
    assert "  note: evaluated all 4 nodes" in lines
    header = next(
        i for i, line in enumerate(lines) if line.split()[:3] == ["RANK", "NODE", "TOTAL"]
    )
    assert lines[header + 1].split()[0] == "1"
    assert lines[header + 2].split()[0] == "TaintToleration"
    assert not any(line.split()[:1] == ["2"] for line in lines[header + 1 :])


def test_a_pod_the_scheduler_never_sees_is_said_so(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("pinned").node("small").obj())
    outcome = explain(*_args(cluster, pod), "--output", "json")
    assert outcome.code == 0
    assert outcome.json() == {
        "pod": "default/pinned",
        "skipped": "already assigned to small: no scheduler places it",
    }


@pytest.mark.parametrize(
    ("pods", "extra", "expected"),
    [
        (2, [], "expected exactly one Pod, found 2"),
        (0, [], "expected exactly one Pod, found 0"),
    ],
    ids=["two-pods", "no-pod"],
)
def test_bad_input_is_one_line_and_status_2(
    tmp_path: Path, cluster: dict[str, Path], pods: int, extra: list[str], expected: str
) -> None:
    pod = write(tmp_path / "pod.yaml", *(make_pod(f"p{i}").obj() for i in range(pods)))
    outcome = explain(*_args(cluster, pod), *extra)
    assert outcome.code == 2
    assert outcome.out == ""
    assert outcome.err.startswith("berth explain: ")
    assert expected in outcome.err
    assert outcome.err.count("\n") == 1


@pytest.mark.parametrize("top", ["0", "-3", "many"])
def test_top_must_be_a_positive_number(
    tmp_path: Path, cluster: dict[str, Path], capsys: pytest.CaptureFixture[str], top: str
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("p").obj())
    for command in (["explain", "--pod", str(pod)], ["simulate", "--pods", str(pod), "--explain"]):
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--nodes", str(cluster["nodes"]), "--top", top])
        assert exit_info.value.code == 2
        assert "argument --top:" in capsys.readouterr().err


def test_a_pod_file_that_clashes_with_a_bound_pod_is_refused(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("batch").obj())
    outcome = explain(*_args(cluster, pod))
    assert outcome.code == 2
    assert "metadata.name: another pod in" in outcome.err


def _pods(tmp_path: Path) -> Path:
    return write(
        tmp_path / "pods.yaml",
        make_pod("web").req(cpu="500m").obj(),
        make_pod("big").req(cpu="3").priority(100).obj(),
        make_pod("api").req(cpu="1").obj(),
        make_pod("huge").req(cpu="64").obj(),
    )


@pytest.mark.parametrize("seed", range(4))
def test_simulate_explain_changes_no_placement(
    tmp_path: Path, cluster: dict[str, Path], seed: int
) -> None:
    pods = _pods(tmp_path)
    plain = _simulate(cluster, pods, "--seed", str(seed), "--output", "json").json()
    explained = _simulate(
        cluster, pods, "--seed", str(seed), "--output", "json", "--explain"
    ).json()
    for entry in explained["pods"]:
        explanation = entry.pop("explanation")
        assert explanation["pod"] == f"{entry['namespace']}/{entry['name']}"
        if entry["node"] is not None:
            assert entry["node"] in explanation["tieSet"]
        else:
            assert explanation["message"] == entry["message"]
    assert explained == plain


def test_simulate_explain_table_has_one_section_per_pod(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    outcome = _simulate(cluster, _pods(tmp_path), "--explain")
    assert outcome.code == 0, outcome.err
    sections = [line for line in outcome.out.splitlines() if line.startswith("Pod ")]
    assert sections == [
        f"Pod default/{name} (profile default-scheduler)" for name in ("web", "big", "api", "huge")
    ]
    assert (
        "  FailedScheduling: 0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "3 Insufficient cpu." in outcome.out
    )


def test_the_readme_walk_through_is_what_the_command_prints() -> None:
    root = Path(__file__).parents[3]
    readme = (root / "README.md").read_text()
    command = (
        "$ berth explain --pod examples/pending-pod.yaml --nodes examples/nodes.yaml "
        "--existing examples/existing-pods.yaml\n"
    )
    shown = readme[readme.index(command) + len(command) :].split("```", 1)[0]
    outcome = explain(
        "--pod",
        root / "examples/pending-pod.yaml",
        "--nodes",
        root / "examples/nodes.yaml",
        "--existing",
        root / "examples/existing-pods.yaml",
    )
    assert outcome.code == 0, outcome.err
    assert outcome.out == shown


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "give either NAMESPACE/NAME (a pod of the live cluster) or --pod FILE"),
        (["ns/web", "--pod", "p.yaml"], "give either NAMESPACE/NAME"),
        (["--pod", "p.yaml"], "--pod needs --nodes"),
        (["ns/web", "--nodes", "n.yaml"], "NAMESPACE/NAME reads it live"),
        (["--pod", "p.yaml", "--nodes", "n.yaml", "--kubeconfig", "k"], "--kubeconfig reads"),
        (["a/b/c", "--kubeconfig", "k"], "pod: expected NAMESPACE/NAME, got 'a/b/c'"),
    ],
    ids=["neither", "both", "pod-without-nodes", "live-with-files", "files-with-kubeconfig", "bad"],
)
def test_one_source_of_pod_and_cluster(argv: list[str], expected: str) -> None:
    outcome = explain(*argv)
    assert outcome.code == 2
    assert outcome.err.startswith("berth explain: ")
    assert expected in outcome.err


@pytest.mark.parametrize(
    ("text", "expected"),
    [("web", ("default", "web")), ("pod/web", ("default", "web")), ("ns/web", ("ns", "web"))],
)
def test_targets(text: str, expected: tuple[str, str]) -> None:
    from berth.cli.explain_live import parse_target

    assert parse_target(text) == expected


def test_an_unreachable_cluster_is_one_line_and_status_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    outcome = explain("ns/web", "--kubeconfig", kubeconfig)
    assert outcome.code == 2
    assert outcome.err.startswith("berth explain: ")
    assert outcome.err.count("\n") == 1


@pytest.mark.parametrize("content", ["garbage: [", "[1, 2]", "current-context: nowhere\n"])
def test_an_unusable_kubeconfig_is_one_line_and_status_2(tmp_path: Path, content: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(content)
    outcome = explain("ns/web", "--kubeconfig", kubeconfig)
    assert outcome.code == 2
    assert outcome.err.startswith(f"berth explain: {kubeconfig}: cannot use this kubeconfig: ")
    assert outcome.err.count("\n") == 1


def test_a_pre_filter_rejection_is_one_row_for_every_node(
    tmp_path: Path, cluster: dict[str, Path]
) -> None:
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}
    pod = write(tmp_path / "pod.yaml", make_pod("db").set("spec.volumes", [claim]).obj())
    outcome = explain(*_args(cluster, pod), "--output", "json")
    assert outcome.code == 0, outcome.err
    answer = outcome.json()
    assert answer["feasibleNodes"] == 0
    assert [(r["nodes"], r["examples"]) for r in answer["rejections"]] == [(4, [])]
    assert answer["message"].startswith("0/4 nodes are available: ")
