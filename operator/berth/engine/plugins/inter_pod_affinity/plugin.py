"""The InterPodAffinity plugin: its args, its extension points and the events it listens to."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    Resource,
)
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import (
    PluginArgs,
    PreFilterResult,
    Scores,
)
from berth.engine.framework.status import SKIP, SUCCESS, Status
from berth.engine.framework.verdicts import Verdicts
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity.filtering import (
    FilterState,
    compute_filter_state,
    filter_can_skip,
    judge_nodes,
)
from berth.engine.plugins.inter_pod_affinity.queueing import (
    after_assigned_pod_change,
    after_node_change,
    after_target_pod_label_update,
)
from berth.engine.plugins.inter_pod_affinity.scoring import (
    ScoreState,
    compute_score_state,
    has_preferred_terms,
    normalize_min_max,
    raw_scores,
)

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100

_FILTER_STATE_KEY = f"PreFilter{names.INTER_POD_AFFINITY}"
_SCORE_STATE_KEY = f"PreScore{names.INTER_POD_AFFINITY}"
_ARG_FIELDS = frozenset(
    ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind")
)


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False


class InterPodAffinity:
    """Required pod (anti-)affinity as a filter, preferred terms and symmetry as a score."""

    def __init__(self, args: InterPodAffinityArgs) -> None:
        self.args = args

    @property
    def name(self) -> str:
        return names.INTER_POD_AFFINITY

    # ------------------------------------------------------------------ filter

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        computed = compute_filter_state(state.cluster, pod)
        if filter_can_skip(computed, pod):
            return PreFilterResult(SKIP)
        state.write(_FILTER_STATE_KEY, computed)
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        return judge_nodes(state.read(_FILTER_STATE_KEY, FilterState), slots)

    # ------------------------------------------------------------------ score

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        if self.args.ignore_preferred_terms_of_existing_pods and not has_preferred_terms(pod):
            return SKIP
        computed = compute_score_state(
            state.cluster, pod, hard_pod_affinity_weight=self.args.hard_pod_affinity_weight
        )
        if not computed.points:
            return SKIP
        state.write(_SCORE_STATE_KEY, computed)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        return raw_scores(state.read(_SCORE_STATE_KEY, ScoreState), slots)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        computed = state.read(_SCORE_STATE_KEY, ScoreState)
        if not computed.points:
            return scores
        return normalize_min_max(np.asarray(scores, dtype=np.int64))

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    Resource.ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE
                ),
                after_assigned_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_LABEL),
                after_target_pod_label_update,
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
                after_node_change,
            ),
        ]


def parse_args(args: PluginArgs | None) -> InterPodAffinityArgs:
    """Validate and default InterPodAffinityArgs (camelCase keys as in KubeSchedulerConfiguration)."""
    plugin = names.INTER_POD_AFFINITY
    if args is None:
        return InterPodAffinityArgs()
    unknown = sorted(set(args) - _ARG_FIELDS)
    if unknown:
        raise InvalidPluginArgsError(plugin, unknown[0], "unknown field")
    weight = args.get("hardPodAffinityWeight")
    if weight is None:
        weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    elif isinstance(weight, bool) or not isinstance(weight, int):
        raise InvalidPluginArgsError(
            plugin, "hardPodAffinityWeight", f"must be an integer, got {weight!r}"
        )
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise InvalidPluginArgsError(
            plugin,
            "hardPodAffinityWeight",
            f"{weight}: not in valid range "
            f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]",
        )
    ignore = args.get("ignorePreferredTermsOfExistingPods")
    if ignore is None:
        ignore = False
    elif not isinstance(ignore, bool):
        raise InvalidPluginArgsError(
            plugin, "ignorePreferredTermsOfExistingPods", f"must be a boolean, got {ignore!r}"
        )
    return InterPodAffinityArgs(weight, ignore)


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> InterPodAffinity:
    return InterPodAffinity(parse_args(args))
