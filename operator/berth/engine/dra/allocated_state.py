"""Which devices are taken, and how much of shared devices' capacity, before a pod is placed.

Built from every allocated claim in the cluster plus the allocations the scheduler has
assumed but not yet written (in-flight pods), as kube-scheduler's allocated-devices tracker
does: a device given with admin access is not taken; a share of a device that allows
multiple allocations is recorded by its share ID with the capacity it consumed; every
other device is taken whole.

`AllocationTally` keeps those totals up to date claim by claim, as upstream's tracker is
updated by claim events, so that a pod's PreFilter copies a few sets instead of walking
every allocated claim in the cluster (10,000 claims cost ~4 ms per pod that way).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.values import DeviceID, QualifiedName

_Key = TypeVar("_Key")

__all__ = ["AllocatedState", "AllocationTally"]


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


class AllocationTally:
    """`AllocatedState.of` over a set of claims that changes one claim at a time.

    Every entry is counted (devices, shares, and each consumed capacity name per device),
    so that taking a claim's allocation away leaves exactly what `of` computes from the
    others.
    """

    def __init__(self) -> None:
        self._allocations: dict[str, AllocationResult] = {}
        self._devices: Counter[DeviceID] = Counter()
        self._shared: Counter[tuple[DeviceID, str]] = Counter()
        self._shared_ids: Counter[DeviceID] = Counter()
        self._capacity_users: Counter[DeviceID] = Counter()
        self._capacity: dict[DeviceID, dict[QualifiedName, tuple[Fraction, int]]] = {}

    def set(self, key: str, allocation: AllocationResult | None) -> None:
        """What the claim `key` holds now (None: nothing, or the claim is gone)."""
        previous = self._allocations.pop(key, None)
        if previous is allocation:
            if allocation is not None:
                self._allocations[key] = allocation
            return
        if previous is not None:
            self._count(previous, -1)
        if allocation is not None:
            self._count(allocation, 1)
            self._allocations[key] = allocation

    def state(self) -> AllocatedState:
        return AllocatedState(
            devices=frozenset(self._devices),
            shared_devices=frozenset(self._shared),
            shared_ids=frozenset(self._shared_ids),
            capacity={
                device: {name: total for name, (total, _) in totals.items()}
                for device, totals in self._capacity.items()
            },
        )

    def _count(self, allocation: AllocationResult, step: int) -> None:
        for result in allocation.devices:
            if result.admin_access:
                continue
            device = result.id
            if result.share_id is None:
                _bump(self._devices, device, step)
                continue
            _bump(self._shared, (device, result.share_id), step)
            _bump(self._shared_ids, device, step)
            if result.consumed_capacity is None:
                continue
            _bump(self._capacity_users, device, step)
            totals = self._capacity.setdefault(device, {})
            for name, amount in result.consumed_capacity.items():
                total, users = totals.get(name, (Fraction(0), 0))
                if users + step:
                    totals[name] = (total + step * amount.value, users + step)
                else:
                    del totals[name]
            if not self._capacity_users[device]:
                del self._capacity[device]


def _bump(counts: Counter[_Key], key: _Key, step: int) -> None:
    left = counts[key] + step
    if left:
        counts[key] = left
    else:
        del counts[key]
