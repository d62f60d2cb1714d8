"""Victim importance, PDB accounting and the choice among candidate nodes: pure functions over pods."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod

# Priorities are shifted by 2^31 before summing so that negative ones still add up.
PRIORITY_SHIFT = 2**31
# A pod without status.startTime counts as started "now": later than any recorded start.
NOT_STARTED = math.inf


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where the preemptor fits once `victims` (most important first) are gone."""

    node_name: str
    victims: tuple[Pod, ...]
    pdb_violations: int


def start_time(pod: Pod) -> float:
    return NOT_STARTED if pod.start_time is None else pod.start_time


def importance_key(pod: Pod) -> tuple[int, float]:
    """Sorts most important first: higher priority, then the one that started earlier."""
    return (-pod.priority, start_time(pod))


def by_importance(pods: Iterable[Pod]) -> list[Pod]:
    # Stable: equally important pods keep their order on the node.
    return sorted(pods, key=importance_key)


def split_by_pdb_violation(
    victims: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), each in the given order.

    Every covering budget that has not already counted the pod spends one of its
    allowed disruptions; a pod that drives one below zero would violate it.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]

    def violates(pod: Pod) -> bool:
        if not pod.labels:
            return False
        for index, pdb in enumerate(pdbs):
            if not pdb.covers(pod.namespace, pod.labels) or pod.name in pdb.disrupted_pods:
                continue
            allowed[index] -= 1
            if allowed[index] < 0:
                return True
        return False

    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in victims:
        (violating if violates(pod) else non_violating).append(pod)
    return violating, non_violating


def _fewest_pdb_violations(candidate: Candidate) -> float:
    return -candidate.pdb_violations


def _lowest_top_priority(candidate: Candidate) -> float:
    return -candidate.victims[0].priority


def _smallest_priority_sum(candidate: Candidate) -> float:
    return -sum(victim.priority + PRIORITY_SHIFT for victim in candidate.victims)


def _fewest_victims(candidate: Candidate) -> float:
    return -len(candidate.victims)


def _latest_start_of_top_victims(candidate: Candidate) -> float:
    top = max(victim.priority for victim in candidate.victims)
    return min(start_time(victim) for victim in candidate.victims if victim.priority == top)


_TIE_BREAKS: tuple[Callable[[Candidate], float], ...] = (
    _fewest_pdb_violations,
    _lowest_top_priority,
    _smallest_priority_sum,
    _fewest_victims,
    _latest_start_of_top_victims,
)


def pick_candidate(
    candidates: Sequence[Candidate],
    rng: random.Random,  # test seam: the last tie-break (Go map order)
) -> Candidate:
    """kube-scheduler's pickOneNodeForPreemption: each rule keeps the best-scoring nodes in turn."""
    remaining = list(candidates)
    if len(remaining) == 1:
        return remaining[0]
    for score in _TIE_BREAKS:
        values = [score(candidate) for candidate in remaining]
        best = max(values)
        remaining = [c for c, value in zip(remaining, values, strict=True) if value == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[rng.randrange(len(remaining))]


def aggregate_errors(messages: Sequence[str]) -> str:
    """Go's utilerrors aggregate text: one error as is, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    if len(messages) == 1 or len(unique) == 1:
        return unique[0]
    return f"[{', '.join(unique)}]"
