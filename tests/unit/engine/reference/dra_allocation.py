"""A plain reference for the DRA allocator: try every assignment, check each from scratch.

No undo logs, no memo, no pruning beyond "a prefix that is already invalid stays invalid":
for each request in turn (claims in order, requests in order), every choice of subrequest
and every combination of devices is tried in kube-scheduler's order, and the whole
assignment so far is re-validated from nothing with `valid`. The first complete valid
assignment is the one kube-scheduler's depth-first search returns, because both walk the
choices in the same lexicographic order and every check is monotonic.

Only complete, valid pools of one generation are supported (the property tests generate
those; pool rules have their own unit tests), and "All" requests take part in no constraint
(upstream turns that case into an error, tested separately).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.requests import DeviceToleration, RequestSpec
from berth.engine.dra.selection import CelDevice, SelectorCompiler
from berth.engine.dra.slices import Device, ResourceSlice
from berth.engine.dra.values import Amount, DeviceID, QualifiedName


@dataclass(frozen=True)
class Option:
    device: Device
    id: DeviceID
    pool: tuple[str, str]


@dataclass(frozen=True)
class Choice:
    """The devices picked for one request: via `spec` (a subrequest when `parent` is set)."""

    request: str  # the claim's request name
    spec: RequestSpec
    parent: bool
    devices: tuple[Option, ...]

    @property
    def name(self) -> str:
        return f"{self.request}/{self.spec.name}" if self.parent else self.request


def ordered_devices(slices: Sequence[ResourceSlice]) -> list[Option]:
    """All devices in kube-scheduler's order: pools by driver and name (binding conditions last),
    slices by name, devices as listed."""

    def pool_key(resource_slice: ResourceSlice) -> tuple[bool, str, str, str]:
        pool = (resource_slice.driver, resource_slice.pool.name)
        with_binding = any(
            device.binding_conditions
            for other in slices
            if (other.driver, other.pool.name) == pool
            for device in other.devices
        )
        return (with_binding, *pool, resource_slice.name)

    return [
        Option(
            device,
            DeviceID(item.driver, item.pool.name, device.name),
            (item.driver, item.pool.name),
        )
        for item in sorted((s for s in slices if not s.shared_counters), key=pool_key)
        for device in item.devices
    ]


def _selected(
    compile_selector: SelectorCompiler, expressions: Sequence[str | None], option: Option
) -> bool:
    view = CelDevice.of(
        driver=option.id.driver,
        attributes=option.device.attributes,
        capacity=option.device.capacity,
        allow_multiple_allocations=option.device.allow_multiple_allocations,
    )
    return all(
        expression is not None and compile_selector(expression).matches(view)
        for expression in expressions
    )


def _consumed(spec: RequestSpec, device: Device) -> dict[QualifiedName, Amount]:
    wanted = spec.capacity or {}
    consumed = {}
    for name, capacity in device.capacity.items():
        amount = wanted.get(name)
        policy = capacity.request_policy
        if amount is None:
            amount = policy.default if policy and policy.default else capacity.value
        consumed[name] = amount
    return consumed


def _capacity_fits(
    spec: RequestSpec, device: Device, used: Mapping[QualifiedName, Fraction]
) -> bool:
    """Without request policies (the property tests generate none)."""
    if any(name not in device.capacity for name in spec.capacity or {}):
        return False
    return all(
        used.get(name, 0) + amount.value <= device.capacity[name].value.value
        for name, amount in _consumed(spec, device).items()
    )


def _tolerated(device: Device, tolerations: tuple[DeviceToleration, ...]) -> bool:
    for taint in device.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(
            (not t.effect or t.effect == taint.effect)
            and (not t.key or t.key == taint.key)
            and (t.operator == "Exists" or t.value == taint.value)
            for t in tolerations
        ):
            return False
    return True


def _attribute(option: Option, name: str) -> object:
    value = option.device.attributes.get(QualifiedName(name))
    domain, _, short = name.partition("/")
    if value is None and domain == option.id.driver:
        value = option.device.attributes.get(QualifiedName(short))
    return None if value is None else (type(value), value)


def valid(
    assignment: Sequence[Sequence[Choice]],
    claims: Sequence[ResourceClaim],
    allocated: AllocatedState,
    slices: Sequence[ResourceSlice],
) -> bool:
    """Whether the assignment (per claim, per request so far) breaks nothing."""
    counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
    for item in slices:
        for counter_set in item.shared_counters:
            counters.setdefault((item.driver, item.pool.name), {})[counter_set.name] = {
                name: amount.value for name, amount in counter_set.counters.items()
            }
    for item in slices:
        for device in item.devices:
            if allocated.is_allocated(DeviceID(item.driver, item.pool.name, device.name)):
                for consumption in device.consumes_counters:
                    for name, amount in consumption.counters.items():
                        counters[(item.driver, item.pool.name)][consumption.counter_set][name] -= (
                            amount.value
                        )
    taken: dict[DeviceID, set[int]] = {}
    capacity: dict[DeviceID, dict[QualifiedName, Fraction]] = {}
    for claim_index, choices in enumerate(assignment):
        watched: list[list[object]] = [[] for _ in claims[claim_index].spec.constraints]
        for choice in choices:
            for option in choice.devices:
                device, device_id = option.device, option.id
                shared = bool(device.allow_multiple_allocations)
                if choice.spec.admin_access:
                    if claim_index in taken.get(device_id, ()):
                        return False
                elif device_id in allocated.devices or taken.get(device_id):
                    return False
                if not _tolerated(device, choice.spec.tolerations):
                    return False
                already_shared = allocated.is_shared(device_id) or device_id in capacity
                if device.consumes_counters and not (shared and already_shared):
                    for consumption in device.consumes_counters:
                        left = counters[option.pool][consumption.counter_set]
                        for name, amount in consumption.counters.items():
                            left[name] -= amount.value
                            if left[name] < 0:
                                return False
                for index, constraint in enumerate(claims[claim_index].spec.constraints):
                    names = constraint.requests
                    if names and choice.request not in names and choice.name not in names:
                        continue
                    value = _attribute(
                        option, constraint.match_attribute or constraint.distinct_attribute or ""
                    )
                    if value is None:
                        return False
                    if constraint.match_attribute and watched[index] and watched[index][0] != value:
                        return False
                    if constraint.distinct_attribute and value in watched[index]:
                        return False
                    watched[index].append(value)
                if not shared:
                    taken.setdefault(device_id, set()).add(claim_index)
                used = dict(allocated.capacity.get(device_id, {}))
                for name, amount in capacity.get(device_id, {}).items():
                    used[name] = used.get(name, 0) + amount
                if not _capacity_fits(choice.spec, device, used):
                    return False
                if shared:
                    totals = capacity.setdefault(device_id, {})
                    for name, consumed in _consumed(choice.spec, device).items():
                        totals[name] = totals.get(name, 0) + consumed.value
    return True


def _choices(
    claim: ResourceClaim,
    request_index: int,
    devices: list[Option],
    classes: Mapping[str, DeviceClass],
    compile_selector: SelectorCompiler,
) -> list[Choice]:
    request = claim.spec.requests[request_index]
    specs = [(spec, True) for spec in request.first_available] or [(request.exactly, False)]
    choices = []
    for spec, parent in specs:
        assert spec is not None
        device_class = classes[spec.device_class_name]
        fitting = [
            option
            for option in devices
            if _selected(compile_selector, device_class.selectors, option)
            and _selected(compile_selector, spec.selectors, option)
        ]
        if spec.allocation_mode == "All":
            everything = tuple(
                option for option in fitting if _capacity_fits(spec, option.device, {})
            )
            combos = [everything] if everything else []
        else:
            combos = list(itertools.combinations(fitting, spec.count))
        choices.extend(Choice(request.name, spec, parent, combo) for combo in combos)
    return choices


def reference_allocation(
    *,
    claims: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    classes: Mapping[str, DeviceClass],
    allocated: AllocatedState,
    compile_selector: SelectorCompiler,
) -> list[list[Choice]] | None:
    """The first valid assignment in kube-scheduler's order, or None when there is none."""
    devices = ordered_devices(slices)
    positions = [(c, r) for c, claim in enumerate(claims) for r in range(len(claim.spec.requests))]

    def search(depth: int, assignment: list[list[Choice]]) -> list[list[Choice]] | None:
        if depth == len(positions):
            return assignment
        claim_index, request_index = positions[depth]
        for choice in _choices(
            claims[claim_index], request_index, devices, classes, compile_selector
        ):
            extended = [list(choices) for choices in assignment]
            extended[claim_index].append(choice)
            if valid(extended, claims, allocated, slices):
                found = search(depth + 1, extended)
                if found is not None:
                    return found
        return None

    return search(0, [[] for _ in claims])
