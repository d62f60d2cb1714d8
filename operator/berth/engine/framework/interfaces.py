"""One Protocol per extension point; a plugin implements only the points it needs.

Filter and Score are batch operations: a plugin judges every candidate node of
one pod at once, over the rows (`NodeSlots`) of the cluster's node table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.status import Code, Status
from berth.engine.framework.verdicts import Verdicts
from berth.engine.model.pod import Pod

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

Scores = NDArray[np.int64]


class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """A PreFilter's status and, optionally, the only node names worth filtering."""

    status: Status
    node_names: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    status: Status
    nominated_node: str | None = None  # "" clears an existing nomination
    victims: tuple[Pod, ...] = ()


@dataclass(frozen=True, slots=True)
class FilterFailures:
    """The nodes one Filter plugin rejected in one batch, kept as arrays until a message needs them."""

    plugin: str
    slots: NodeSlots
    codes: NDArray[np.int8]
    reason_bits: NDArray[np.uint64]
    reasons: tuple[str, ...]

    def status_at(self, index: int) -> Status:
        bits = int(self.reason_bits[index])
        chosen = tuple(r for bit, r in enumerate(self.reasons) if bits >> bit & 1)
        return Status(Code(int(self.codes[index])), chosen, self.plugin)


@dataclass(slots=True)
class FilterDiagnosis:
    """Why nodes failed in this cycle: what PostFilter, the message and the queue read."""

    node_count: int
    failures: list[FilterFailures] = field(default_factory=list)
    absent_status: Status | None = None  # for nodes a PreFilter rejection or result excluded
    pre_filter_message: str = ""
    post_filter_message: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)

    @property
    def explicit_count(self) -> int:
        return sum(len(batch.slots) for batch in self.failures)

    def node_statuses(self) -> dict[int, Status]:
        statuses: dict[int, Status] = {}
        for batch in self.failures:
            for index, slot in enumerate(batch.slots.tolist()):
                statuses[slot] = batch.status_at(index)
        return statuses

    def status_of(self, slot: int) -> Status | None:
        for batch in self.failures:
            hits = np.flatnonzero(batch.slots == slot)
            if hits.size:
                return batch.status_at(int(hits[0]))
        return self.absent_status

    def record_plugin(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejection:
            self.unschedulable_plugins.add(status.plugin)
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Each scoring plugin's scores over the same nodes: rows follow `plugins`, columns the nodes.

    `raw` is what Score returned, `normalized` what NormalizeScore made of it (the same when
    the plugin does not normalize); the weighted sum of `normalized` is the node's total.
    """

    plugins: tuple[str, ...]
    weights: NDArray[np.int64]
    raw: NDArray[np.int64]
    normalized: NDArray[np.int64]

    @property
    def weighted(self) -> NDArray[np.int64]:
        weighted: NDArray[np.int64] = self.normalized * self.weights[:, np.newaxis]
        return weighted

    @property
    def totals(self) -> Scores:
        totals: Scores = self.weights @ self.normalized
        return totals


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, pod: Pod, queued_at: float) -> tuple[Any, ...]:
        """Smaller keys pop first."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores: ...


@runtime_checkable
class NormalizeScorePlugin(Plugin, Protocol):
    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, Wait (with a timeout in seconds) or a rejection."""
        ...


# The binding cycle runs after the decision, one task per pod, and may wait on the
# API (volumes to bind, devices to allocate, the Binding itself): PreBind and Bind
# are coroutines. They reach the API only through ports on their handle.


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success when PreBind will do work for this pod, Skip when it will not (no I/O here)."""
        ...

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind `pod` to `node_name`; Skip hands the pod to the next bind plugin."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Informational: the pod is bound."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


PluginArgs = Mapping[str, Any]
