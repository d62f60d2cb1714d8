"""NodeDeclaredFeatures: a pod relying on a newer kubelet behaviour runs only where it is declared.

Kubelets list the features they implement in `node.status.declaredFeatures`; a pod whose spec
needs one (see `berth.engine.model.node_features`) is kept off nodes that do not declare it,
so a cluster mid-upgrade does not start it on a kubelet too old to honour it. A GA plugin in
kube-scheduler v1.37's default profile; pods needing no feature skip it entirely.
"""

from __future__ import annotations

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
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

__all__ = ["REASON", "NodeDeclaredFeatures", "new_plugin"]

REASON = "node(s) didn't match Pod's required features"


@dataclass(frozen=True, slots=True)
class _Required:
    features: frozenset[str]


def _node_declares_other_features(pod: Pod, old: object, new: object) -> QueueingHint:
    if isinstance(old, Node) and isinstance(new, Node):
        same = old.declared_features == new.declared_features
        return QueueingHint.SKIP if same else QueueingHint.QUEUE
    return QueueingHint.QUEUE


def _pod_needs_other_features(pod: Pod, old: object, new: object) -> QueueingHint:
    if isinstance(old, Pod) and isinstance(new, Pod):
        same = old.required_node_features == new.required_node_features
        return QueueingHint.SKIP if same else QueueingHint.QUEUE
    return QueueingHint.QUEUE


class NodeDeclaredFeatures:
    name = names.NODE_DECLARED_FEATURES

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        if not pod.required_node_features:
            return PreFilterResult(SKIP)
        state.write(self.name, _Required(pod.required_node_features))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        prepared = state.get(self.name, _Required)
        required = prepared.features if prepared is not None else pod.required_node_features
        if not required:
            return accept_all(slots.size)
        node_at = state.cluster.node_at
        lacking = np.fromiter(
            (not required.issubset(node_at(slot).declared_features) for slot in slots.tolist()),
            dtype=bool,
            count=slots.size,
        )
        return reject_where(lacking, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_changes = Action.ADD | Action.UPDATE_NODE_DECLARED_FEATURE
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, node_changes), _node_declares_other_features
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.TARGET_POD, Action.UPDATE), _pod_needs_other_features
            ),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeDeclaredFeatures:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return NodeDeclaredFeatures()
