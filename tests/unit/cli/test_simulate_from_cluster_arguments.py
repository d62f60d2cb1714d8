"""`berth simulate --from-cluster`: which flags go with it, what its help promises, and a clear
error when the cluster cannot be read. (Reading a real cluster: tests/cluster/
test_simulate_from_cluster.py.)"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import yaml

from berth.cli.main import main
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    return write(tmp_path / "pods.yaml", make_pod("web").req(cpu="1").obj())


def _unreachable_kubeconfig(tmp_path: Path) -> Path:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_help_says_it_only_gets_and_lists() -> None:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(out.getvalue().split())
    assert "Read-only: it only gets and lists" in text
    assert "policy/poddisruptionbudgets" in text


@pytest.mark.parametrize(
    "extra",
    [["--from-cluster", "--nodes", "nodes.yaml"], []],
    ids=["both-sources", "no-source"],
)
def test_exactly_one_of_nodes_and_from_cluster(pods: Path, extra: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--pods", str(pods), *extra])
    assert exited.value.code == 2


def test_existing_pods_come_from_the_cluster_not_a_file(tmp_path: Path, pods: Path) -> None:
    existing = write(tmp_path / "existing.yaml", make_node("a").obj())
    outcome = simulate("--from-cluster", "--pods", pods, "--existing", existing)
    assert outcome.code == 2
    assert outcome.err.startswith("berth simulate: --existing: cannot be combined with")


def test_a_missing_kubeconfig_is_named(tmp_path: Path, pods: Path) -> None:
    missing = tmp_path / "nowhere.kubeconfig"
    outcome = simulate("--from-cluster", "--kubeconfig", missing, "--pods", pods)
    assert outcome.code == 2
    assert f"{missing}: cannot use this kubeconfig" in outcome.err


def test_an_unreachable_cluster_is_an_input_error(tmp_path: Path, pods: Path) -> None:
    kubeconfig = _unreachable_kubeconfig(tmp_path)
    outcome = simulate("--from-cluster", "--kubeconfig", kubeconfig, "--pods", pods)
    assert outcome.code == 2
    assert outcome.err.startswith("berth simulate: the cluster: cannot read it: GET /api/v1/nodes")
    assert outcome.out == ""


def test_snapshot_to_needs_from_cluster(tmp_path: Path, pods: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("a").capacity(cpu="2", pods=10).obj())
    outcome = simulate("--nodes", nodes, "--pods", pods, "--snapshot-to", tmp_path / "snap")
    assert outcome.code == 2
    assert "--snapshot-to: saves what --from-cluster read" in outcome.err
    assert not (tmp_path / "snap").exists()
