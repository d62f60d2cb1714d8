"""A pod's node requirements evaluated over many node rows at once.

Several plugins ask the same two questions about every node: does it satisfy
the pod's `nodeSelector` and required node affinity, and does it carry a taint
the pod does not tolerate. Plugins may not import each other, so the answers
live here as pure functions over `ClusterState` rows.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import MISSING
from berth.engine.model.labels import (
    FieldRequirement,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    Requirement,
)
from berth.engine.model.node import Taint, TaintEffect
from berth.engine.model.pod import Pod, Toleration, tolerates_taint

Mask = NDArray[np.bool_]

NO_SCHEDULE_EFFECTS = frozenset((TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE))
"""The taint effects that keep a pod off a node (PreferNoSchedule only scores)."""


def pod_has_node_requirements(pod: Pod) -> bool:
    """True when `nodeSelector` or required node affinity could reject some node."""
    return bool(pod.node_selector) or pod.required_node_affinity is not None


def matches_required_node_affinity(cluster: ClusterState, pod: Pod, slots: NodeSlots) -> Mask:
    """Per slot: the node satisfies the pod's `nodeSelector` AND its required node affinity.

    Required affinity terms are ORed, expressions within a term ANDed; a term
    that is empty or failed to parse matches no node (kube-scheduler ignores the
    parse error and the term simply never matches).
    """
    result = np.ones(len(slots), dtype=bool)
    for key, value in pod.node_selector.items():
        column = cluster.label_column(key)
        wanted = column.ids.get(value)
        if wanted is None:
            return np.zeros(len(slots), dtype=bool)
        result &= column.values[slots] == wanted
    if pod.required_node_affinity is not None:
        result &= matches_node_selector(cluster, pod.required_node_affinity, slots)
    return result


def matches_node_selector(cluster: ClusterState, selector: NodeSelector, slots: NodeSlots) -> Mask:
    """Per slot: some term of `selector` matches the node."""
    result = np.zeros(len(slots), dtype=bool)
    for term in selector.terms:
        result |= matches_node_selector_term(cluster, term, slots)
    return result


def matches_node_selector_term(
    cluster: ClusterState, term: NodeSelectorTerm, slots: NodeSlots
) -> Mask:
    """Per slot: every expression and field requirement of `term` holds."""
    if not term.valid or term.is_empty:
        return np.zeros(len(slots), dtype=bool)
    result = np.ones(len(slots), dtype=bool)
    for requirement in term.expressions:
        result &= _label_requirement_mask(cluster, requirement, slots)
    for field_requirement in term.fields:
        result &= _field_requirement_mask(cluster, field_requirement, slots)
    return result


def _label_requirement_mask(
    cluster: ClusterState, requirement: Requirement, slots: NodeSlots
) -> Mask:
    column = cluster.label_column(requirement.key)
    values = column.values[slots]
    operator = requirement.operator
    if operator is Operator.EXISTS:
        return np.not_equal(values, MISSING)
    if operator is Operator.DOES_NOT_EXIST:
        return np.equal(values, MISSING)
    if operator in (Operator.IN, Operator.NOT_IN):
        ids = [column.ids[v] for v in requirement.values if v in column.ids]
        inside = np.isin(values, np.asarray(ids, dtype=values.dtype))
        return inside if operator is Operator.IN else ~inside
    # Gt / Lt compare integers: evaluate once per distinct value present.
    distinct, positions = np.unique(values, return_inverse=True)
    verdicts = np.fromiter(
        (
            value_id != MISSING
            and requirement.matches({requirement.key: column.vocabulary[value_id]})
            for value_id in distinct.tolist()
        ),
        dtype=bool,
        count=len(distinct),
    )
    return verdicts[positions.reshape(-1)]


def _field_requirement_mask(
    cluster: ClusterState, requirement: FieldRequirement, slots: NodeSlots
) -> Mask:
    named = [cluster.slot_of(name) for name in requirement.values]
    inside = np.isin(slots, np.asarray([s for s in named if s is not None], dtype=np.intp))
    return inside if requirement.operator is Operator.IN else ~inside


def has_untolerated_taint(
    cluster: ClusterState,
    tolerations: tuple[Toleration, ...],
    slots: NodeSlots,
    *,
    effects: Iterable[TaintEffect] = NO_SCHEDULE_EFFECTS,
) -> Mask:
    """Per slot: the node has a taint with one of `effects` that `tolerations` do not tolerate.

    Nodes sharing the same taints are judged once.
    """
    wanted = frozenset(effects)
    judged: dict[tuple[Taint, ...], bool] = {(): False}

    def untolerated(taints: tuple[Taint, ...]) -> bool:
        verdict = judged.get(taints)
        if verdict is None:
            verdict = any(
                taint.effect in wanted and not tolerates_taint(tolerations, taint)
                for taint in taints
            )
            judged[taints] = verdict
        return verdict

    return np.fromiter(
        (untolerated(cluster.node_at(slot).taints) for slot in slots.tolist()),
        dtype=bool,
        count=len(slots),
    )
