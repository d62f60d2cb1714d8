"""DefaultPreemption: args, eligibility, potential nodes and the messages it writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code, Status
from berth.engine.framework.verdicts import Verdicts, reject_where
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_preemption import DefaultPreemptionArgs, new_plugin, parse_args
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import FakeFilter, FakePreFilter, cluster_of, framework_with
from tests.unit.engine.plugins.preemption_fakes import (
    CpuFit,
    cpu_nodes,
    make_preemptor,
    make_victim,
    post_filter_result,
    run_preemption,
)

# ---------------------------------------------------------------------- args


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, DefaultPreemptionArgs(10, 100)),
        ({}, DefaultPreemptionArgs(10, 100)),
        ({"minCandidateNodesPercentage": 0}, DefaultPreemptionArgs(0, 100)),
        ({"minCandidateNodesAbsolute": 0}, DefaultPreemptionArgs(10, 0)),
        (
            {"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 5},
            DefaultPreemptionArgs(100, 5),
        ),
    ],
    ids=["none", "empty", "explicit-zero-percentage", "explicit-zero-absolute", "both-set"],
)
def test_args_defaults(raw: dict[str, Any] | None, expected: DefaultPreemptionArgs) -> None:
    assert parse_args(raw) == expected
    assert new_plugin(raw, framework_with()).args == expected


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        (
            {"minCandidateNodesPercentage": 101},
            "minCandidateNodesPercentage",
            "101: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesPercentage": -1},
            "minCandidateNodesPercentage",
            "-1: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesAbsolute": -1},
            "minCandidateNodesAbsolute",
            "-1: not in valid range [0, inf)",
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "minCandidateNodesPercentage",
            "0: cannot be zero at the same time as minCandidateNodesAbsolute",
        ),
        (
            {"minCandidateNodesAbsolute": "5"},
            "minCandidateNodesAbsolute",
            "must be an integer, got '5'",
        ),
        (
            {"minCandidateNodesAbsolute": True},
            "minCandidateNodesAbsolute",
            "must be an integer, got True",
        ),
        ({"minCandidates": 1}, "minCandidates", "unknown field"),
    ],
    ids=[
        "percentage-high",
        "percentage-negative",
        "absolute-negative",
        "both-zero",
        "string",
        "bool",
        "unknown",
    ],
)
def test_args_validation(raw: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as caught:
        parse_args(raw)
    assert (caught.value.plugin, caught.value.field, caught.value.problem) == (
        "DefaultPreemption",
        field,
        problem,
    )


@pytest.mark.parametrize(
    ("percentage", "absolute", "potential", "expected"),
    [
        (10, 100, 50, 50),
        (10, 100, 5000, 500),
        (10, 100, 1500, 150),
        (10, 100, 999, 100),
        (0, 3, 10, 3),
        (50, 0, 7, 3),
        (100, 0, 7, 7),
    ],
    ids=[
        "capped-at-potential",
        "ten-percent",
        "ten-percent-1500",
        "floor-100",
        "absolute-only",
        "percentage-truncates",
        "all",
    ],
)
def test_num_candidates(percentage: int, absolute: int, potential: int, expected: int) -> None:
    assert DefaultPreemptionArgs(percentage, absolute).num_candidates(potential) == expected


def test_events_to_register_assigned_pod_deletion_with_a_skipping_hint() -> None:
    (registered,) = new_plugin(None, framework_with()).events_to_register()
    assert registered.event.resource.value == "AssignedPod"
    assert registered.event.action.name == "DELETE"
    assert registered.hint is not None
    assert registered.hint(make_pod("p").build(), None, None).value == "QueueSkip"


# ---------------------------------------------------------------------- eligibility


def _nominated_cluster(
    *, terminating: bool, preempted: bool, victim_priority: int = 0
) -> ClusterState:
    leaving = make_victim("leaving", "n1", cpu="3", priority=victim_priority)
    if terminating:
        leaving = leaving.terminating()
    if preempted:
        leaving = leaving.set(
            "status.conditions",
            [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
        )
    return cluster_of(*cpu_nodes("n1"), pods=(leaving.obj(),))


@pytest.mark.parametrize(
    ("pod", "cluster", "message", "nominated"),
    [
        (
            make_preemptor().set("spec.preemptionPolicy", "Never").build(),
            _nominated_cluster(terminating=False, preempted=False),
            "preemption: not eligible due to preemptionPolicy=Never.",
            None,
        ),
        (
            make_preemptor().nominated("n1").build(),
            _nominated_cluster(terminating=True, preempted=True),
            "preemption: not eligible due to a terminating pod on the nominated node.",
            None,
        ),
        (
            make_preemptor().nominated("n1").build(),
            _nominated_cluster(terminating=True, preempted=False),
            "preemption: found a potential placement for pod on node n1, preempting 1 victims",
            "n1",
        ),
        (
            make_preemptor().nominated("n1").build(),
            _nominated_cluster(terminating=False, preempted=True),
            "preemption: found a potential placement for pod on node n1, preempting 1 victims",
            "n1",
        ),
        (
            make_preemptor().nominated("n1").build(),
            _nominated_cluster(terminating=True, preempted=True, victim_priority=10),
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            "",
        ),
        (
            make_preemptor().nominated("gone").build(),
            _nominated_cluster(terminating=True, preempted=True),
            "preemption: found a potential placement for pod on node n1, preempting 1 victims",
            "n1",
        ),
    ],
    ids=[
        "policy-never",
        "victim-still-terminating-on-nominated-node",
        "terminating-but-not-preempted",
        "preempted-but-not-terminating",
        "terminating-pod-of-equal-priority-does-not-block",
        "nominated-node-gone",
    ],
)
def test_eligibility(pod: Pod, cluster: ClusterState, message: str, nominated: str | None) -> None:
    result = post_filter_result(run_preemption(cluster, pod))
    assert result.status.message == message
    assert result.nominated_node == nominated


def test_unresolvable_nominated_node_does_not_block_preemption_elsewhere() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2"),
        pods=(
            make_victim("leaving", "n1", cpu="3")
            .terminating()
            .set(
                "status.conditions",
                [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
            )
            .obj(),
            make_victim("low", "n2", cpu="3").obj(),
        ),
    )
    tainted = FakeFilter(
        "Taints",
        reject={"n1"},
        code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        reason="node(s) had untolerated taint(s)",
    )
    result = post_filter_result(
        run_preemption(cluster, make_preemptor().nominated("n1").build(), tainted, CpuFit())
    )
    assert result.nominated_node == "n2"
    assert [victim.name for victim in result.victims] == ["low"]


# ---------------------------------------------------------------------- messages


def test_no_victims_message() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2", "n3"),
        pods=tuple(make_victim(f"big{i}", f"n{i}", cpu="3", priority=10).obj() for i in (1, 2, 3)),
    )
    decision = run_preemption(cluster, make_preemptor().build())
    assert decision.message == (
        "0/3 nodes are available: 3 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    assert post_filter_result(decision).nominated_node == ""
    assert post_filter_result(decision).status.code is Code.UNSCHEDULABLE


def test_not_helpful_and_no_victims_mixed_message() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2", "n3"),
        pods=tuple(make_victim(f"big{i}", f"n{i}", cpu="3", priority=10).obj() for i in (1, 2, 3)),
    )
    tainted = FakeFilter(
        "Taints",
        reject={"n1"},
        code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        reason="node(s) had untolerated taint(s)",
    )
    decision = run_preemption(cluster, make_preemptor().build(), tainted, CpuFit())
    assert decision.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_preemption_not_helpful_when_every_node_is_unresolvable() -> None:
    cluster = cluster_of(*cpu_nodes("n1", "n2"), pods=(make_victim("low", "n1").obj(),))
    tainted = FakeFilter(
        "Taints",
        reject={"n1", "n2"},
        code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        reason="node(s) had untolerated taint(s)",
    )
    decision = run_preemption(cluster, make_preemptor().build(), tainted)
    assert decision.message == (
        "0/2 nodes are available: 2 node(s) had untolerated taint(s). "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert post_filter_result(decision).nominated_node == ""


def test_node_still_failing_after_evicting_everything_reports_its_filter_status() -> None:
    # n1 is too small even when empty; n2 holds only a higher-priority pod.
    cluster = cluster_of(
        make_node("n1").capacity(cpu="1", pods=110).obj(),
        *cpu_nodes("n2"),
        pods=(
            make_victim("low", "n1", cpu="500m").obj(),
            make_victim("big", "n2", cpu="3", priority=20).obj(),
        ),
    )
    decision = run_preemption(cluster, make_preemptor().build())
    assert decision.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod."
    )


def test_success_message_and_result() -> None:
    cluster = cluster_of(*cpu_nodes("n1"), pods=(make_victim("low", "n1", cpu="3").obj(),))
    decision = run_preemption(cluster, make_preemptor().build())
    assert decision.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: found a potential placement for pod on node n1, preempting 1 victims"
    )
    result = post_filter_result(decision)
    assert result.status.code is Code.SUCCESS
    assert result.nominated_node == "n1"
    assert [victim.uid for victim in result.victims] == ["low"]


def test_pre_filter_unresolvable_rejection_is_not_helpful_everywhere() -> None:
    cluster = cluster_of(*cpu_nodes("n1", "n2"), pods=(make_victim("low", "n1", cpu="3").obj(),))
    pre = FakePreFilter(
        "Pre",
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("pod has unbound immediate PersistentVolumeClaims",),
        ),
    )
    decision = run_preemption(cluster, make_preemptor().build(), pre, CpuFit())
    assert decision.message == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_pre_filter_unschedulable_rejection_makes_every_node_a_potential_node() -> None:
    cluster = cluster_of(*cpu_nodes("n1", "n2"), pods=(make_victim("low", "n1", cpu="3").obj(),))
    pre = FakePreFilter("Pre", Status(Code.UNSCHEDULABLE, ("waiting for something",)))
    decision = run_preemption(cluster, make_preemptor().build(), pre, CpuFit())
    # Every node was tried: n1's victim does not change the PreFilter verdict, n2 has no victims.
    assert decision.message == (
        "0/2 nodes are available: waiting for something. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 waiting for something."
    )


def test_nodes_outside_a_pre_filter_result_are_not_helped() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2", "n3"),
        pods=tuple(make_victim(f"big{i}", f"n{i}", cpu="3", priority=10).obj() for i in (1, 2, 3)),
    )
    narrow = FakePreFilter("Narrow", node_names=frozenset({"n1"}))
    decision = run_preemption(cluster, make_preemptor().build(), narrow, CpuFit())
    assert decision.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [Narrow]. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )


@dataclass
class ErrorsWhenEmpty:
    """Rejects busy nodes; errors on an empty one (only reachable in the dry run)."""

    name: str = "Flaky"

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        empty = state.cluster.pod_count[slots] == 0
        verdicts = reject_where(~empty, Code.UNSCHEDULABLE, "node(s) busy")
        codes = np.where(empty, np.int8(Code.ERROR), verdicts.codes).astype(np.int8)
        bits = np.ones(slots.size, dtype=np.uint64)
        return Verdicts(codes, bits, ("boom" if empty.all() else "node(s) busy",))


def test_dry_run_errors_without_candidates_become_an_error_status() -> None:
    cluster = cluster_of(
        *cpu_nodes("n1", "n2"), pods=(make_victim("a", "n1").obj(), make_victim("b", "n2").obj())
    )
    decision = run_preemption(cluster, make_preemptor().build(), ErrorsWhenEmpty())
    result = post_filter_result(decision)
    assert result.status.code is Code.ERROR
    # Both nodes failed with the same error; Go's aggregate prints it once.
    assert result.status.message == 'preemption: running "Flaky" filter plugin: boom'
    assert decision.message == (
        '0/2 nodes are available: 2 node(s) busy. preemption: running "Flaky" filter plugin: boom'
    )
