"""Which spread constraints apply to a pod: its own, or the configured defaults with a deduced selector.

A pod that declares `topologySpreadConstraints` is judged by those alone. A pod
that declares none gets the plugin's default constraints (the system defaults
unless `defaultingType: List`), whose selector is deduced from the Services,
ReplicationControllers, ReplicaSets and StatefulSets that select or own it; no
such workload means no constraints at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from berth.engine.cluster import ClusterState, Workload
from berth.engine.cluster.zones import ZONE_LABEL
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.framework.names import POD_TOPOLOGY_SPREAD
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.pod import (
    InclusionPolicy,
    Pod,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)

HOSTNAME_LABEL = "kubernetes.io/hostname"


class DefaultingType(StrEnum):
    SYSTEM = "System"
    LIST = "List"


# Order matters: scores add the constraints' terms in this order (float sums).
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(
        max_skew=3,
        topology_key=HOSTNAME_LABEL,
        when_unsatisfiable=UnsatisfiableAction.SCHEDULE_ANYWAY,
        selector=None,
    ),
    TopologySpreadConstraint(
        max_skew=5,
        topology_key=ZONE_LABEL,
        when_unsatisfiable=UnsatisfiableAction.SCHEDULE_ANYWAY,
        selector=None,
    ),
)

_ARG_FIELDS = frozenset(("defaultConstraints", "defaultingType"))
_CONSTRAINT_FIELDS = frozenset(
    (
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    )
)
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True, slots=True)
class SpreadArgs:
    """PodTopologySpreadArgs after defaulting and validation."""

    default_constraints: tuple[TopologySpreadConstraint, ...]
    system_defaulted: bool


def _invalid(field: str, problem: str) -> InvalidPluginArgsError:
    return InvalidPluginArgsError(POD_TOPOLOGY_SPREAD, field, problem)


def _label_name_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"prefix part of {key!r} must be a DNS subdomain"
    if not name or len(name) > 63 or not _LABEL_NAME.match(name):
        return (
            f"name part of {key!r} must be at most 63 alphanumeric characters, '-', '_' or '.',"
            " starting and ending with an alphanumeric character"
        )
    return None


def _parse_policy(
    raw: Mapping[str, Any], key: str, default: InclusionPolicy, where: str
) -> InclusionPolicy:
    value = raw.get(key)
    if value is None:
        return default
    try:
        return InclusionPolicy(value)
    except ValueError:
        raise _invalid(
            f"{where}.{key}", f"supported values: Honor, Ignore; got {value!r}"
        ) from None


def _parse_default_constraint(raw: object, where: str) -> TopologySpreadConstraint:
    if not isinstance(raw, Mapping):
        raise _invalid(where, f"expected an object, got {raw!r}")
    unknown = sorted(set(raw) - _CONSTRAINT_FIELDS)
    if unknown:
        raise _invalid(f"{where}.{unknown[0]}", "unknown field")
    max_skew = raw.get("maxSkew", 0)
    if not isinstance(max_skew, int) or isinstance(max_skew, bool) or max_skew <= 0:
        raise _invalid(f"{where}.maxSkew", f"not in valid range (0, inf): {max_skew!r}")
    topology_key = raw.get("topologyKey", "")
    if not isinstance(topology_key, str) or not topology_key:
        raise _invalid(f"{where}.topologyKey", "can not be empty")
    problem = _label_name_problem(topology_key)
    if problem is not None:
        raise _invalid(f"{where}.topologyKey", problem)
    action_raw = raw.get("whenUnsatisfiable", "")
    if not action_raw:
        raise _invalid(f"{where}.whenUnsatisfiable", "can not be empty")
    try:
        action = UnsatisfiableAction(action_raw)
    except ValueError:
        raise _invalid(
            f"{where}.whenUnsatisfiable",
            f'supported values: "DoNotSchedule", "ScheduleAnyway"; got {action_raw!r}',
        ) from None
    if raw.get("labelSelector") is not None:
        raise _invalid(
            f"{where}.labelSelector",
            "constraint must not define a selector, as they deduced for each pod",
        )
    min_domains = raw.get("minDomains", 1)
    if not isinstance(min_domains, int) or isinstance(min_domains, bool):
        raise _invalid(f"{where}.minDomains", f"expected an integer, got {min_domains!r}")
    # matchLabelKeys is accepted but has no effect: kube-scheduler replaces the
    # selector it would refine with the selector deduced from the pod's workloads.
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=action,
        selector=None,
        min_domains=min_domains,
        node_affinity_policy=_parse_policy(raw, "nodeAffinityPolicy", InclusionPolicy.HONOR, where),
        node_taints_policy=_parse_policy(raw, "nodeTaintsPolicy", InclusionPolicy.IGNORE, where),
    )


def parse_args(args: PluginArgs | None) -> SpreadArgs:
    """Validate and default PodTopologySpreadArgs (`defaultingType` defaults to System)."""
    args = args or {}
    unknown = sorted(set(args) - _ARG_FIELDS)
    if unknown:
        raise _invalid(unknown[0], "unknown field")
    raw_constraints = args.get("defaultConstraints")
    if raw_constraints is None:
        raw_constraints = []
    if not isinstance(raw_constraints, list):
        raise _invalid("defaultConstraints", f"expected a list, got {raw_constraints!r}")
    constraints = tuple(
        _parse_default_constraint(item, f"defaultConstraints[{index}]")
        for index, item in enumerate(raw_constraints)
    )
    seen: set[tuple[str, UnsatisfiableAction]] = set()
    for index, constraint in enumerate(constraints):
        pair = (constraint.topology_key, constraint.when_unsatisfiable)
        if pair in seen:
            raise _invalid(
                f"defaultConstraints[{index}]",
                f"Duplicate value: {{{constraint.topology_key}, {constraint.when_unsatisfiable}}}",
            )
        seen.add(pair)
    defaulting_raw = args.get("defaultingType") or DefaultingType.SYSTEM.value
    try:
        defaulting = DefaultingType(defaulting_raw)
    except ValueError:
        raise _invalid(
            "defaultingType", f'supported values: "List", "System"; got {defaulting_raw!r}'
        ) from None
    if defaulting is DefaultingType.SYSTEM:
        if constraints:
            raise _invalid(
                "defaultingType", "System is invalid when .defaultConstraints are not empty"
            )
        return SpreadArgs(SYSTEM_DEFAULT_CONSTRAINTS, system_defaulted=True)
    return SpreadArgs(constraints, system_defaulted=False)


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    if api_version in ("", "/"):
        return ("", "")
    if api_version.count("/") > 1:
        return None
    group, _, version = api_version.rpartition("/")
    return (group, version)


_CONTROLLER_KINDS = {
    ("", "v1", "ReplicationController"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
}


def default_selector(pod: Pod, workloads: Iterable[Workload]) -> LabelSelector:
    """The selector of the Services selecting `pod` and of its controlling RC/RS/StatefulSet, ANDed.

    Services must be in the pod's namespace and have a selector matching the
    pod's labels; the controller is looked up by the pod's controller owner
    reference (RCs by `v1`, ReplicaSets and StatefulSets by `apps/v1`). The
    result is empty when nothing applies.
    """
    owner = pod.controller()
    wanted_controller: tuple[str, str] | None = None
    if owner is not None:
        group_version = _parse_group_version(owner.api_version)
        if group_version is not None and (*group_version, owner.kind) in _CONTROLLER_KINDS:
            wanted_controller = (owner.kind, owner.name)
    label_set: dict[str, str] = {}
    controller: Workload | None = None
    for workload in workloads:
        if workload.namespace != pod.namespace:
            continue
        if workload.kind == "Service":
            # A Service without a selector selects nothing (and adds nothing).
            if workload.map_selector and all(
                pod.labels.get(key) == value for key, value in workload.map_selector
            ):
                label_set.update(workload.map_selector)
        elif wanted_controller == (workload.kind, workload.name):
            controller = workload
    extra: tuple[Requirement, ...] = ()
    if controller is not None:
        if controller.kind == "ReplicationController":
            label_set.update(controller.map_selector)
        elif controller.selector is not None:
            extra = controller.selector.requirements
    requirements = tuple(
        Requirement(key, Operator.IN, frozenset((value,)))
        for key, value in sorted(label_set.items())
    )
    return LabelSelector((*requirements, *extra))


class DefaultSelectors:
    """Default selectors per (namespace, labels, controller), dropped whenever workloads change.

    Pods of one Deployment share all three, so a burst of them costs one walk
    over the workloads.
    """

    _MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self._cluster: ClusterState | None = None
        self._generation = -1
        self._selectors: dict[object, LabelSelector] = {}

    def selector_for(self, pod: Pod, cluster: ClusterState) -> LabelSelector:
        if cluster is not self._cluster or cluster.workload_generation != self._generation:
            self._cluster = cluster
            self._generation = cluster.workload_generation
            self._selectors.clear()
        owner = pod.controller()
        key = (
            pod.namespace,
            frozenset(pod.labels.items()),
            None if owner is None else (owner.api_version, owner.kind, owner.name),
        )
        selector = self._selectors.get(key)
        if selector is None:
            if len(self._selectors) >= self._MAX_ENTRIES:
                self._selectors.clear()
            selector = default_selector(pod, cluster.workloads())
            self._selectors[key] = selector
        return selector


def constraints_for(
    pod: Pod,
    action: UnsatisfiableAction,
    args: SpreadArgs,
    default_selector_of: Callable[[Pod], LabelSelector],
) -> tuple[TopologySpreadConstraint, ...]:
    """The pod's constraints with `whenUnsatisfiable == action`, or the applicable defaults."""
    if pod.spread_constraints:
        return tuple(c for c in pod.spread_constraints if c.when_unsatisfiable is action)
    defaults = [c for c in args.default_constraints if c.when_unsatisfiable is action]
    if not defaults:
        return ()
    selector = default_selector_of(pod)
    if selector.is_empty:
        return ()
    return tuple(dataclasses.replace(c, selector=selector) for c in defaults)
