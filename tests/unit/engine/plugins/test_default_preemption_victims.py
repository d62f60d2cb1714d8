"""DefaultPreemption: victim selection and reprieve, candidate search and tie-breaks, the cluster left as found."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.algorithm import SearchState, Unschedulable, schedule_one
from berth.engine.cluster import ClusterState
from berth.engine.framework import names
from berth.engine.framework.status import Code
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_preemption import (
    Candidate,
    DefaultPreemption,
    parse_args,
    pick_candidate,
)
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.fakes import Built, cluster_of, framework_with
from tests.unit.engine.plugins.preemption_fakes import (
    APP_X,
    AvoidAppX,
    CpuFit,
    cpu_nodes,
    make_pdb,
    make_preemptor,
    make_victim,
    post_filter_result,
    run_preemption,
)
from tests.unit.engine.reference.default_preemption import CpuNode
from tests.unit.engine.reference.default_preemption import preempt as reference_preempt
from tests.unit.engine.snapshots import cluster_bytes

# ---------------------------------------------------------------------- victims


@pytest.mark.parametrize(
    ("pods", "pdbs", "preemptor_cpu", "victims"),
    [
        (
            [
                make_victim("prio1", "n1", priority=1),
                make_victim("prio2", "n1", cpu="2", priority=2),
                make_victim("high", "n1", priority=100),
            ],
            [],
            "2",
            ["prio2"],
        ),
        (
            [
                make_victim("a", "n1", priority=5),
                make_victim("b", "n1", priority=1),
                make_victim("high", "n1", priority=100),
            ],
            [],
            "3",
            ["a", "b"],
        ),
        (
            [
                make_victim("young", "n1", cpu="2").set("status.startTime", "2024-01-02T00:00:00Z"),
                make_victim("old", "n1", cpu="2").set("status.startTime", "2024-01-01T00:00:00Z"),
            ],
            [],
            "2",
            ["young"],
        ),
        (
            [
                make_victim("not-started", "n1", cpu="2"),
                make_victim("started", "n1", cpu="2").set(
                    "status.startTime", "2024-01-01T00:00:00Z"
                ),
            ],
            [],
            "2",
            ["not-started"],
        ),
        (
            [
                make_victim("a", "n1", priority=5),
                make_victim("b", "n1", priority=1).label("app", "b"),
                make_victim("high", "n1", priority=100),
            ],
            [make_pdb("budget-b", 0, app="b")],
            "2",
            ["a"],
        ),
        (
            [
                make_victim("a", "n1", priority=5),
                make_victim("b", "n1", priority=1).label("app", "b"),
                make_victim("high", "n1", priority=100),
            ],
            [make_pdb("budget-b", 1, app="b")],
            "2",
            ["b"],
        ),
        (
            [
                make_victim("a", "n1", priority=5),
                make_victim("b", "n1", priority=1).label("app", "b"),
                make_victim("high", "n1", priority=100),
            ],
            [make_pdb("budget-b", 0, ("b",), app="b")],
            "2",
            ["b"],
        ),
        (
            [
                make_victim("a", "n1", priority=5),
                make_victim("b", "n1", priority=1).label("app", "b"),
                make_victim("high", "n1", priority=100),
            ],
            [make_pdb("budget-b", 0, app="b")],
            "3",
            ["a", "b"],
        ),
        (
            [make_victim("same", "n1", cpu="3", priority=10), make_victim("low", "n1", priority=9)],
            [],
            "1",
            ["low"],
        ),
    ],
    ids=[
        "reprieve-most-important-first",
        "both-needed-sorted-by-importance",
        "older-pod-reprieved-first",
        "missing-start-time-is-newest",
        "pdb-violating-reprieved-first",
        "pdb-with-budget-left-is-not-violating",
        "disrupted-pod-is-not-violating",
        "violating-and-clean-victims-resorted",
        "equal-priority-is-never-a-victim",
    ],
)
def test_victim_selection(
    pods: list[PodBuilder], pdbs: list[PodDisruptionBudget], preemptor_cpu: str, victims: list[str]
) -> None:
    cluster = cluster_of(*cpu_nodes("n1"), pods=tuple(pod.obj() for pod in pods))
    for pdb in pdbs:
        cluster.set_pdb(pdb)
    result = post_filter_result(run_preemption(cluster, make_preemptor(cpu=preemptor_cpu).build()))
    assert result.status.code is Code.SUCCESS, result.status
    assert [victim.name for victim in result.victims] == victims


def test_pre_filter_state_is_recomputed_without_the_victims() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1"),
        pods=(
            make_victim("x", "n1", cpu="100m").label("app", "x").obj(),
            make_victim("y", "n1", cpu="100m").obj(),
        ),
    )
    decision = run_preemption(cluster, make_preemptor(cpu="1").build(), AvoidAppX(), CpuFit())
    assert [victim.name for victim in post_filter_result(decision).victims] == ["x"]


# ---------------------------------------------------------------------- candidates


def _candidate(node: str, *victims: tuple[int, str | None], violations: int = 0) -> Candidate:
    pods = []
    for index, (priority, started) in enumerate(victims):
        builder = make_pod(f"{node}-{index}").node(node).priority(priority)
        if started:
            builder = builder.set("status.startTime", started)
        pods.append(builder.build())
    return Candidate(node, tuple(pods), violations)


@pytest.mark.parametrize(
    ("candidates", "chosen"),
    [
        ([_candidate("a", (1, None), violations=1), _candidate("b", (5, None), (5, None))], "b"),
        ([_candidate("a", (5, None)), _candidate("b", (3, None), (3, None), (3, None))], "b"),
        (
            [
                _candidate("a", (5, None), (4, None)),
                _candidate("b", (5, None), (1, None), (1, None)),
            ],
            "a",
        ),
        (
            [
                _candidate("a", (-5, None), (-5, None)),
                _candidate("b", (-5, None), (-6, None), (-6, None)),
            ],
            "a",
        ),
        (
            [
                _candidate("a", (5, "2024-01-01T00:00:00Z"), (1, None)),
                _candidate("b", (5, "2024-01-02T00:00:00Z"), (1, "2023-01-01T00:00:00Z")),
            ],
            "b",
        ),
        (
            [
                _candidate("a", (5, "2024-01-02T00:00:00Z"), (5, "2024-01-01T00:00:00Z")),
                _candidate("b", (5, "2024-01-03T00:00:00Z"), (5, "2024-01-01T12:00:00Z")),
            ],
            "b",
        ),
        ([_candidate("a", (5, None), (4, None))], "a"),
    ],
    ids=[
        "fewest-pdb-violations",
        "lowest-highest-priority",
        "smallest-priority-sum",
        "negative-priorities-sum-shifted",
        "latest-start-of-top-priority-victims",
        "earliest-start-among-top-victims-decides",
        "single-candidate",
    ],
)
def test_pick_candidate(candidates: list[Candidate], chosen: str) -> None:
    assert pick_candidate(candidates, random.Random(1)).node_name == chosen


def test_pick_candidate_full_tie_is_random() -> None:
    candidates = [_candidate(name, (1, "2024-01-01T00:00:00Z")) for name in "abc"]
    picked = {pick_candidate(candidates, random.Random(seed)).node_name for seed in range(30)}
    assert picked == {"a", "b", "c"}


def test_search_starts_at_a_random_offset_and_stops_at_the_candidate_count() -> None:
    names = [f"n{i}" for i in range(5)]
    cluster = cluster_of(
        *cpu_nodes(*names),
        pods=tuple(make_victim(f"low{i}", f"n{i}", cpu="3").obj() for i in range(5)),
    )
    order = [cluster.node_at(int(slot)).name for slot in cluster.node_order()]
    for seed in range(6):
        result = post_filter_result(
            run_preemption(
                cluster,
                make_preemptor().build(),
                seed=seed,
                args={"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
            )
        )
        assert result.nominated_node == order[random.Random(seed).randrange(5)]


def test_search_continues_past_pdb_violating_candidates() -> None:
    cluster = cluster_of(
        *cpu_nodes("n0", "n1"),
        pods=(
            make_victim("guarded", "n0", cpu="3").label("app", "g").obj(),
            make_victim("free", "n1", cpu="3").obj(),
        ),
    )
    cluster.set_pdb(make_pdb("guard", 0, app="g"))
    order = [cluster.node_at(int(slot)).name for slot in cluster.node_order()]
    seed = next(s for s in range(100) if order[random.Random(s).randrange(2)] == "n0")
    result = post_filter_result(
        run_preemption(
            cluster,
            make_preemptor().build(),
            seed=seed,
            args={"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
        )
    )
    assert result.nominated_node == "n1"


# ---------------------------------------------------------------------- the cluster is left alone


def test_cluster_is_restored_exactly() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2", "n3"),
        pods=(
            make_victim("x1", "n1", cpu="1").label("app", "x").host_port(8080).obj(),
            make_victim("y1", "n1", cpu="2", priority=3).obj(),
            make_victim("high", "n1", cpu="1", priority=50).obj(),
            make_victim("x2", "n2", cpu="3", priority=1)
            .label("app", "x")
            .anti_affinity("zone", app="x")
            .obj(),
            make_victim("y3", "n3", cpu="4", priority=2).host_port(9090).obj(),
        ),
    )
    cluster.set_pdb(make_pdb("guard", 0, app="x"))
    cluster.matching_pod_counts(APP_X)
    cluster.node_order()  # a lazy cache that schedule_one fills, not a preemption side effect
    before = cluster_bytes(cluster)
    result = post_filter_result(
        run_preemption(
            cluster,
            make_preemptor(cpu="2").build(),
            AvoidAppX(),
            CpuFit(),
            args={"minCandidateNodesAbsolute": 3},
        )
    )
    assert result.status.code is Code.SUCCESS
    assert cluster_bytes(cluster) == before


# ---------------------------------------------------------------------- against the plain reference


@st.composite
def _cpu_clusters(draw: st.DrawFn) -> tuple[ClusterState, Pod, list[CpuNode], int]:
    node_count = draw(st.integers(1, 6))
    allocatable = [draw(st.sampled_from(["2", "4"])) for _ in range(node_count)]
    cluster = cluster_of(
        *(make_node(f"n{i}").capacity(cpu=cpu, pods=110).obj() for i, cpu in enumerate(allocatable))
    )
    pods: list[Pod] = []
    for index in range(draw(st.integers(0, 12))):
        builder = make_victim(
            f"p{index}",
            f"n{draw(st.integers(0, node_count - 1))}",
            cpu=draw(st.sampled_from(["500m", "1", "2"])),
            priority=draw(st.sampled_from([0, 1, 2, 5, 10, 20])),
        )
        started = draw(st.sampled_from([None, "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"]))
        if started:
            builder = builder.set("status.startTime", started)
        app = draw(st.sampled_from([None, "a", "b"]))
        if app:
            builder = builder.label("app", app)
        pod = builder.build()
        cluster.add_pod(pod)
        pods.append(pod)
    for app in ("a", "b"):
        allowed = draw(st.sampled_from([None, 0, 1]))
        if allowed is not None:
            cluster.set_pdb(make_pdb(f"budget-{app}", allowed, app=app))
    incoming = make_preemptor(cpu=draw(st.sampled_from(["1", "2", "3"]))).build()
    nodes = [
        CpuNode(
            cluster.node_at(int(slot)).name,
            int(cluster.allocatable[0, int(slot)]),
            tuple(cluster.pods_on(int(slot)).values()),
        )
        for slot in cluster.node_order()
    ]
    return cluster, incoming, nodes, draw(st.integers(0, 2**16))


@settings(max_examples=150, deadline=None)
@given(case=_cpu_clusters(), absolute=st.sampled_from([1, 2, 100]))
def test_matches_the_reference(
    case: tuple[ClusterState, Pod, list[CpuNode], int], absolute: int
) -> None:
    cluster, incoming, nodes, seed = case
    cluster.node_order()
    before = cluster_bytes(cluster)
    args = {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": absolute}
    plugin = Built(
        names.DEFAULT_PREEMPTION,
        lambda handle: DefaultPreemption(parse_args(args), handle, rng=random.Random(seed)),
    )
    decision = schedule_one(
        framework_with(CpuFit(), plugin),
        cluster,
        incoming,
        search=SearchState(),
        rng=random.Random(1),
    )
    expected = reference_preempt(
        nodes, incoming, list(cluster.pdbs()), random.Random(seed), absolute=absolute
    )
    assert cluster_bytes(cluster) == before
    if not isinstance(decision, Unschedulable):
        assert decision.node_name  # type: ignore[union-attr]
        return  # the pod fits somewhere: no preemption
    result = post_filter_result(decision)
    if isinstance(expected, str):
        assert result.status.message == f"preemption: {expected}"
        assert result.nominated_node == ""
    else:
        assert (result.nominated_node, [victim.name for victim in result.victims]) == expected
