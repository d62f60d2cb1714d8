"""Correctness gate of the benchmark: a run with any violation is void.

Judged from the final Pods and Nodes the driver lists after the measured
phase, independently of any scheduler's code (it has its own small quantity
parser and selector matcher, covering what the benchmark templates use):

- over-commit: a node whose bound pods request more cpu, memory or pod slots
  than it has allocatable;
- node affinity: a pod on a node its nodeSelector / required node affinity rejects;
- pod anti-affinity: two pods in one topology domain where one's required
  anti-affinity term selects the other;
- topology spread: a DoNotSchedule constraint whose domains differ by more than maxSkew;
- a pending pod that fits: an unbound pod for which some node passes all of the above.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

__all__ = ["Validation", "parse_quantity", "validate"]

Obj = Mapping[str, Any]

_SUFFIXES = {
    "m": Decimal("0.001"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
}
# Pending pods checked for "fits somewhere"; a timed-out run can leave thousands.
MAX_PENDING_CHECKED = 200


def parse_quantity(text: str | int | float) -> Decimal:
    value = str(text).strip()
    for suffix in ("Ki", "Mi", "Gi", "Ti", "m", "k", "M", "G", "T"):
        if value.endswith(suffix):
            return Decimal(value[: -len(suffix)]) * _SUFFIXES[suffix]
    return Decimal(value)


@dataclass
class Validation:
    violations: list[str] = field(default_factory=list)
    bound_to_missing_nodes: int = 0
    pending: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, message: str) -> None:
        if len(self.violations) < 50:
            self.violations.append(message)
        elif len(self.violations) == 50:
            self.violations.append("... more violations not listed")


def _requests(pod: Obj) -> tuple[Decimal, Decimal]:
    cpu = memory = Decimal(0)
    for container in pod["spec"].get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += parse_quantity(requests.get("cpu", 0))
        memory += parse_quantity(requests.get("memory", 0))
    return cpu, memory


def _allocatable(node: Obj) -> tuple[Decimal, Decimal, int]:
    status = node.get("status") or {}
    values = status.get("allocatable") or status.get("capacity") or {}
    return (
        parse_quantity(values.get("cpu", 0)),
        parse_quantity(values.get("memory", 0)),
        int(parse_quantity(values.get("pods", 0))),
    )


def _labels(obj: Obj) -> Mapping[str, str]:
    return obj["metadata"].get("labels") or {}


def _match_expression(labels: Mapping[str, str], expression: Obj) -> bool:
    key, operator = expression["key"], expression["operator"]
    values = expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise ValueError(f"unsupported operator {operator}")


def _selector_matches(selector: Obj, labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_match_expression(labels, e) for e in selector.get("matchExpressions") or [])


def _node_affinity_ok(pod: Obj, node: Obj) -> bool:
    labels = _labels(node)
    spec = pod["spec"]
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms")
    if not required:
        return True
    return any(
        all(_match_expression(labels, e) for e in term.get("matchExpressions") or [])
        for term in required
    )


def _anti_affinity_terms(pod: Obj) -> list[Obj]:
    affinity = pod["spec"].get("affinity") or {}
    return list(
        (affinity.get("podAntiAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or []
    )


def _spread_constraints(pod: Obj) -> list[Obj]:
    return [
        c
        for c in pod["spec"].get("topologySpreadConstraints") or []
        if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
    ]


def _term_namespaces(pod: Obj, term: Obj) -> tuple[str, ...]:
    return tuple(term.get("namespaces") or [pod["metadata"]["namespace"]])


def _name(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


class _Cluster:
    """Bound pods indexed by node, plus lookups the checks share."""

    def __init__(self, pods: Sequence[Obj], nodes: Sequence[Obj]) -> None:
        self.nodes = {node["metadata"]["name"]: node for node in nodes}
        self.bound: list[tuple[Obj, Obj]] = []
        self.pending: list[Obj] = []
        self.missing = 0
        self.used: dict[str, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
        self.count: Counter[str] = Counter()
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            node_name = pod["spec"].get("nodeName")
            if not node_name:
                self.pending.append(pod)
                continue
            node = self.nodes.get(node_name)
            if node is None:
                self.missing += 1  # bound to a churn node that has since been deleted
                continue
            self.bound.append((pod, node))
            cpu, memory = _requests(pod)
            used = self.used[node_name]
            used[0] += cpu
            used[1] += memory
            self.count[node_name] += 1

    def matching_domains(
        self, selector: Obj, namespaces: Iterable[str], key: str
    ) -> Counter[str | None]:
        """Bound pods in `namespaces` matching `selector`, counted by their node's `key` label."""
        wanted = set(namespaces)
        domains: Counter[str | None] = Counter()
        for pod, node in self.bound:
            if pod["metadata"]["namespace"] in wanted and _selector_matches(selector, _labels(pod)):
                domains[_labels(node).get(key)] += 1
        return domains


def validate(pods: Sequence[Obj], nodes: Sequence[Obj]) -> Validation:
    cluster = _Cluster(pods, nodes)
    result = Validation(bound_to_missing_nodes=cluster.missing, pending=len(cluster.pending))
    _check_overcommit(cluster, result)
    for pod, node in cluster.bound:
        if not _node_affinity_ok(pod, node):
            result.add(f"node affinity: {_name(pod)} on {node['metadata']['name']}")
    domain_cache: dict[Any, Counter[str | None]] = {}

    def domains(selector: Obj, namespaces: tuple[str, ...], key: str) -> Counter[str | None]:
        cache_key = (repr(selector), namespaces, key)
        if cache_key not in domain_cache:
            domain_cache[cache_key] = cluster.matching_domains(selector, namespaces, key)
        return domain_cache[cache_key]

    _check_anti_affinity(cluster, result, domains)
    _check_spread(cluster, result, domains)
    _check_pending(cluster, result, domains)
    return result


def _check_overcommit(cluster: _Cluster, result: Validation) -> None:
    for name, (cpu, memory) in cluster.used.items():
        node_cpu, node_memory, node_pods = _allocatable(cluster.nodes[name])
        if cpu > node_cpu or memory > node_memory or cluster.count[name] > node_pods:
            result.add(
                f"over-commit: {name} cpu {cpu}/{node_cpu} memory {memory}/{node_memory} "
                f"pods {cluster.count[name]}/{node_pods}"
            )


def _check_anti_affinity(cluster: _Cluster, result: Validation, domains: Any) -> None:
    for pod, node in cluster.bound:
        for term in _anti_affinity_terms(pod):
            key = term["topologyKey"]
            value = _labels(node).get(key)
            if value is None:
                continue
            namespaces = _term_namespaces(pod, term)
            counts = domains(term.get("labelSelector") or {}, namespaces, key)
            itself = int(
                pod["metadata"]["namespace"] in namespaces
                and _selector_matches(term.get("labelSelector") or {}, _labels(pod))
            )
            if counts[value] - itself > 0:
                result.add(f"anti-affinity: {_name(pod)} shares {key}={value} with a match")


def _spread_counts(cluster: _Cluster, pod: Obj, constraint: Obj, domains: Any) -> dict[str, int]:
    """Matching pods per domain, over domains of nodes that pass the pod's node affinity."""
    key = constraint["topologyKey"]
    eligible = {
        _labels(node)[key]
        for node in cluster.nodes.values()
        if key in _labels(node) and _node_affinity_ok(pod, node)
    }
    counts = domains(constraint.get("labelSelector") or {}, (pod["metadata"]["namespace"],), key)
    return {domain: counts.get(domain, 0) for domain in eligible}


def _check_spread(cluster: _Cluster, result: Validation, domains: Any) -> None:
    seen: set[str] = set()
    for pod, _node in cluster.bound:
        for constraint in _spread_constraints(pod):
            signature = repr((pod["metadata"]["namespace"], constraint))
            if signature in seen:
                continue
            seen.add(signature)
            per_domain = _spread_counts(cluster, pod, constraint, domains)
            if per_domain and max(per_domain.values()) - min(per_domain.values()) > int(
                constraint["maxSkew"]
            ):
                result.add(f"topology spread: skew over {constraint['topologyKey']}: {per_domain}")


def _check_pending(cluster: _Cluster, result: Validation, domains: Any) -> None:
    for pod in cluster.pending[:MAX_PENDING_CHECKED]:
        cpu, memory = _requests(pod)
        blocked_domains: list[tuple[str, str]] = []
        for term in _anti_affinity_terms(pod):
            counts = domains(
                term.get("labelSelector") or {}, _term_namespaces(pod, term), term["topologyKey"]
            )
            blocked_domains += [(term["topologyKey"], v) for v, n in counts.items() if n and v]
        blocked = set(blocked_domains)
        spread = [(c, _spread_counts(cluster, pod, c, domains)) for c in _spread_constraints(pod)]
        for name, node in cluster.nodes.items():
            node_cpu, node_memory, node_pods = _allocatable(node)
            used_cpu, used_memory = cluster.used.get(name, (Decimal(0), Decimal(0)))
            if (
                used_cpu + cpu > node_cpu
                or used_memory + memory > node_memory
                or cluster.count[name] + 1 > node_pods
                or not _node_affinity_ok(pod, node)
            ):
                continue
            labels = _labels(node)
            if any((key, labels.get(key)) in blocked for key, _ in blocked_domains):
                continue
            if not _spread_allows(spread, labels):
                continue
            result.add(f"pending pod fits: {_name(pod)} fits on {name}")
            break


def _spread_allows(spread: list[tuple[Obj, dict[str, int]]], labels: Mapping[str, str]) -> bool:
    for constraint, per_domain in spread:
        value = labels.get(constraint["topologyKey"])
        if value is None or value not in per_domain:
            return False
        if per_domain[value] + 1 - min(per_domain.values()) > int(constraint["maxSkew"]):
            return False
    return True
