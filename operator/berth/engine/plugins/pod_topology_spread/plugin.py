"""The PodTopologySpread plugin: wiring of constraints, filtering, scoring and requeue hints."""

from __future__ import annotations

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult, Scores
from berth.engine.framework.names import POD_TOPOLOGY_SPREAD
from berth.engine.framework.status import SKIP, SUCCESS, Status
from berth.engine.framework.verdicts import Verdicts
from berth.engine.model.labels import LabelSelector
from berth.engine.model.node import Node
from berth.engine.model.pod import (
    InclusionPolicy,
    Pod,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)
from berth.engine.plugins.pod_topology_spread.constraints import (
    DefaultSelectors,
    SpreadArgs,
    constraints_for,
    parse_args,
)
from berth.engine.plugins.pod_topology_spread.counting import selector_matches
from berth.engine.plugins.pod_topology_spread.filtering import (
    PreFilterState,
    count_domains,
    judge_nodes,
)
from berth.engine.plugins.pod_topology_spread.scoring import (
    PreScoreState,
    count_for_scoring,
    normalize,
    raw_scores,
)

PRE_FILTER_STATE_KEY = "PreFilter" + POD_TOPOLOGY_SPREAD
PRE_SCORE_STATE_KEY = "PreScore" + POD_TOPOLOGY_SPREAD


class PodTopologySpread:
    """Spreads pods matching a selector evenly over topology domains (zones, hosts, ...)."""

    name = POD_TOPOLOGY_SPREAD

    def __init__(self, args: SpreadArgs) -> None:
        self.args = args
        self._default_selectors = DefaultSelectors()
        # The cluster seen in the last cycle: queueing hints need the workloads
        # that give a pod its default constraints (kube-scheduler uses listers).
        self._cluster: ClusterState | None = None

    def _constraints(
        self, pod: Pod, action: UnsatisfiableAction, cluster: ClusterState | None
    ) -> tuple[TopologySpreadConstraint, ...]:
        def selector_of(pod: Pod) -> LabelSelector:
            # Only reached for pods that rely on default constraints.
            assert cluster is not None
            return self._default_selectors.selector_for(pod, cluster)

        return constraints_for(pod, action, self.args, selector_of)

    # ------------------------------------------------------------------ filtering

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        self._cluster = state.cluster
        constraints = self._constraints(pod, UnsatisfiableAction.DO_NOT_SCHEDULE, state.cluster)
        if not constraints:
            return PreFilterResult(SKIP)
        state.write(PRE_FILTER_STATE_KEY, count_domains(state.cluster, pod, constraints))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        return judge_nodes(state.read(PRE_FILTER_STATE_KEY, PreFilterState), slots)

    # ------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        self._cluster = state.cluster
        if state.cluster.node_count == 0:
            return SKIP
        constraints = self._constraints(pod, UnsatisfiableAction.SCHEDULE_ANYWAY, state.cluster)
        if not constraints:
            return SKIP
        # Nodes lacking a topology key are ignored unless the constraints are the
        # system defaults, so that nodes without a zone still spread by hostname.
        require_all = bool(pod.spread_constraints) or not self.args.system_defaulted
        state.write(
            PRE_SCORE_STATE_KEY,
            count_for_scoring(
                state.cluster, pod, constraints, slots, require_all_topologies=require_all
            ),
        )
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        return raw_scores(state.read(PRE_SCORE_STATE_KEY, PreScoreState), slots)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        return normalize(state.read(PRE_SCORE_STATE_KEY, PreScoreState), slots, scores)

    # ------------------------------------------------------------------ requeueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    Resource.ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE
                ),
                self.hint_after_assigned_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    Resource.TARGET_POD, Action.UPDATE_POD_TOLERATIONS | Action.UPDATE_POD_LABEL
                ),
                self.hint_after_target_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    Resource.NODE,
                    Action.ADD
                    | Action.DELETE
                    | Action.UPDATE_NODE_LABEL
                    | Action.UPDATE_NODE_TAINT,
                ),
                self.hint_after_node_change,
            ),
        ]

    def hard_constraints(self, pod: Pod) -> tuple[TopologySpreadConstraint, ...] | None:
        """The pod's DoNotSchedule constraints, or None when they cannot be known here."""
        needs_workloads = not pod.spread_constraints and any(
            c.when_unsatisfiable is UnsatisfiableAction.DO_NOT_SCHEDULE
            for c in self.args.default_constraints
        )
        if needs_workloads and self._cluster is None:
            return None
        return self._constraints(pod, UnsatisfiableAction.DO_NOT_SCHEDULE, self._cluster)

    def hint_after_assigned_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if not _pod_or_none(old) or not _pod_or_none(new) or (old is None and new is None):
            return QueueingHint.QUEUE
        for changed in (new, old):
            if isinstance(changed, Pod) and not _involved_in_spreading(changed, pod):
                return QueueingHint.SKIP
        constraints = self.hard_constraints(pod)
        if constraints is None:
            return QueueingHint.QUEUE
        if isinstance(old, Pod) and isinstance(new, Pod):
            return _after_label_change(old, new, constraints)
        changed = new if isinstance(new, Pod) else old
        assert isinstance(changed, Pod)
        if any(selector_matches(c.selector, changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def hint_after_target_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if not isinstance(old, Pod) or not isinstance(new, Pod):
            return QueueingHint.QUEUE
        constraints = self.hard_constraints(pod)
        if constraints is None:
            return QueueingHint.QUEUE
        if old.tolerations != new.tolerations and any(
            c.node_taints_policy is InclusionPolicy.HONOR for c in constraints
        ):
            return QueueingHint.QUEUE
        return _after_label_change(old, new, constraints)

    def hint_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if not _node_or_none(old) or not _node_or_none(new) or (old is None and new is None):
            return QueueingHint.QUEUE
        constraints = self.hard_constraints(pod)
        if constraints is None:
            return QueueingHint.QUEUE
        old_matching = isinstance(old, Node) and _has_topology_keys(old, constraints)
        new_matching = isinstance(new, Node) and _has_topology_keys(new, constraints)
        if isinstance(old, Node) and isinstance(new, Node):
            if old_matching != new_matching:
                return QueueingHint.QUEUE
            if new_matching and (
                any(
                    old.labels.get(c.topology_key, "") != new.labels.get(c.topology_key, "")
                    for c in constraints
                )
                or old.taints != new.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if isinstance(new, Node):
            return QueueingHint.QUEUE if new_matching else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_matching else QueueingHint.SKIP


def _pod_or_none(value: object) -> bool:
    return value is None or isinstance(value, Pod)


def _node_or_none(value: object) -> bool:
    return value is None or isinstance(value, Node)


def _involved_in_spreading(changed: Pod, pod_with_spreading: Pod) -> bool:
    """A pod counts for spreading only once placed (or nominated), and only in the same namespace."""
    if not changed.node_name and not changed.nominated_node_name:
        return False
    return changed.namespace == pod_with_spreading.namespace


def _has_topology_keys(node: Node, constraints: tuple[TopologySpreadConstraint, ...]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


def _after_label_change(
    old: Pod, new: Pod, constraints: tuple[TopologySpreadConstraint, ...]
) -> QueueingHint:
    if old.labels == new.labels:
        return QueueingHint.SKIP
    for constraint in constraints:
        if selector_matches(constraint.selector, old.labels) != selector_matches(
            constraint.selector, new.labels
        ):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> PodTopologySpread:
    """Build the plugin from PodTopologySpreadArgs (`defaultConstraints`, `defaultingType`)."""
    return PodTopologySpread(parse_args(args))
