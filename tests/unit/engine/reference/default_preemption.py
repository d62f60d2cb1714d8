"""Plain DefaultPreemption over a cpu-only cluster, written straight from the behaviour notes (§8).

A node is (name, allocatable millicores, its pods); the only filter is "enough free
cpu", so fitting is arithmetic. No ClusterState, no framework, no numpy.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod


@dataclass(frozen=True)
class CpuNode:
    name: str
    allocatable: int
    pods: tuple[Pod, ...]


def _cpu(pods: Sequence[Pod]) -> int:
    return sum(pod.requests.get("cpu", 0) for pod in pods)


def _start(pod: Pod) -> float:
    return math.inf if pod.start_time is None else pod.start_time


def _violating(pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]) -> list[bool]:
    left = [pdb.disruptions_allowed for pdb in pdbs]
    flags = []
    for pod in pods:
        violates = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                selector = pdb.selector
                if pdb.namespace != pod.namespace or selector is None or selector.is_empty:
                    continue
                if not selector.matches(pod.labels) or pod.name in pdb.disrupted_pods:
                    continue
                left[i] -= 1
                if left[i] < 0:
                    violates = True
                    break
        flags.append(violates)
    return flags


def victims_on(
    node: CpuNode, preemptor: Pod, pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], int] | str:
    need = preemptor.requests.get("cpu", 0)
    lower = [pod for pod in node.pods if pod.priority < preemptor.priority]
    if not lower:
        return "No preemption victims found for incoming pod"
    kept = [pod for pod in node.pods if pod.priority >= preemptor.priority]
    if node.allocatable - _cpu(kept) < need:
        return "Insufficient cpu"
    ordered = sorted(lower, key=lambda pod: (-pod.priority, _start(pod)))
    flags = _violating(ordered, pdbs)
    violating = [pod for pod, flag in zip(ordered, flags, strict=True) if flag]
    clean = [pod for pod, flag in zip(ordered, flags, strict=True) if not flag]
    victims: list[Pod] = []
    violations = 0
    for group, counts in ((violating, True), (clean, False)):
        for pod in group:
            if node.allocatable - _cpu([*kept, pod]) >= need:
                kept.append(pod)
            else:
                victims.append(pod)
                violations += counts
    if violating and clean:
        victims.sort(key=lambda pod: (-pod.priority, _start(pod)))
    return victims, violations


def preempt(
    nodes: Sequence[CpuNode],
    preemptor: Pod,
    pdbs: Sequence[PodDisruptionBudget],
    rng: random.Random,
    *,
    percentage: int = 10,
    absolute: int = 100,
) -> tuple[str, list[str]] | str:
    """(node, victim names) or the inner FitError text (without the "preemption: " prefix)."""
    need = preemptor.requests.get("cpu", 0)
    potential = [node for node in nodes if node.allocatable - _cpu(node.pods) < need]
    failures: dict[str, int] = {}
    candidates: list[tuple[str, list[Pod], int]] = []
    if potential:
        offset = rng.randrange(len(potential))
        wanted = min(max(len(potential) * percentage // 100, absolute), len(potential))
        clean: list[tuple[str, list[Pod], int]] = []
        dirty: list[tuple[str, list[Pod], int]] = []
        for step in range(len(potential)):
            node = potential[(offset + step) % len(potential)]
            outcome = victims_on(node, preemptor, pdbs)
            if isinstance(outcome, str):
                failures[outcome] = failures.get(outcome, 0) + 1
                continue
            bucket = dirty if outcome[1] else clean
            if len(bucket) < wanted:
                bucket.append((node.name, outcome[0], outcome[1]))
            if clean and len(clean) + len(dirty) >= wanted:
                break
        candidates = clean + dirty
    if not candidates:
        absent = len(nodes) - sum(failures.values())
        if absent:
            failures["Preemption is not helpful for scheduling"] = absent
        histogram = sorted(f"{count} {reason}" for reason, count in failures.items())
        return f"0/{len(nodes)} nodes are available: {', '.join(histogram)}."
    if len(candidates) == 1:
        name, victims, _ = candidates[0]
        return name, [pod.name for pod in victims]

    def top_start(victims: list[Pod]) -> float:
        top = max(pod.priority for pod in victims)
        return min(_start(pod) for pod in victims if pod.priority == top)

    rules = (
        lambda c: -c[2],
        lambda c: -c[1][0].priority,
        lambda c: -sum(pod.priority + 2**31 for pod in c[1]),
        lambda c: -len(c[1]),
        lambda c: top_start(c[1]),
    )
    remaining = candidates
    for rule in rules:
        best = max(rule(c) for c in remaining)
        remaining = [c for c in remaining if rule(c) == best]
        if len(remaining) == 1:
            break
    chosen = remaining[0] if len(remaining) == 1 else remaining[rng.randrange(len(remaining))]
    return chosen[0], [pod.name for pod in chosen[1]]
