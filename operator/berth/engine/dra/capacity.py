"""Consumable capacity (DRAConsumableCapacity, beta and on in v1.37): sharing one device by amount.

A device that allows multiple allocations is handed out in shares; each share consumes some
of each capacity, rounded up by the capacity's request policy (a default when the request
names no amount, the next valid value, or the next step of a valid range). A request fits
a device when every capacity it names exists, every consumed amount obeys the policy, and
what is already allocated plus what this pod's other claims are taking plus this share
stays within the device's value. With DRAFractionalCapacityRange off (its v1.37 default)
range steps are counted in whole units (upstream's `Value()`, rounding up).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from berth.engine.dra.slices import CapacityRequestPolicy, DeviceCapacity, ValidRange
from berth.engine.dra.values import Amount, QualifiedName, amount_of_units

__all__ = ["CapacityError", "consumed_capacity", "fits_capacity"]

_INT64_MAX = 2**63 - 1


class CapacityError(ValueError):
    """A request cannot be represented in a capacity's range arithmetic (int64 overflow)."""


def _consumed(requested: Amount | None, capacity: DeviceCapacity) -> Amount:
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None:
        return _round_up_to_range(requested, policy.valid_range)
    for valid in policy.valid_values:
        if requested.value <= valid.value:
            return valid
    return requested


def _round_up_to_range(requested: Amount, valid_range: ValidRange) -> Amount:
    if requested.value < valid_range.min.value:
        return valid_range.min
    step = valid_range.step
    if step is None:
        return requested
    if requested.value > _INT64_MAX:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: "
            f"request {requested.text} exceeds MaxInt64"
        )
    minimum = valid_range.min.units
    added = requested.units - minimum
    steps = -(-added // step.units)  # rounds up; added >= 0 since requested >= min
    if minimum >= 0 and steps > (_INT64_MAX - minimum) // step.units:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: "
            f"rounding request {requested.text} up to the next step passes MaxInt64"
        )
    return amount_of_units(minimum + step.units * steps, step.form)


def _violates(consumed: Amount, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and consumed.value == policy.default.value:
        return False
    valid_range = policy.valid_range
    if valid_range is not None:
        if valid_range.max is not None and consumed.value > valid_range.max.value:
            return True
        step = valid_range.step
        return step is not None and (consumed.units - valid_range.min.units) % step.units != 0
    if policy.valid_values:
        return all(consumed.value != valid.value for valid in policy.valid_values)
    return False


def consumed_capacity(
    requests: Mapping[QualifiedName, Amount] | None,
    capacities: Mapping[QualifiedName, DeviceCapacity],
) -> dict[QualifiedName, Amount]:
    """What one share consumes of each of the device's capacities. Raises `CapacityError`."""
    wanted = requests or {}
    consumed: dict[QualifiedName, Amount] = {}
    for name, capacity in capacities.items():
        try:
            consumed[name] = _consumed(wanted.get(name), capacity)
        except CapacityError as error:
            raise CapacityError(f'capacity "{name}": {error}') from None
    return consumed


def fits_capacity(
    *,
    requests: Mapping[QualifiedName, Amount] | None,
    capacities: Mapping[QualifiedName, DeviceCapacity],
    allocated: Mapping[QualifiedName, Fraction],
    allocating: Mapping[QualifiedName, Fraction],
) -> bool:
    """Whether one more share fits beside what is `allocated` and being `allocating`."""
    if requests and any(name not in capacities for name in requests):
        return False
    consumed = consumed_capacity(requests, capacities)
    for name, capacity in capacities.items():
        amount = consumed[name]
        if _violates(amount, capacity.request_policy):
            return False
        total = amount.value
        # Most devices are not shared: skip exact additions of nothing.
        if name in allocated:
            total += allocated[name]
        if name in allocating:
            total += allocating[name]
        if total > capacity.value.value:
            return False
    return True
