"""`berth simulate` checks its input as one cluster: no object counted twice or silently dropped, no
pod reported on a node that does not exist; DRA-claim pods refused; PDBs honoured by preemption."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write


@pytest.fixture
def two_cpu_node(tmp_path: Path) -> Path:
    return write(
        tmp_path / "nodes.yaml", make_node("a").capacity(cpu="2", memory="4Gi", pods=10).obj()
    )


def test_pods_with_one_namespace_and_name_are_refused(tmp_path: Path, two_cpu_node: Path) -> None:
    pods = write(tmp_path / "pods.yaml", *(make_pod("web").req(cpu="1").obj() for _ in range(3)))
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods)
    assert outcome.code == 2
    assert outcome.err.endswith(
        "pods.yaml: Pod default/web: metadata.name: another pod in "
        f"{pods} has this namespace and name\n"
    )


def test_a_pending_pod_named_like_a_bound_one_is_refused(
    tmp_path: Path, two_cpu_node: Path
) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("web").obj())
    existing = write(tmp_path / "existing.yaml", make_pod("web").node("a").obj())
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods, "--existing", existing)
    assert outcome.code == 2
    assert "existing.yaml: Pod default/web: metadata.name: another pod in" in outcome.err


def test_pods_sharing_a_uid_are_refused(tmp_path: Path, two_cpu_node: Path) -> None:
    pods = write(
        tmp_path / "pods.yaml",
        *(make_pod(f"web-{i}").uid("same").req(cpu="1").obj() for i in range(3)),
    )
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods)
    assert outcome.code == 2
    assert outcome.err.endswith(
        f"pods.yaml: Pod default/web-1: metadata.uid: 'same' is also the uid of Pod "
        f"default/web-0 in {pods}\n"
    )


def test_nodes_with_one_name_are_refused(tmp_path: Path) -> None:
    nodes = write(
        tmp_path / "nodes.yaml",
        make_node("a").capacity(cpu="1", pods=10).obj(),
        make_node("a").capacity(cpu="64", pods=10).obj(),
    )
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    outcome = simulate("--nodes", nodes, "--pods", pods)
    assert outcome.code == 2
    assert outcome.err.endswith("nodes.yaml: Node a: metadata.name: another node has this name\n")


def test_a_bound_pod_on_an_unknown_node_is_reported_and_left_out(
    tmp_path: Path, two_cpu_node: Path
) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("p").req(cpu="2").obj())
    existing = write(tmp_path / "existing.yaml", make_pod("old").node("ghost").req(cpu="2").obj())
    outcome = simulate(
        "--nodes", two_cpu_node, "--pods", pods, "--existing", existing, "--output", "json"
    )
    assert outcome.code == 0
    warning = (
        f"{existing}: Pod default/old: spec.nodeName: node 'ghost' is not among the nodes; "
        "the pod is left out"
    )
    assert outcome.err == f"berth simulate: warning: {warning}\n"
    result = outcome.json()
    assert result["warnings"] == [warning]
    assert result["pods"][0]["node"] == "a"


def test_a_pending_pod_with_node_name_of_an_unknown_node_is_not_placed(
    tmp_path: Path, two_cpu_node: Path
) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("pinned").node("ghost").obj())
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods, "--output", "json")
    assert outcome.code == 0
    assert outcome.json()["pods"] == [
        {
            "namespace": "default",
            "name": "pinned",
            "node": None,
            "message": "spec.nodeName names node 'ghost', which does not exist: no scheduler "
            "places this pod and it stays Pending until such a node appears",
        }
    ]


def test_a_pod_whose_claim_was_never_generated_waits(tmp_path: Path, two_cpu_node: Path) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("trainer").resource_claim("gpu").obj())
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods, "--output", "json")
    assert outcome.code == 0
    (placement,) = outcome.json()["pods"]
    assert placement["node"] is None
    # DynamicResources' PreEnqueue: no controller made the claim from its template.
    assert placement["message"] == 'pod "default/trainer": ResourceClaim not created yet'


def _pdb(status: dict[str, Any] | None, **spec: Any) -> dict[str, Any]:
    pdb: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-cache", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "cache"}}, **spec},
    }
    if status is not None:
        pdb["status"] = status
    return pdb


@pytest.mark.parametrize(
    ("budget", "nominated", "victim"),
    [
        (None, "n1", "default/cache"),
        (_pdb({"disruptionsAllowed": 0}), "n2", "default/batch"),
        (_pdb({"disruptionsAllowed": 1}), "n1", "default/cache"),
        (_pdb(None, minAvailable=1), "n2", "default/batch"),
        (_pdb(None, maxUnavailable="100%"), "n1", "default/cache"),
    ],
    ids=["no-pdb", "pdb-blocks", "pdb-allows", "spec-min-available", "spec-max-unavailable"],
)
def test_preemption_honours_pod_disruption_budgets(
    tmp_path: Path, budget: dict[str, Any] | None, nominated: str, victim: str
) -> None:
    # Without a budget the cache pod (priority 0) is the cheaper victim than batch (priority 10).
    nodes = write(
        tmp_path / "nodes.yaml",
        *(make_node(name).capacity(cpu="1", memory="1Gi", pods=10).obj() for name in ("n1", "n2")),
    )
    bound = [
        make_pod("cache").labels(app="cache").node("n1").req(cpu="1").obj(),
        make_pod("batch").labels(app="batch").node("n2").req(cpu="1").priority(10).obj(),
    ]
    existing = write(tmp_path / "existing.yaml", *bound, *([budget] if budget else []))
    pods = write(tmp_path / "pods.yaml", make_pod("urgent").req(cpu="1").priority(100).obj())
    outcome = simulate("--nodes", nodes, "--pods", pods, "--existing", existing, "--output", "json")
    assert outcome.code == 0, outcome.err
    (placement,) = outcome.json()["pods"]
    assert placement["node"] is None
    assert (placement["nominatedNode"], placement["victims"]) == (nominated, [victim])


def test_a_malformed_pdb_names_its_field(tmp_path: Path, two_cpu_node: Path) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    existing = write(tmp_path / "existing.yaml", _pdb(None, minAvailable="lots"))
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods, "--existing", existing)
    assert outcome.code == 2
    assert outcome.err.endswith(
        "existing.yaml: PodDisruptionBudget default/keep-cache: spec.minAvailable: "
        "expected an integer or a percentage, got 'lots'\n"
    )


def test_budgets_with_one_name_are_refused(tmp_path: Path, two_cpu_node: Path) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    existing = write(tmp_path / "existing.yaml", _pdb(None), _pdb({"disruptionsAllowed": 5}))
    outcome = simulate("--nodes", two_cpu_node, "--pods", pods, "--existing", existing)
    assert outcome.code == 2
    assert outcome.err.endswith(
        "existing.yaml: PodDisruptionBudget default/keep-cache: metadata.name: another "
        "PodDisruptionBudget in this namespace has this name\n"
    )
