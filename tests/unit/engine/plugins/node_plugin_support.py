"""Helpers for the node-filter and score plugin tests: a cycle over a small cluster, verdicts by node name."""

from __future__ import annotations

from typing import Any

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import FilterPlugin, PreFilterPlugin
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

Judgement = tuple[Code, tuple[str, ...]]
PASS: Judgement = (Code.SUCCESS, ())


def cycle_over(*nodes: dict[str, Any], pods: tuple[dict[str, Any], ...] = ()) -> CycleState:
    cluster = ClusterState(capacity=4)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    for raw_pod in pods:
        cluster.add_pod(Pod.from_dict(raw_pod))
    return CycleState(cluster)


def all_slots(state: CycleState) -> NodeSlots:
    return np.sort(state.cluster.node_order())


def names_of(state: CycleState, slots: NodeSlots) -> list[str]:
    return [state.cluster.node_at(int(slot)).name for slot in slots]


def judge(plugin: Any, pod: Pod, state: CycleState) -> dict[str, Judgement]:
    """Run PreFilter (if any; a Skip or a rejection is returned under key "*") then Filter on every node."""
    if isinstance(plugin, PreFilterPlugin):
        result = plugin.pre_filter(state, pod)
        if result.status.is_skip:
            return {"*": (Code.SKIP, ())}
        if not result.status.is_success:
            return {"*": (result.status.code, result.status.reasons)}
    return filter_all(plugin, pod, state)


def filter_all(plugin: Any, pod: Pod, state: CycleState) -> dict[str, Judgement]:
    """Filter every node (no PreFilter): node name -> (code, reasons)."""
    assert isinstance(plugin, FilterPlugin)
    slots = all_slots(state)
    verdicts = plugin.filter(state, pod, slots)
    judged: dict[str, Judgement] = {}
    for index, name in enumerate(names_of(state, slots)):
        code = Code(int(verdicts.codes[index]))
        judged[name] = (code, verdicts.reasons_at(index) if code is not Code.SUCCESS else ())
    return judged
