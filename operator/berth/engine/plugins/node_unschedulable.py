"""NodeUnschedulable: cordoned nodes (`spec.unschedulable`) take only pods tolerating the unschedulable taint."""

from __future__ import annotations

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
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.node import Node, Taint, TaintEffect
from berth.engine.model.pod import Pod, tolerates_taint

__all__ = ["REASON", "UNSCHEDULABLE_TAINT", "NodeUnschedulable", "new_plugin"]

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", TaintEffect.NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    return tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT)


def _node_became_schedulable(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, Node) or new.unschedulable:
        return QueueingHint.SKIP
    if old is None or (isinstance(old, Node) and old.unschedulable):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _pod_now_tolerates(pod: Pod, old: object, new: object) -> QueueingHint:
    # Registered on every pod's update; only the rejected pod's own new toleration helps it.
    if isinstance(new, Pod) and new.uid == pod.uid and tolerates_unschedulable(new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class NodeUnschedulable:
    name = names.NODE_UNSCHEDULABLE

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        if state.cluster.cordoned_nodes == 0 or tolerates_unschedulable(pod):
            return accept_all(slots.size)
        cordoned = state.cluster.unschedulable[slots]
        return reject_where(cordoned, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # kube-scheduler reports an uncordon as UpdateNodeTaint; we also accept our own
        # UPDATE_NODE_UNSCHEDULABLE so the queue may report it either way.
        node_changes = Action.ADD | Action.UPDATE_NODE_TAINT | Action.UPDATE_NODE_UNSCHEDULABLE
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, node_changes), _node_became_schedulable
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS), _pod_now_tolerates
            ),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeUnschedulable:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return NodeUnschedulable()
