"""A plain per-node, per-pod InterPodAffinity, written from kube-scheduler's filtering.go and scoring.go.

It walks every pod on every node and keeps (topologyKey, value) -> count maps, as
upstream does, so that the vectorised plugin can be checked against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.cluster import ClusterState
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod, PodAffinityTerm

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

Pair = tuple[str, str]


def placed(cluster: ClusterState) -> list[tuple[Node, Pod]]:
    result: list[tuple[Node, Pod]] = []
    for node in cluster.nodes():
        slot = cluster.slot_of(node.name)
        assert slot is not None
        result.extend((node, pod) for pod in cluster.pods_on(slot).values())
    return result


def _matches(term: PodAffinityTerm, pod: Pod, cluster: ClusterState) -> bool:
    return term.matches(pod.namespace, pod.labels, cluster.namespace_labels(pod.namespace))


def _matches_all(terms: tuple[PodAffinityTerm, ...], pod: Pod, cluster: ClusterState) -> bool:
    return bool(terms) and all(_matches(term, pod, cluster) for term in terms)


def _record(counts: Counter[Pair], node: Node, key: str, amount: int = 1) -> None:
    if key in node.labels:
        counts[(key, node.labels[key])] += amount


@dataclass
class ReferenceFilterState:
    existing_anti: Counter[Pair]
    affinity: Counter[Pair]
    anti: Counter[Pair]


def reference_pre_filter(cluster: ClusterState, pod: Pod) -> ReferenceFilterState | None:
    """The counts, or None when PreFilter Skips."""
    existing_anti: Counter[Pair] = Counter()
    affinity: Counter[Pair] = Counter()
    anti: Counter[Pair] = Counter()
    own_namespace_labels = cluster.namespace_labels(pod.namespace)
    for node, existing in placed(cluster):
        for term in existing.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, own_namespace_labels):
                _record(existing_anti, node, term.topology_key)
        if _matches_all(pod.required_affinity, existing, cluster):
            for term in pod.required_affinity:
                _record(affinity, node, term.topology_key)
        for term in pod.required_anti_affinity:
            if _matches(term, existing, cluster):
                _record(anti, node, term.topology_key)
    if not existing_anti and not pod.required_affinity and not pod.required_anti_affinity:
        return None
    return ReferenceFilterState(existing_anti, affinity, anti)


def reference_filter(
    cluster: ClusterState, pod: Pod, state: ReferenceFilterState, node: Node
) -> tuple[Code, str] | None:
    """None when the node passes, else (code, reason)."""
    labels = node.labels
    if pod.required_affinity:
        pods_exist = True
        keys_present = True
        for term in pod.required_affinity:
            if term.topology_key not in labels:
                keys_present = False
                break
            if state.affinity[(term.topology_key, labels[term.topology_key])] <= 0:
                pods_exist = False
        if not keys_present:
            return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, AFFINITY
        if not pods_exist and not (
            not state.affinity and _matches_all(pod.required_affinity, pod, cluster)
        ):
            return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, AFFINITY
    for term in pod.required_anti_affinity:
        key = term.topology_key
        if key in labels and state.anti[(key, labels[key])] > 0:
            return Code.UNSCHEDULABLE, ANTI_AFFINITY
    for pair in labels.items():
        if state.existing_anti[pair] > 0:
            return Code.UNSCHEDULABLE, EXISTING_ANTI_AFFINITY
    return None


def reference_pre_score(
    cluster: ClusterState,
    pod: Pod,
    *,
    hard_pod_affinity_weight: int = 1,
    ignore_preferred_terms_of_existing_pods: bool = False,
) -> dict[str, Counter[str]] | None:
    """topologyKey -> value -> points, or None when PreScore Skips."""
    has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
    if ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None
    points: dict[str, Counter[str]] = {}
    own_namespace_labels: Mapping[str, str] = cluster.namespace_labels(pod.namespace)

    def add(node: Node, key: str, amount: int) -> None:
        if key in node.labels:
            points.setdefault(key, Counter())[node.labels[key]] += amount

    for node, existing in placed(cluster):
        if not node.labels:
            continue
        if not has_constraints and not existing.has_any_affinity_terms:
            continue
        for weighted in pod.preferred_affinity:
            if _matches(weighted.term, existing, cluster):
                add(node, weighted.term.topology_key, weighted.weight)
        for weighted in pod.preferred_anti_affinity:
            if _matches(weighted.term, existing, cluster):
                add(node, weighted.term.topology_key, -weighted.weight)
        if hard_pod_affinity_weight > 0:
            for term in existing.required_affinity:
                if term.matches(pod.namespace, pod.labels, own_namespace_labels):
                    add(node, term.topology_key, hard_pod_affinity_weight)
        for weighted in existing.preferred_affinity:
            if weighted.term.matches(pod.namespace, pod.labels, own_namespace_labels):
                add(node, weighted.term.topology_key, weighted.weight)
        for weighted in existing.preferred_anti_affinity:
            if weighted.term.matches(pod.namespace, pod.labels, own_namespace_labels):
                add(node, weighted.term.topology_key, -weighted.weight)
    return points or None


def reference_score(points: dict[str, Counter[str]], node: Node) -> int:
    return sum(values[node.labels[key]] for key, values in points.items() if key in node.labels)


def reference_normalize(scores: list[int]) -> list[int]:
    if not scores:
        return []
    lowest, highest = min(scores), max(scores)
    spread = highest - lowest
    if spread <= 0:
        return [0 for _ in scores]
    return [int(100.0 * (float(score - lowest) / float(spread))) for score in scores]
