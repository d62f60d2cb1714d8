"""A pod's resource requests, aggregated exactly like kube-scheduler (init containers, sidecars, overhead)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.engine.model.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    add_into,
    max_into,
)

# Resources a pod-level `spec.resources` may set (PodLevelResources).
POD_LEVEL_RESOURCES = (CPU, MEMORY)


@dataclass(frozen=True, slots=True)
class ContainerRequests:
    requests: Mapping[str, int]
    restartable: bool = False  # an init container with restartPolicy Always: a sidecar


@dataclass(frozen=True, slots=True)
class PodRequests:
    requests: dict[str, int]
    nonzero_cpu: int
    nonzero_memory: int


def _aggregate(
    containers: Sequence[Mapping[str, int]],
    init_containers: Sequence[tuple[Mapping[str, int], bool]],
) -> dict[str, int]:
    total: dict[str, int] = {}
    for requests in containers:
        add_into(total, requests)
    # Sidecars run next to everything started after them, so they add to the
    # steady state *and* to the usage of every later init container.
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for requests, restartable in init_containers:
        if restartable:
            add_into(total, requests)
            add_into(sidecars, requests)
            usage = dict(sidecars)
        else:
            usage = dict(sidecars)
            add_into(usage, requests)
        max_into(init_peak, usage)
    max_into(total, init_peak)
    return total


def _with_defaults(requests: Mapping[str, int]) -> dict[str, int]:
    # Only a request that is absent gets the default; an explicit zero stays zero.
    filled = dict(requests)
    filled.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    filled.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return filled


def compute_pod_requests(
    *,
    containers: Sequence[ContainerRequests],
    init_containers: Sequence[ContainerRequests],
    overhead: Mapping[str, int],
    pod_level: Mapping[str, int],
) -> PodRequests:
    """The pod's effective requests (for filtering) and its non-zero cpu/memory (for scoring)."""
    inits = [(c.requests, c.restartable) for c in init_containers]
    actual = _aggregate([c.requests for c in containers], inits)
    nonzero = _aggregate(
        [_with_defaults(c.requests) for c in containers],
        [(_with_defaults(requests), restartable) for requests, restartable in inits],
    )
    for name in POD_LEVEL_RESOURCES:
        if name in pod_level:
            actual[name] = pod_level[name]
            nonzero[name] = pod_level[name]
    add_into(actual, overhead)
    add_into(nonzero, overhead)
    # Zero entries carry no meaning once aggregated; dropping them keeps
    # "requests nothing" a simple emptiness test.
    actual = {name: amount for name, amount in actual.items() if amount}
    return PodRequests(
        requests=actual,
        nonzero_cpu=nonzero.get(CPU, 0),
        nonzero_memory=nonzero.get(MEMORY, 0),
    )
