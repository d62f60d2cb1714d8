"""Resource names and resource lists in the engine's canonical integer units."""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.errors import FieldError
from berth.engine.model.quantity import to_milli, to_units

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# kube-scheduler's per-container stand-ins for a missing request, used only when
# NodeResourcesFit *scores* (never when it filters).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

ResourceList = Mapping[str, int]

# kube-scheduler counts in int64, and resource.ParseQuantity caps binary-suffixed quantities
# ("16Ei") at 2^63-1. Larger decimal ones ("20E", 2^63-1 cores in millicores) wrap around in
# kube-scheduler's arithmetic; Berth does not imitate that garbage and holds every amount at
# the cap, so that the node table's int64 columns can take it.
MAX_AMOUNT = 2**63 - 1


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages, attachable-volume and prefixed native resources.

    These are the names kube-scheduler tracks beyond cpu, memory, ephemeral
    storage and pods; anything else (an unprefixed unknown name) is ignored.
    """
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def is_tracked_resource(name: str) -> bool:
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar_resource(name)


def canonical_amount(name: str, value: object) -> int:
    """A quantity in the unit the engine counts `name` in: millicores for CPU, else whole units,
    held within int64 like every amount kube-scheduler counts."""
    amount = to_milli(value) if name == CPU else to_units(value)
    return max(-MAX_AMOUNT, min(amount, MAX_AMOUNT))


def parse_resource_list(raw: object, *, allow_negative: bool = False) -> dict[str, int]:
    """Parse ``{"cpu": "500m", "memory": "1Gi", ...}`` into canonical integers.

    Untracked names are kept out so that they cannot change any decision.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FieldError("", f"expected a map of resource names to quantities, got {raw!r}")
    parsed: dict[str, int] = {}
    for name, value in raw.items():
        if not isinstance(name, str):
            raise FieldError("", f"resource name {name!r} is not a string")
        try:
            amount = canonical_amount(name, value)
        except FieldError as error:
            raise FieldError(name, error.problem) from None
        if amount < 0 and not allow_negative:
            raise FieldError(name, f"quantity {value!r} must not be negative")
        if is_tracked_resource(name):
            parsed[name] = amount
    return parsed


def add_into(total: dict[str, int], extra: ResourceList) -> None:
    """Add `extra` into `total`, each sum held at MAX_AMOUNT (a pod's totals stay int64)."""
    for name, amount in extra.items():
        total[name] = min(total.get(name, 0) + amount, MAX_AMOUNT)


def max_into(total: dict[str, int], other: ResourceList) -> None:
    for name, amount in other.items():
        if amount > total.get(name, 0):
            total[name] = amount
