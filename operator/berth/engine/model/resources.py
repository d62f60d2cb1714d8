"""Resource names and resource lists in the engine's canonical integer units."""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.errors import FieldError
from berth.engine.model.parsing import brief, brief_name
from berth.engine.model.quantity import to_milli, to_units, wrap_int64

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# kube-scheduler's per-container stand-ins for a missing request, used only when
# NodeResourcesFit *scores* (never when it filters).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

ResourceList = Mapping[str, int]


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages, attachable-volume and prefixed native resources.

    These are the names kube-scheduler tracks beyond cpu, memory, ephemeral
    storage and pods; anything else (an unprefixed unknown name) is ignored.
    """
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def is_extended_resource(name: str) -> bool:
    """A resource outside the kubernetes.io namespace (e.g. ``example.com/gpu``)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


# The name every DeviceClass answers to, besides its own `extendedResourceName`.
DEVICE_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"


def is_dra_extended_resource(name: str) -> bool:
    """A name a DeviceClass may stand behind: an extended resource, or a class's implicit name."""
    return is_extended_resource(name) or name.startswith(DEVICE_CLASS_RESOURCE_PREFIX)


def is_tracked_resource(name: str) -> bool:
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar_resource(name)


def canonical_amount(name: str, value: object) -> int:
    """A quantity in the unit the engine counts `name` in: millicores for CPU, else whole units
    (an int64, as upstream's MilliValue()/Value() give it)."""
    return to_milli(value) if name == CPU else to_units(value)


def parse_resource_list(raw: object) -> dict[str, int]:
    """Parse ``{"cpu": "500m", "memory": "1Gi", ...}`` into canonical integers.

    Untracked names are kept out so that they cannot change any decision. Negative
    quantities are refused (as kube-apiserver refuses them).
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FieldError("", f"expected a map of resource names to quantities, got {brief(raw)}")
    parsed: dict[str, int] = {}
    for name, value in raw.items():
        if not isinstance(name, str):
            raise FieldError("", f"resource name {brief(name)} is not a string")
        try:
            amount = canonical_amount(name, value)
        except FieldError as error:
            raise FieldError(brief_name(name), error.problem) from None
        if is_tracked_resource(name):
            parsed[name] = amount
    return parsed


def add_into(total: dict[str, int], extra: ResourceList) -> None:
    # kube-scheduler sums in int64; so do we, so that absurd amounts wrap as they do there.
    for name, amount in extra.items():
        total[name] = wrap_int64(total.get(name, 0) + amount)


def max_into(total: dict[str, int], other: ResourceList) -> None:
    for name, amount in other.items():
        if amount > total.get(name, 0):
            total[name] = amount
