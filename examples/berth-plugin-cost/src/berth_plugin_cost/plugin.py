"""NodeCost: a Score plugin that prefers the nodes that cost less.

Each node says what it costs in a label (by default `example.berth.dev/cost`: a whole
number such as a price per hour in cents). Score returns each candidate's cost;
NormalizeScore turns costs into 0..100, cheapest highest. The profile's weight for
NodeCost decides how much cost counts against the other scores (spreading, fit, ...).

Both run once per pod over all candidate nodes at once: the cluster keeps the label as a
column of value ids per node row, and the plugin keeps the cost of each distinct value,
so no decision parses a label or loops over nodes in Python.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import MAX_NODE_SCORE, PluginArgs, Scores
from berth.engine.model.pod import Pod
from berth.engine.scoring.normalize import go_div, normalize_to_max
from berth_plugin_cost.args import MAX_COST, NAME, NodeCostArgs, Normalization, parse_args

__all__ = ["NAME", "UNKNOWN", "NodeCost", "costs_of", "new_plugin", "normalized", "parse_cost"]

UNKNOWN = -1  # a node without a readable cost label


def parse_cost(value: str) -> int:
    """A label value's cost: a whole number from 0 to MAX_COST, else UNKNOWN."""
    if not (value.isascii() and value.isdigit()):
        return UNKNOWN
    cost = int(value)
    return cost if cost <= MAX_COST else UNKNOWN


def costs_of(
    value_ids: NDArray[np.int32], table: NDArray[np.int64], default_cost: int | None
) -> Scores:
    """Each node's cost from its label value id; unknown ones cost `default_cost`, or (None)
    as much as the dearest node with a known cost."""
    # `table` ends with UNKNOWN, which is what a missing label's id (-1) reads.
    costs = table[value_ids]
    unknown = costs == UNKNOWN
    if not unknown.any():
        return costs
    if default_cost is None:
        default_cost = int(costs[~unknown].max()) if not unknown.all() else 0
    return np.where(unknown, default_cost, costs).astype(np.int64)


def normalized(costs: Scores, normalization: Normalization) -> Scores:
    """Costs as scores from 0 to 100, the cheapest highest."""
    if costs.size == 0:
        return costs
    if normalization is Normalization.PROPORTIONAL:
        return normalize_to_max(costs, reverse=True)
    cheapest, dearest = int(costs.min()), int(costs.max())
    if cheapest == dearest:
        return np.full_like(costs, MAX_NODE_SCORE)
    return go_div(MAX_NODE_SCORE * (dearest - costs), dearest - cheapest)


class _CostTable:
    """The cost of each value id of the label, grown as the cluster meets new values: each
    distinct value is parsed once, not once per node per pod."""

    def __init__(self) -> None:
        self._vocabulary: list[str] | None = None
        self._table: NDArray[np.int64] = np.array([UNKNOWN], dtype=np.int64)

    def of(self, vocabulary: list[str]) -> NDArray[np.int64]:
        known = self._table.size - 1
        if vocabulary is not self._vocabulary:  # another cluster (or the first call)
            self._vocabulary, known = vocabulary, 0
        if len(vocabulary) != known:
            parsed = np.fromiter(
                (parse_cost(value) for value in vocabulary[known:]), dtype=np.int64
            )
            self._table = np.concatenate((self._table[:known], parsed, [UNKNOWN]))
        return self._table


class NodeCost:
    name = NAME

    def __init__(self, args: NodeCostArgs) -> None:
        self.args = args
        self._costs = _CostTable()

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        column = state.cluster.label_column(self.args.label_key)
        table = self._costs.of(column.vocabulary)
        return costs_of(column.values[slots], table, self.args.default_cost)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        return normalized(scores, self.args.normalization)


def new_plugin(args: PluginArgs | None, handle: Handle) -> NodeCost:
    """The factory Berth calls (entry point `NodeCost` of the group `berth.plugins`).

    Args are validated here, once per profile; a bad one makes the profile invalid with
    an error naming the field. The handle is not needed: cost is all in the node table.
    """
    return NodeCost(parse_args(args))
