"""ClusterState.trial undoes pod changes exactly; PDBs and the pod fields preemption reads."""

from __future__ import annotations

import pytest

from berth.engine.cluster import ClusterState
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.errors import InvalidObjectError
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.pdb import PodDisruptionBudget
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import cluster_of
from tests.unit.engine.snapshots import cluster_bytes


def _cluster() -> ClusterState:
    return cluster_of(
        make_node("a").obj(),
        make_node("b").obj(),
        pods=(
            make_pod("p1").uid("u1").node("a").req(cpu="1").host_port(80).obj(),
            make_pod("p2")
            .uid("u2")
            .node("a")
            .label("app", "x")
            .anti_affinity("zone", app="x")
            .obj(),
            make_pod("p3").uid("u3").node("a").req(memory="1Gi").host_port(81).obj(),
            make_pod("p4").uid("u4").node("b").label("app", "x").obj(),
            make_pod("orphan").uid("u5").node("gone").obj(),
        ),
    )


def _query(app: str) -> PodQuery:
    return PodQuery(
        (
            PodClause(
                LabelSelector((Requirement("app", Operator.IN, frozenset({app})),)),
                frozenset({"default"}),
            ),
        )
    )


def test_trial_restores_the_cluster_byte_for_byte() -> None:
    cluster = _cluster()
    cluster.matching_pod_counts(_query("x"))  # an index kept before the trial
    before = cluster_bytes(cluster)
    with cluster.trial():
        for uid in ("u1", "u2", "u3", "u5"):
            cluster.remove_pod(uid)
        cluster.add_pod(make_pod("new").uid("u9").node("b").req(cpu="2").build())
        replaced = make_pod("p4").uid("u4").node("b").label("app", "y").build()
        cluster.add_pod(replaced)
        cluster.matching_pod_counts(_query("y"))  # an index first asked for inside
        assert cluster.pod_total == 2
        assert cluster.pods_with_required_anti_affinity == 0
    assert cluster_bytes(cluster) == before
    assert cluster.matching_pod_counts(_query("x")).tolist()[:2] == [1, 1]


def test_trial_restores_after_an_exception() -> None:
    cluster = _cluster()
    before = cluster_bytes(cluster)
    with pytest.raises(RuntimeError, match="boom"), cluster.trial():
        cluster.remove_pod("u1")
        raise RuntimeError("boom")
    assert cluster_bytes(cluster) == before


def test_trials_do_not_nest() -> None:
    cluster = _cluster()
    with cluster.trial(), pytest.raises(RuntimeError, match="nest"), cluster.trial():
        pass


def test_pdbs_are_kept_by_namespace_and_name() -> None:
    cluster = ClusterState()
    raw = {
        "metadata": {"namespace": "ns", "name": "budget"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}},
        "status": {"disruptionsAllowed": 1, "disruptedPods": {"p1": "2024-01-01T00:00:00Z"}},
    }
    pdb = PodDisruptionBudget.from_dict(raw)
    cluster.set_pdb(pdb)
    cluster.set_pdb(pdb)
    assert list(cluster.pdbs()) == [pdb]
    assert pdb.disrupted_pods == frozenset({"p1"})
    assert pdb.covers("ns", {"app": "x"})
    assert not pdb.covers("other", {"app": "x"})
    cluster.remove_pdb("ns", "budget")
    assert list(cluster.pdbs()) == []


@pytest.mark.parametrize(
    "selector",
    [None, {}, {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}],
    ids=["nil-selector", "empty-selector", "invalid-selector"],
)
def test_pdb_selector_that_covers_nothing(selector: object) -> None:
    pdb = PodDisruptionBudget.from_dict(
        {"metadata": {"name": "b"}, "spec": {"selector": selector}, "status": {}}
    )
    assert not pdb.covers("default", {"app": "x"})


def test_pdb_with_a_bad_field_names_it() -> None:
    with pytest.raises(InvalidObjectError, match=r"status\.disruptionsAllowed"):
        PodDisruptionBudget.from_dict(
            {"metadata": {"name": "b"}, "status": {"disruptionsAllowed": "1"}}
        )


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], True),
        (
            [{"type": "DisruptionTarget", "status": "False", "reason": "PreemptionByScheduler"}],
            False,
        ),
        (
            [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}],
            False,
        ),
        (
            [
                {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
            ],
            False,
        ),
        ([{"type": "Ready", "status": "True"}], False),
    ],
    ids=["preempted", "condition-false", "other-reason", "first-condition-wins", "no-condition"],
)
def test_pod_preempted_by_scheduler(conditions: list[dict[str, str]], expected: bool) -> None:
    pod = make_pod("p").set("status.conditions", conditions).build()
    assert pod.preempted_by_scheduler is expected


def test_pod_start_time() -> None:
    assert make_pod("p").build().start_time is None
    early = make_pod("p").set("status.startTime", "2024-01-01T00:00:00Z").build().start_time
    late = make_pod("p").set("status.startTime", "2024-01-01T00:00:01Z").build().start_time
    assert early is not None and late is not None and late - early == 1.0
    with pytest.raises(InvalidObjectError, match=r"status\.startTime"):
        make_pod("p").set("status.startTime", "yesterday").build()
