"""Which of a pod's requests NodeResourcesFit checks, in the order its reasons are reported."""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    is_extended_resource,
    is_scalar_resource,
)

TOO_MANY_PODS = "Too many pods"
_NATIVE_ORDER = (CPU, MEMORY, EPHEMERAL_STORAGE)


def insufficient(resource: str) -> str:
    """The reason for one resource the node lacks, e.g. ``Insufficient nvidia.com/gpu``."""
    return f"Insufficient {resource}"


def checked_requests(
    requests: Mapping[str, int],
    *,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> tuple[tuple[str, int], ...]:
    """(resource, amount) pairs the Filter compares with free capacity, in reason order.

    cpu, memory and ephemeral-storage first, then scalar resources. Go walks the scalars
    in map order (random); we sort them by name so messages are stable. Zero requests,
    "pods" and untracked names are never checked; ignored extended resources are skipped.
    """
    checked = [(name, requests[name]) for name in _NATIVE_ORDER if requests.get(name, 0) > 0]
    for name in sorted(requests):
        amount = requests[name]
        if name in _NATIVE_ORDER or amount <= 0 or not is_scalar_resource(name):
            continue
        if is_extended_resource(name) and (
            name in ignored_resources or name.split("/", 1)[0] in ignored_groups
        ):
            continue
        checked.append((name, amount))
    return tuple(checked)
