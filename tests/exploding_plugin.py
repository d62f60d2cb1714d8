"""A plugin, as an out-of-tree package would ship it, that raises wherever it is told to.

Args: `{"at": "<extension point>"}`; it raises there only for pods labelled `explode` (at
`eventsToRegister`, asked when the profile is built, always), and
otherwise stays out of the way (filters nothing out, scores 0, skips binding), so that a
test can show the one pod it breaks costs one attempt while the others schedule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, ClusterEventWithHint, Resource
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import (
    FilterDiagnosis,
    PluginArgs,
    PostFilterResult,
    PreFilterResult,
    Scores,
)
from berth.engine.framework.status import SKIP, SUCCESS, Status, unschedulable
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod

NAME = "Exploding"
LABEL = "explode"
POINTS = (
    "eventsToRegister",  # asked once, when the profile is built
    "preEnqueue",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "normalizeScore",
    "reserve",
    "unreserve",
    "permit",
    "preBindPreFlight",
    "preBind",
    "bind",
    "postBind",
)


class Exploded(RuntimeError):
    pass


class Exploding:
    name = NAME

    def __init__(self, at: str) -> None:
        self.at = at

    def _maybe_explode(self, point: str, pod: Pod) -> None:
        if point == self.at and LABEL in pod.labels:
            raise Exploded(f"{NAME} blew up at {point}")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if self.at == "eventsToRegister":
            raise Exploded(f"{NAME} blew up at eventsToRegister")
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, Action.ADD))]

    def pre_enqueue(self, pod: Pod) -> Status:
        self._maybe_explode("preEnqueue", pod)
        return SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        self._maybe_explode("preFilter", pod)
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        self._maybe_explode("filter", pod)
        return accept_all(slots.size)

    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult:
        self._maybe_explode("postFilter", pod)
        return PostFilterResult(unschedulable("nothing to do"))

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        self._maybe_explode("preScore", pod)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        self._maybe_explode("score", pod)
        return np.zeros(slots.size, dtype=np.int64)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        self._maybe_explode("normalizeScore", pod)
        return scores

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._maybe_explode("reserve", pod)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._maybe_explode("unreserve", pod)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        self._maybe_explode("permit", pod)
        return SUCCESS, 0.0

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._maybe_explode("preBindPreFlight", pod)
        return SUCCESS

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._maybe_explode("preBind", pod)
        return SUCCESS

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._maybe_explode("bind", pod)
        return SKIP

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._maybe_explode("postBind", pod)


def new_plugin(args: PluginArgs | None, handle: Handle) -> Exploding:
    given: dict[str, Any] = dict(args or {})
    if given.get("crash"):
        # Not the InvalidPluginArgsError a plugin should raise: what a careless factory does.
        raise KeyError("crash")
    at = given.get("at", "")
    if at not in POINTS:
        raise InvalidPluginArgsError(NAME, "at", f"must be one of {', '.join(POINTS)}; got {at!r}")
    return Exploding(at)


NOT_A_FACTORY = 42


def new_plugin_without_handle(args: PluginArgs | None) -> Exploding:
    return Exploding("")
