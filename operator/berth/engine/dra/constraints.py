"""Claim constraints (matchAttribute, distinctAttribute) and device taints, as the search checks them.

A constraint watches the devices chosen for the requests it names (all requests when it
names none). matchAttribute: every such device has the attribute, with the same value and
type; distinctAttribute (part of DRAConsumableCapacity): no two share a value. Constraints
are monotonic (once violated, more devices never help), which lets the search prune; each
accepted device is undone in reverse order when the search backtracks.

A device taint with effect NoSchedule or NoExecute keeps a device from a request unless
one of the request's tolerations tolerates it (DRADeviceTaints, GA in v1.37).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from berth.engine.dra.requests import DeviceToleration
from berth.engine.dra.slices import Device, DeviceTaint
from berth.engine.dra.values import AttributeValue, DeviceID, QualifiedName

__all__ = [
    "Constraint",
    "DistinctAttribute",
    "MatchAttribute",
    "lookup_attribute",
    "taint_prevents_allocation",
]


def lookup_attribute(device: Device, device_id: DeviceID, name: str) -> AttributeValue | None:
    """A fully qualified attribute; a bare name on the device counts in the driver's domain."""
    value = device.attributes.get(QualifiedName(name))
    if value is not None:
        return value
    domain, slash, short = name.partition("/")
    if not slash or domain != device_id.driver:
        return None
    return device.attributes.get(QualifiedName(short))


def _same(left: AttributeValue, right: AttributeValue) -> bool:
    # Typed equality: True is not 1, and "1" is not 1.
    return type(left) is type(right) and left == right


class Constraint(Protocol):
    def add(self, request: str, subrequest: str, device: Device, device_id: DeviceID) -> bool:
        """Accept the device for the (sub)request if the constraint still holds, and track it."""

    def remove(self, request: str, subrequest: str) -> None:
        """Undo the latest accepted `add` for the same (sub)request."""


def _watches(requests: frozenset[str], request: str, subrequest: str) -> bool:
    if not requests or request in requests:
        return True
    return bool(subrequest) and f"{request}/{subrequest}" in requests


@dataclass(slots=True)
class MatchAttribute:
    requests: frozenset[str]
    attribute: str
    first: AttributeValue | None = None
    count: int = 0

    def add(self, request: str, subrequest: str, device: Device, device_id: DeviceID) -> bool:
        if not _watches(self.requests, request, subrequest):
            return True
        value = lookup_attribute(device, device_id, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.first = value
        elif self.first is None or not _same(value, self.first):
            return False
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if _watches(self.requests, request, subrequest):
            self.count -= 1


@dataclass(slots=True)
class DistinctAttribute:
    requests: frozenset[str]
    attribute: str
    seen: list[AttributeValue] = field(default_factory=list)

    def add(self, request: str, subrequest: str, device: Device, device_id: DeviceID) -> bool:
        if not _watches(self.requests, request, subrequest):
            return True
        value = lookup_attribute(device, device_id, self.attribute)
        if value is None or any(_same(value, earlier) for earlier in self.seen):
            return False
        self.seen.append(value)
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if _watches(self.requests, request, subrequest):
            self.seen.pop()


def _tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def taint_prevents_allocation(device: Device, tolerations: tuple[DeviceToleration, ...]) -> bool:
    """A NoSchedule or NoExecute taint that no toleration tolerates (other effects never block)."""
    return any(
        taint.effect in ("NoSchedule", "NoExecute")
        and not any(_tolerates(toleration, taint) for toleration in tolerations)
        for taint in device.taints
    )
