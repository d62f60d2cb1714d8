"""NodeAffinity: `nodeSelector` AND required node affinity (plus the profile's `addedAffinity`)
filter nodes; preferred terms score them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.cluster import NodeSlots
from berth.engine.errors import FieldError, InvalidPluginArgsError
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
from berth.engine.framework.interfaces import (
    PluginArgs,
    PreFilterResult,
    Scores,
)
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from berth.engine.framework.verdicts import (
    Verdicts,
    accept_all,
    combine_first_failure,
    reject_where,
)
from berth.engine.model.labels import (
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    parse_node_selector,
    parse_node_selector_term,
)
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod, PreferredNodeTerm
from berth.engine.nodematch import (
    label_selector_mask,
    node_selector_mask,
    pod_matches_node,
    preferred_weights,
)
from berth.engine.scoring.normalize import normalize_to_max

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"

_ARG_KEYS = frozenset(("apiVersion", "kind", "addedAffinity"))
_ADDED_KEYS = frozenset(
    (
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    )
)


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """`NodeAffinityArgs.addedAffinity`, parsed: applied to every pod of the profile."""

    added_required: NodeSelector | None = None
    added_preferred: tuple[PreferredNodeTerm, ...] = ()


def pinned_node_names(selector: NodeSelector) -> frozenset[str] | None:
    """The only node names the required terms can match, when every term pins `metadata.name In`.

    Terms are ORed, so one term without such a field leaves every node possible (None).
    Several name fields in one term are ANDed (intersected).
    """
    if not selector.terms:
        return None
    union: set[str] = set()
    for term in selector.terms:
        pinned: set[str] | None = None
        for field in term.fields:
            if field.operator is Operator.IN:
                pinned = set(field.values) if pinned is None else pinned & field.values
        if pinned is None:
            return None
        union |= pinned
    return frozenset(union)


def _usable_preferred(terms: tuple[PreferredNodeTerm, ...]) -> tuple[PreferredNodeTerm, ...]:
    # Weight-0 and empty terms are dropped before anything else looks at them.
    return tuple(t for t in terms if t.weight != 0 and not t.term.is_empty)


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred: tuple[PreferredNodeTerm, ...]


class NodeAffinity:
    name = names.NODE_AFFINITY

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        self.args = args or NodeAffinityArgs()

    # ------------------------------------------------------------------ filtering

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        required = pod.required_node_affinity
        if required is None and self.args.added_required is None and not pod.node_selector:
            return PreFilterResult(SKIP)
        if required is None:
            return PreFilterResult(SUCCESS)
        pinned = pinned_node_names(required)
        if pinned is None:
            return PreFilterResult(SUCCESS)
        if not pinned:
            return PreFilterResult(unresolvable(REASON_CONFLICT))
        return PreFilterResult(SUCCESS, pinned)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        cluster = state.cluster
        checks = []
        if self.args.added_required is not None:
            enforced = node_selector_mask(cluster, self.args.added_required, slots)
            checks.append((~enforced, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_ENFORCED))
        if pod.node_selector or pod.required_node_affinity is not None:
            matched = label_selector_mask(cluster, pod.node_selector, slots)
            if pod.required_node_affinity is not None:
                matched &= node_selector_mask(cluster, pod.required_node_affinity, slots)
            checks.append((~matched, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_POD))
        if not checks:
            return accept_all(slots.size)
        if len(checks) == 1:
            mask, code, reason = checks[0]
            return reject_where(mask, code, reason)
        return combine_first_failure(checks, slots.size)

    # ------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        preferred = _usable_preferred(pod.preferred_node_affinity)
        for index, term in enumerate(pod.preferred_node_affinity):
            # (An unparsable expression is dropped from `expressions`, so such a term may
            # look empty; it was not empty as written.)
            if term.weight != 0 and not term.term.valid:
                # kube-scheduler fails the cycle on an unparsable preferred term.
                return error(
                    "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
                    f"[{index}].preference: invalid node selector term"
                )
        if not pod.preferred_node_affinity and not self.args.added_preferred:
            return SKIP
        state.write(self.name, _PreScoreState(preferred))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        prepared = state.get(self.name, _PreScoreState)
        preferred = (
            prepared.preferred
            if prepared is not None
            else _usable_preferred(pod.preferred_node_affinity)
        )
        return preferred_weights(state.cluster, self.args.added_preferred + preferred, slots)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        return normalize_to_max(scores)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
                self._node_now_matches,
            )
        ]

    def _node_now_matches(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if not isinstance(new, Node):
            return QueueingHint.QUEUE
        added = self.args.added_required
        if added is not None and not added.matches(new.labels, new.name):
            return QueueingHint.SKIP
        if not pod_matches_node(pod, new):
            return QueueingHint.SKIP
        if not isinstance(old, Node):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if pod_matches_node(pod, old) else QueueingHint.QUEUE


# ---------------------------------------------------------------------- args


_INVALID_TERM = (
    "invalid node selector term (unknown operator, wrong number of values, "
    "a non-integer Gt/Lt value, or a matchFields entry other than metadata.name)"
)


def _invalid(field: str, problem: str) -> InvalidPluginArgsError:
    return InvalidPluginArgsError(names.NODE_AFFINITY, field, problem)


def _check_terms_valid(terms: tuple[NodeSelectorTerm, ...], field: str) -> None:
    for index, term in enumerate(terms):
        if not term.valid:
            raise _invalid(f"{field}[{index}]", _INVALID_TERM)


def parse_args(args: PluginArgs | None) -> NodeAffinityArgs:
    if not args:
        return NodeAffinityArgs()
    unknown = sorted(set(args) - _ARG_KEYS)
    if unknown:
        raise _invalid(unknown[0], "unknown field")
    added = args.get("addedAffinity")
    if added is None:
        return NodeAffinityArgs()
    if not isinstance(added, Mapping):
        raise _invalid("addedAffinity", "expected an object")
    unknown = sorted(set(added) - _ADDED_KEYS)
    if unknown:
        raise _invalid(f"addedAffinity.{unknown[0]}", "unknown field")
    required_field = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    try:
        required = parse_node_selector(
            added.get("requiredDuringSchedulingIgnoredDuringExecution"), required_field
        )
    except FieldError as problem:
        raise _invalid(problem.field, problem.problem) from None
    if required is not None:
        _check_terms_valid(required.terms, f"{required_field}.nodeSelectorTerms")
    preferred = _parse_added_preferred(
        added.get("preferredDuringSchedulingIgnoredDuringExecution"),
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution",
    )
    return NodeAffinityArgs(required, preferred)


def _parse_added_preferred(raw: Any, field: str) -> tuple[PreferredNodeTerm, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _invalid(field, "expected a list")
    terms = []
    for index, item in enumerate(raw):
        where = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise _invalid(where, "expected an object")
        weight = item.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise _invalid(f"{where}.weight", f"expected an integer, got {weight!r}")
        try:
            term = parse_node_selector_term(item.get("preference") or {}, f"{where}.preference")
        except FieldError as problem:
            raise _invalid(problem.field, problem.problem) from None
        if weight == 0:
            continue
        if not term.valid:
            raise _invalid(f"{where}.preference", _INVALID_TERM)
        if term.is_empty:
            continue
        terms.append(PreferredNodeTerm(weight, term))
    return tuple(terms)


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeAffinity:
    """Args: `NodeAffinityArgs` — `addedAffinity` (a v1 NodeAffinity; default none)."""
    return NodeAffinity(parse_args(args))
