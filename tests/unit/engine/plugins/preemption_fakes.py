"""Fakes and helpers for the DefaultPreemption tests: a cpu-only fit filter, a PreFilter with pod state."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from berth.engine.algorithm import SearchState, Unschedulable, schedule_one
from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.queries import PodClause, PodQuery
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import PostFilterResult, PreFilterResult
from berth.engine.framework.status import SUCCESS, Code
from berth.engine.framework.verdicts import Verdicts, reject_where
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_preemption import DefaultPreemption, parse_args
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.fakes import Built, framework_with

INSUFFICIENT_CPU = "Insufficient cpu"


@dataclass
class CpuFit:
    """Rejects nodes without enough free cpu (Unschedulable), reading the live cluster arrays."""

    name: str = "CpuFit"

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        cluster = state.cluster
        column = cluster.resource_column("cpu")
        assert column is not None
        free = cluster.allocatable[column, slots] - cluster.requested[column, slots]
        return reject_where(free < pod.requests.get("cpu", 0), Code.UNSCHEDULABLE, INSUFFICIENT_CPU)


APP_X = PodQuery(
    (
        PodClause(
            LabelSelector((Requirement("app", Operator.IN, frozenset({"x"})),)),
            frozenset({"default"}),
        ),
    )
)


@dataclass
class AvoidAppX:
    """PreFilter counts app=x pods per node (through the cluster's query index); Filter rejects nodes with any."""

    name: str = "AvoidAppX"

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        state.write(self.name, state.cluster.matching_pod_counts(APP_X).copy())
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        counts = state.read(self.name, np.ndarray)
        return reject_where(counts[slots] > 0, Code.UNSCHEDULABLE, "node(s) host app x")


def make_victim(name: str, node: str, *, cpu: str = "1", priority: int = 0) -> PodBuilder:
    return make_pod(name).uid(name).node(node).req(cpu=cpu).priority(priority)


def make_preemptor(cpu: str = "2", priority: int = 10) -> PodBuilder:
    return make_pod("preemptor").uid("preemptor").req(cpu=cpu).priority(priority)


def run_preemption(
    cluster: ClusterState,
    pod: Pod,
    *plugins: object,
    seed: int = 1,
    args: dict[str, Any] | None = None,
) -> Unschedulable:
    preemption = Built(
        names.DEFAULT_PREEMPTION,
        lambda handle: DefaultPreemption(parse_args(args), handle, rng=random.Random(seed)),
    )
    decision = schedule_one(
        framework_with(*(plugins or (CpuFit(),)), preemption),
        cluster,
        pod,
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Unschedulable), decision
    return decision


def post_filter_result(decision: Unschedulable) -> PostFilterResult:
    assert decision.post_filter is not None
    return decision.post_filter


def cpu_nodes(*names: str, cpu: str = "4") -> list[dict[str, Any]]:
    return [make_node(name).capacity(cpu=cpu, pods=110).obj() for name in names]


def make_pdb(
    name: str, allowed: int, disrupted: tuple[str, ...] = (), **labels: str
) -> PodDisruptionBudget:
    return PodDisruptionBudget.from_dict(
        {
            "metadata": {"namespace": "default", "name": name},
            "spec": {"selector": {"matchLabels": labels}},
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": dict.fromkeys(disrupted, "2024-01-01T00:00:00Z"),
            },
        }
    )
