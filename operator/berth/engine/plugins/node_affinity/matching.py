"""Node selector terms evaluated over many node rows at once, through the cluster's label columns.

Each requirement becomes one boolean mask over the judged slots: In/NotIn compare value
ids, Exists/DoesNotExist test for `MISSING`, Gt/Lt look the integer meaning of each label
value up once per distinct value, and `metadata.name` fields compare slot numbers.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.per_cluster import PerCluster
from berth.engine.cluster.state import LabelColumn
from berth.engine.model.labels import (
    FieldRequirement,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    Requirement,
    parse_go_int64,
)
from berth.engine.model.pod import PreferredNodeTerm

Mask = NDArray[np.bool_]

__all__ = [
    "label_selector_mask",
    "node_selector_mask",
    "preferred_weights",
    "term_mask",
]


class _IntegerLabels:
    """The int64 meaning of each value in one label column's vocabulary (kept as it grows)."""

    def __init__(self) -> None:
        self.numbers = np.zeros(0, dtype=np.int64)
        self.valid = np.zeros(0, dtype=bool)

    def update(self, column: LabelColumn) -> None:
        known = self.numbers.size
        if known == len(column.vocabulary):
            return
        parsed = [parse_go_int64(value) for value in column.vocabulary[known:]]
        self.numbers = np.concatenate(
            [self.numbers, np.asarray([p or 0 for p in parsed], dtype=np.int64)]
        )
        self.valid = np.concatenate([self.valid, np.asarray([p is not None for p in parsed])])


_INTEGER_LABELS: PerCluster[dict[str, _IntegerLabels]] = PerCluster(dict)


def _integer_labels(cluster: ClusterState, key: str, column: LabelColumn) -> _IntegerLabels:
    per_key = _INTEGER_LABELS.of(cluster)
    numbers = per_key.get(key)
    if numbers is None:
        numbers = per_key[key] = _IntegerLabels()
    numbers.update(column)
    return numbers


def _requirement_mask(cluster: ClusterState, requirement: Requirement, slots: NodeSlots) -> Mask:
    column = cluster.label_column(requirement.key)
    values = column.values[slots]
    operator = requirement.operator
    if operator is Operator.EXISTS:
        return values >= 0
    if operator is Operator.DOES_NOT_EXIST:
        return values < 0
    if operator in (Operator.IN, Operator.NOT_IN):
        ids = [column.ids[v] for v in requirement.values if v in column.ids]
        if not ids:
            inside = np.zeros(slots.size, dtype=bool)
        elif len(ids) == 1:
            inside = values == ids[0]
        else:
            inside = np.isin(values, np.asarray(ids, dtype=values.dtype))
        return inside if operator is Operator.IN else ~inside
    # Gt / Lt: an integer comparison; a missing or non-integer label never matches.
    (raw_bound,) = requirement.values
    bound = parse_go_int64(raw_bound)
    if bound is None:
        return np.zeros(slots.size, dtype=bool)
    integers = _integer_labels(cluster, requirement.key, column)
    if operator is Operator.GT:
        by_value = integers.valid & (integers.numbers > bound)
    else:
        by_value = integers.valid & (integers.numbers < bound)
    # One extra False at the end: value id MISSING (-1) indexes it.
    lookup = np.append(by_value, False)
    return lookup[values]


def _field_mask(cluster: ClusterState, requirement: FieldRequirement, slots: NodeSlots) -> Mask:
    named = [cluster.slot_of(name) for name in requirement.values]
    wanted = [slot for slot in named if slot is not None]
    if not wanted:
        inside = np.zeros(slots.size, dtype=bool)
    elif len(wanted) == 1:
        inside = slots == wanted[0]
    else:
        inside = np.isin(slots, np.asarray(wanted, dtype=np.intp))
    return inside if requirement.operator is Operator.IN else ~inside


def term_mask(cluster: ClusterState, term: NodeSelectorTerm, slots: NodeSlots) -> Mask:
    """Nodes matching every expression and field of `term`; an empty or invalid term matches none."""
    if not term.valid or term.is_empty:
        return np.zeros(slots.size, dtype=bool)
    result: Mask | None = None
    for requirement in term.expressions:
        mask = _requirement_mask(cluster, requirement, slots)
        result = mask if result is None else result & mask
    for field_requirement in term.fields:
        mask = _field_mask(cluster, field_requirement, slots)
        result = mask if result is None else result & mask
    assert result is not None
    return result


def node_selector_mask(cluster: ClusterState, selector: NodeSelector, slots: NodeSlots) -> Mask:
    """Nodes matching some term of `selector` (terms are ORed; no terms matches no node)."""
    result = np.zeros(slots.size, dtype=bool)
    for term in selector.terms:
        result |= term_mask(cluster, term, slots)
    return result


def label_selector_mask(cluster: ClusterState, labels: Mapping[str, str], slots: NodeSlots) -> Mask:
    """Nodes carrying every label of a `nodeSelector` map with exactly that value."""
    result = np.ones(slots.size, dtype=bool)
    for key, value in labels.items():
        column = cluster.label_column(key)
        wanted = column.ids.get(value)
        if wanted is None:
            return np.zeros(slots.size, dtype=bool)
        result &= column.values[slots] == wanted
    return result


def preferred_weights(
    cluster: ClusterState, terms: tuple[PreferredNodeTerm, ...], slots: NodeSlots
) -> NDArray[np.int64]:
    """Per node, the summed weight of the preferred terms it matches."""
    total = np.zeros(slots.size, dtype=np.int64)
    for preferred in terms:
        total += np.where(term_mask(cluster, preferred.term, slots), preferred.weight, 0)
    return total
