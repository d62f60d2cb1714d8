"""TaintToleration: NoSchedule/NoExecute taints a pod does not tolerate keep it off a node;
untolerated PreferNoSchedule taints make a node score lower.

Nodes are judged per distinct taint set (`berth.engine.cluster.node_index.TaintGroups`; the
filter's check is `berth.engine.nodematch.untolerated_taint_mask`, shared with
PodTopologySpread's `nodeTaintsPolicy`), so the work per decision is one array lookup plus a
little per new taint set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.cluster.node_index import GroupAnswers, TaintSet, taint_groups
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
from berth.engine.framework.interfaces import MAX_NODE_SCORE, PluginArgs, Scores
from berth.engine.framework.status import SUCCESS, Code, Status
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.node import Node, TaintEffect
from berth.engine.model.pod import Pod, Toleration, tolerates_taint
from berth.engine.nodematch import first_untolerated_taint, untolerated_taint_mask
from berth.engine.scoring.normalize import normalize_to_max

__all__ = ["REASON", "TaintToleration", "new_plugin"]

REASON = "node(s) had untolerated taint(s)"
"""v1.35+ wording (the taint itself is only logged)."""


def count_untolerated_preferences(taints: TaintSet, tolerations: tuple[Toleration, ...]) -> int:
    """PreferNoSchedule taints not tolerated by `tolerations`."""
    return sum(
        1
        for taint in taints
        if taint.effect is TaintEffect.PREFER_NO_SCHEDULE
        and not tolerates_taint(tolerations, taint)
    )


def preference_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """The tolerations that can matter for PreferNoSchedule taints (effect empty or that one)."""
    return tuple(
        t for t in tolerations if t.effect is None or t.effect is TaintEffect.PREFER_NO_SCHEDULE
    )


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    untolerated: GroupAnswers  # PreferNoSchedule taints per taint group the pod does not tolerate


def _node_now_tolerated(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    was_untolerated = (
        not isinstance(old, Node)
        or first_untolerated_taint(old.taints, pod.tolerations) is not None
    )
    is_untolerated = first_untolerated_taint(new.taints, pod.tolerations) is not None
    return QueueingHint.QUEUE if was_untolerated and not is_untolerated else QueueingHint.SKIP


def _own_toleration_added(pod: Pod, old: object, new: object) -> QueueingHint:
    # Registered on every pod's update; only the rejected pod's own change can help it.
    return QueueingHint.QUEUE if isinstance(new, Pod) and new.uid == pod.uid else QueueingHint.SKIP


class TaintToleration:
    name = names.TAINT_TOLERATION

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        rejected = untolerated_taint_mask(state.cluster, pod.tolerations, slots)
        if rejected is None:  # the pod tolerates every taint set in the cluster
            return accept_all(slots.size)
        return reject_where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def _untolerated_preferences(self, state: CycleState, pod: Pod) -> GroupAnswers:
        tolerations = preference_tolerations(pod.tolerations)
        return taint_groups(state.cluster).per_group(
            ("score", tolerations),
            lambda taints: count_untolerated_preferences(taints, tolerations),
        )

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        state.write(self.name, _PreScoreState(self._untolerated_preferences(state, pod)))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        prepared = state.get(self.name, _PreScoreState)
        counts = (
            prepared.untolerated
            if prepared is not None
            else self._untolerated_preferences(state, pod)
        )
        if not counts.any:
            return np.zeros(slots.size, dtype=np.int64)
        groups = taint_groups(state.cluster)
        return counts.values[groups.of_slot[slots]]

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        prepared = state.get(self.name, _PreScoreState)
        if prepared is not None and not prepared.untolerated.any:
            # No node has a PreferNoSchedule taint against the pod: all score best.
            return np.full(slots.size, MAX_NODE_SCORE, dtype=np.int64)
        return normalize_to_max(scores, reverse=True)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_TAINT),
                _node_now_tolerated,
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS), _own_toleration_added
            ),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> TaintToleration:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return TaintToleration()
