"""Pod queries that the cluster keeps per-node counts for, so affinity and spread never rescan pods."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.model.labels import LabelSelector
from berth.engine.model.pod import Pod, PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PodClause:
    """Pods in the namespace scope whose labels match `selector`."""

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None = None

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        if pod.namespace not in self.namespaces and not (
            self.namespace_selector is not None
            and self.namespace_selector.matches(namespace_labels)
        ):
            return False
        return self.selector.matches(pod.labels)

    @classmethod
    def of_term(cls, term: PodAffinityTerm) -> PodClause | None:
        """The clause of an affinity term, or None when its nil selector matches no pod."""
        if term.selector is None:
            return None
        return cls(term.selector, term.namespaces, term.namespace_selector)


@dataclass(frozen=True, slots=True)
class PodQuery:
    """Pods matching *all* clauses (affinity's "every required term" rule); optionally live ones only."""

    clauses: tuple[PodClause, ...]
    skip_terminating: bool = False

    @property
    def uses_namespace_labels(self) -> bool:
        return any(clause.namespace_selector is not None for clause in self.clauses)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        if self.skip_terminating and pod.terminating:
            return False
        return all(clause.matches(pod, namespace_labels) for clause in self.clauses)


class TermRole:
    """Which of an existing pod's affinity terms an index entry came from."""

    REQUIRED_AFFINITY = "required-affinity"
    REQUIRED_ANTI_AFFINITY = "required-anti-affinity"
    PREFERRED_AFFINITY = "preferred-affinity"
    PREFERRED_ANTI_AFFINITY = "preferred-anti-affinity"


@dataclass(frozen=True, slots=True)
class TermKey:
    """An existing pod's term, grouped with every identical term of other pods."""

    role: str
    term: PodAffinityTerm
    weight: int = 0


def term_keys_of(pod: Pod) -> list[TermKey]:
    keys = [TermKey(TermRole.REQUIRED_AFFINITY, term) for term in pod.required_affinity]
    keys += [TermKey(TermRole.REQUIRED_ANTI_AFFINITY, term) for term in pod.required_anti_affinity]
    keys += [
        TermKey(TermRole.PREFERRED_AFFINITY, weighted.term, weighted.weight)
        for weighted in pod.preferred_affinity
    ]
    keys += [
        TermKey(TermRole.PREFERRED_ANTI_AFFINITY, weighted.term, weighted.weight)
        for weighted in pod.preferred_anti_affinity
    ]
    return keys
