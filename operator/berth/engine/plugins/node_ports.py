"""NodePorts: a pod's host ports must be free on the node (same protocol and port, overlapping IP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult
from berth.engine.framework.status import SKIP, SUCCESS, Code
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import HostPort, Pod

__all__ = ["REASON", "NodePorts", "new_plugin", "ports_conflict"]

REASON = "node(s) didn't have free ports for the requested pod ports"


def ports_conflict(wanted: Sequence[HostPort], used: Sequence[HostPort]) -> bool:
    """Some wanted port is taken: same protocol and port, and one IP is a wildcard or both equal."""
    return bool(used) and any(w.conflicts_with(u) for w in wanted for u in used)


@dataclass(frozen=True, slots=True)
class _Wanted:
    ports: tuple[HostPort, ...]


def _deleted_pod_frees_a_port(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.SKIP
    if not old.host_ports or not ports_conflict(pod.host_ports, old.host_ports):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


class NodePorts:
    name = names.NODE_PORTS

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        if not pod.host_ports:
            return PreFilterResult(SKIP)
        state.write(self.name, _Wanted(pod.host_ports))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        prepared = state.get(self.name, _Wanted)
        wanted = prepared.ports if prepared is not None else pod.host_ports
        if not wanted:
            return accept_all(slots.size)
        ports_on = state.cluster.host_ports_on
        # Most nodes use no host ports at all, so the per-node test is usually one
        # empty-list check; pods that want host ports are mostly DaemonSet pods whose
        # node affinity already narrowed the candidates to a single node.
        taken = np.fromiter(
            (ports_conflict(wanted, ports_on(slot)) for slot in slots.tolist()),
            dtype=bool,
            count=slots.size,
        )
        return reject_where(taken, Code.UNSCHEDULABLE, REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE), _deleted_pod_frees_a_port
            ),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, Action.ADD)),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodePorts:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return NodePorts()
