"""Which devices are taken, and how much of shared devices' capacity, before a pod is placed.

Built from every allocated claim in the cluster plus the allocations the scheduler has
assumed but not yet written (in-flight pods), as kube-scheduler's allocated-devices tracker
does: a device given with admin access is not taken; a share of a device that allows
multiple allocations is recorded by its share ID with the capacity it consumed; every
other device is taken whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.values import DeviceID, QualifiedName

__all__ = ["AllocatedState"]


@dataclass(frozen=True, slots=True)
class AllocatedState:
    devices: frozenset[DeviceID] = frozenset()
    shared_devices: frozenset[tuple[DeviceID, str]] = frozenset()  # (device, share ID)
    shared_ids: frozenset[DeviceID] = frozenset()  # the devices of `shared_devices`
    capacity: Mapping[DeviceID, Mapping[QualifiedName, Fraction]] = field(default_factory=dict)

    @classmethod
    def of(cls, allocations: Iterable[AllocationResult]) -> AllocatedState:
        devices: set[DeviceID] = set()
        shared: set[tuple[DeviceID, str]] = set()
        capacity: dict[DeviceID, dict[QualifiedName, Fraction]] = {}
        for allocation in allocations:
            for result in allocation.devices:
                if result.admin_access:
                    continue
                if result.share_id is None:
                    devices.add(result.id)
                    continue
                shared.add((result.id, result.share_id))
                if result.consumed_capacity is not None:
                    totals = capacity.setdefault(result.id, {})
                    for name, amount in result.consumed_capacity.items():
                        totals[name] = totals.get(name, Fraction(0)) + amount.value
        return cls(
            devices=frozenset(devices),
            shared_devices=frozenset(shared),
            shared_ids=frozenset(device for device, _ in shared),
            capacity=capacity,
        )

    def is_allocated(self, device: DeviceID) -> bool:
        """Taken whole, or shared (counters are charged once for a shared device)."""
        return device in self.devices or self.is_shared(device)

    def is_shared(self, device: DeviceID) -> bool:
        return device in self.capacity or device in self.shared_ids
