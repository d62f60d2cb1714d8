"""NodeName: a pod that already names its node (`spec.nodeName`) may only go there."""

from __future__ import annotations

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, ClusterEventWithHint, Resource
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult
from berth.engine.framework.status import SUCCESS, Code
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod

__all__ = ["REASON", "NodeName", "new_plugin"]

REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = names.NODE_NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        # v1.37 narrows the node list to the named node (the others become "absent" nodes).
        if pod.node_name:
            return PreFilterResult(SUCCESS, frozenset((pod.node_name,)))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        if not pod.node_name:
            return accept_all(slots.size)
        wanted = state.cluster.slot_of(pod.node_name)
        mask = np.ones(slots.size, dtype=bool) if wanted is None else slots != wanted
        return reject_where(mask, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, Action.ADD))]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeName:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return NodeName()
