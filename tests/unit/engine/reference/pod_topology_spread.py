"""A plain per-node, per-pod PodTopologySpread, written from kube-scheduler's podtopologyspread package.

It walks every node and every pod with string-keyed maps, as upstream does, so
that the vectorised plugin can be checked against it on random clusters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from berth.engine.cluster import ClusterState, Workload
from berth.engine.framework.status import Code
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.node import Node, TaintEffect
from berth.engine.model.pod import (
    InclusionPolicy,
    Pod,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)

NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = NOT_MATCH + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class ReferenceArgs:
    default_constraints: tuple[TopologySpreadConstraint, ...]
    system_defaulted: bool


def reference_default_selector(pod: Pod, workloads: Iterable[Workload]) -> LabelSelector:
    workloads = list(workloads)
    merged: dict[str, str] = {}
    for w in workloads:
        if w.kind != "Service" or w.namespace != pod.namespace or not w.map_selector:
            continue
        if all(pod.labels.get(k) == v for k, v in w.map_selector):
            merged.update(dict(w.map_selector))
    extra: list[Requirement] = []
    owner = pod.controller()
    if owner is not None:
        for w in workloads:
            if w.namespace != pod.namespace or w.name != owner.name or w.kind != owner.kind:
                continue
            if owner.kind == "ReplicationController" and owner.api_version == "v1":
                merged.update(dict(w.map_selector))
            elif (
                owner.kind in ("ReplicaSet", "StatefulSet")
                and owner.api_version == "apps/v1"
                and w.selector is not None
            ):
                extra.extend(w.selector.requirements)
    requirements = [Requirement(k, Operator.IN, frozenset((v,))) for k, v in merged.items()]
    return LabelSelector((*requirements, *extra))


def reference_constraints(
    pod: Pod, action: UnsatisfiableAction, args: ReferenceArgs, workloads: Iterable[Workload]
) -> list[TopologySpreadConstraint]:
    if pod.spread_constraints:
        return [c for c in pod.spread_constraints if c.when_unsatisfiable == action]
    defaults = [c for c in args.default_constraints if c.when_unsatisfiable == action]
    if not defaults:
        return []
    selector = reference_default_selector(pod, workloads)
    if not selector.requirements:
        return []
    return [replace(c, selector=selector) for c in defaults]


def _pods_on(cluster: ClusterState, node: Node) -> list[Pod]:
    slot = cluster.slot_of(node.name)
    assert slot is not None
    return list(cluster.pods_on(slot).values())


def _count(pods: Sequence[Pod], selector: LabelSelector | None, namespace: str) -> int:
    if selector is None or not selector.requirements:
        return 0
    return sum(
        1
        for p in pods
        if not p.terminating and p.namespace == namespace and selector.matches(p.labels)
    )


def _node_affinity_ok(pod: Pod, node: Node) -> bool:
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return pod.required_node_affinity is None or pod.required_node_affinity.matches(
        node.labels, node.name
    )


def _taints_ok(pod: Pod, node: Node) -> bool:
    for taint in node.taints:
        if taint.effect not in (TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE):
            continue
        if not any(t.tolerates(taint) for t in pod.tolerations):
            return False
    return True


def _policies_ok(c: TopologySpreadConstraint, pod: Pod, node: Node) -> bool:
    if c.node_affinity_policy == InclusionPolicy.HONOR and not _node_affinity_ok(pod, node):
        return False
    return not (c.node_taints_policy == InclusionPolicy.HONOR and not _taints_ok(pod, node))


def _has_keys(node: Node, constraints: Sequence[TopologySpreadConstraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


def reference_filter(
    cluster: ClusterState, pod: Pod, args: ReferenceArgs, candidates: Sequence[Node]
) -> dict[str, tuple[Code, str] | None]:
    """Per candidate node name: None when it passes, else (code, reason)."""
    constraints = reference_constraints(
        pod, UnsatisfiableAction.DO_NOT_SCHEDULE, args, cluster.workloads()
    )
    if not constraints:
        return {n.name: None for n in candidates}
    per_value: list[dict[str, int]] = [{} for _ in constraints]
    for node in cluster.nodes():
        if not _has_keys(node, constraints):
            continue
        pods = _pods_on(cluster, node)
        for i, c in enumerate(constraints):
            if not _policies_ok(c, pod, node):
                continue
            value = node.labels[c.topology_key]
            per_value[i][value] = per_value[i].get(value, 0) + _count(
                pods, c.selector, pod.namespace
            )
    minimums = []
    for i, c in enumerate(constraints):
        domains = per_value[i]
        if len(domains) < c.min_domains:
            minimums.append(0)
        else:
            minimums.append(min(domains.values(), default=MAX_INT32))
    result: dict[str, tuple[Code, str] | None] = {}
    for node in candidates:
        verdict: tuple[Code, str] | None = None
        for i, c in enumerate(constraints):
            if c.topology_key not in node.labels:
                verdict = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING_LABEL)
                break
            self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
            matched = per_value[i].get(node.labels[c.topology_key], 0)
            if matched + self_match - minimums[i] > c.max_skew:
                verdict = (Code.UNSCHEDULABLE, NOT_MATCH)
                break
        result[node.name] = verdict
    return result


def _go_round(value: float) -> int:
    """Go's math.Round for non-negative values: exact halves round up."""
    whole = math.floor(value)
    return whole + (1 if value - whole >= 0.5 else 0)


def reference_scores(
    cluster: ClusterState, pod: Pod, args: ReferenceArgs, feasible: Sequence[Node]
) -> dict[str, int] | None:
    """Normalised scores per feasible node name, or None when the plugin skips scoring."""
    all_nodes = list(cluster.nodes())
    if not all_nodes:
        return None
    constraints = reference_constraints(
        pod, UnsatisfiableAction.SCHEDULE_ANYWAY, args, cluster.workloads()
    )
    if not constraints:
        return None
    require_all = bool(pod.spread_constraints) or not args.system_defaulted
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node in feasible:
        if require_all and not _has_keys(node, constraints):
            ignored.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME:
                counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(feasible) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
        weights.append(math.log(size + 2))
    for node in all_nodes:
        if require_all and not _has_keys(node, constraints):
            continue
        pods = _pods_on(cluster, node)
        for i, c in enumerate(constraints):
            if not _policies_ok(c, pod, node):
                continue
            value = node.labels.get(c.topology_key, "")
            if value not in counts[i]:
                continue
            counts[i][value] += _count(pods, c.selector, pod.namespace)
    raw: dict[str, int] = {}
    for node in feasible:
        if node.name in ignored:
            raw[node.name] = 0
            continue
        score = 0.0
        for i, c in enumerate(constraints):
            if c.topology_key not in node.labels:
                continue
            if c.topology_key == HOSTNAME:
                cnt = _count(_pods_on(cluster, node), c.selector, pod.namespace)
            else:
                cnt = counts[i][node.labels[c.topology_key]]
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
        raw[node.name] = _go_round(score)
    valid = [s for name, s in raw.items() if name not in ignored]
    low = min(valid, default=0)
    high = max([0, *valid])
    result = {}
    for name, s in raw.items():
        if name in ignored:
            result[name] = 0
        elif high == 0:
            result[name] = 100
        else:
            result[name] = 100 * (high + low - s) // high
    return result
