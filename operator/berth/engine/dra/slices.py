"""ResourceSlice (resource.k8s.io/v1): the devices a driver publishes, parsed once.

A slice belongs to one pool of one driver; the pool's generation and slice count decide
whether the scheduler may use it (see `pools`). Where a slice's devices can be used is said
once for the slice (nodeName, nodeSelector, allNodes) or, with perDeviceNodeSelection, per
device. Devices carry the attributes and capacities that selectors read, the counters they
consume from the pool's shared counter sets (partitionable devices), consumable capacity
with its request policy, taints, and binding conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.engine.dra.values import (
    Amount,
    AttributeValue,
    QualifiedName,
    parse_amount,
    parse_attribute,
    parse_entries,
    parse_object,
    parse_optional_amount,
    required_name,
)
from berth.engine.errors import FieldError
from berth.engine.model.labels import NodeSelector, parse_node_selector
from berth.engine.model.parsing import (
    RawObject,
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
)

__all__ = [
    "CapacityRequestPolicy",
    "CounterConsumption",
    "CounterSet",
    "Device",
    "DeviceCapacity",
    "DeviceTaint",
    "NodeSelection",
    "PoolRef",
    "ResourceSlice",
    "ValidRange",
    "parse_device_taint",
]


@dataclass(frozen=True, slots=True)
class NodeSelection:
    """Where a slice's (or a device's) devices are available; at most one way is set."""

    node_name: str = ""
    all_nodes: bool = False
    selector: NodeSelector | None = None
    selector_raw: Mapping[str, Any] | None = None  # as written, for an allocation's node selector

    @property
    def is_set(self) -> bool:
        return bool(self.node_name) or self.all_nodes or self.selector is not None


@dataclass(frozen=True, slots=True)
class ValidRange:
    min: Amount
    max: Amount | None = None
    step: Amount | None = None


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """How much of a consumable capacity one allocation may take, and how requests round up."""

    default: Amount | None = None
    valid_values: tuple[Amount, ...] = ()
    valid_range: ValidRange | None = None


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: Amount
    request_policy: CapacityRequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: Mapping[str, Amount]
    compatibility_groups: tuple[str, ...] = ()  # alpha (DRADeviceCompatibilityGroups)


@dataclass(frozen=True, slots=True)
class CounterSet:
    name: str
    counters: Mapping[str, Amount]


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str  # NoSchedule, NoExecute, None, or something newer that the allocator ignores


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    attributes: Mapping[QualifiedName, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[QualifiedName, DeviceCapacity] = field(default_factory=dict)
    consumes_counters: tuple[CounterConsumption, ...] = ()
    node: NodeSelection = NodeSelection()  # only with the slice's perDeviceNodeSelection
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()


@dataclass(frozen=True, slots=True)
class PoolRef:
    name: str
    generation: int
    resource_slice_count: int


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: PoolRef
    node: NodeSelection
    per_device_node_selection: bool
    devices: tuple[Device, ...]
    shared_counters: tuple[CounterSet, ...] = ()
    resource_version: str = ""

    @property
    def key(self) -> str:
        return self.name

    @classmethod
    def from_dict(cls, raw: RawObject) -> ResourceSlice:
        """Parse a resource.k8s.io/v1 ResourceSlice; raises `InvalidObjectError` naming the field."""
        return parse_object("ResourceSlice", raw, _parse_slice, namespaced=False)


def _parse_slice(raw: RawObject) -> ResourceSlice:
    name = required_name(raw.get("metadata"), "metadata")
    metadata = as_map(raw.get("metadata"), "metadata")
    spec = as_map(raw.get("spec"), "spec")
    driver = as_str(spec.get("driver"), "spec.driver")
    if not driver:
        raise FieldError("spec.driver", "must be set")
    pool = as_map(spec.get("pool"), "spec.pool")
    pool_name = as_str(pool.get("name"), "spec.pool.name")
    if not pool_name:
        raise FieldError("spec.pool.name", "must be set")
    slice_count = as_int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount")
    if slice_count < 1:
        raise FieldError("spec.pool.resourceSliceCount", "must be at least 1")
    per_device = as_bool(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection")
    node = _parse_node_selection(spec, "spec")
    if node.is_set == per_device:
        raise FieldError(
            "spec",
            "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection must be set",
        )
    return ResourceSlice(
        name=name,
        driver=driver,
        pool=PoolRef(
            name=pool_name,
            generation=as_int(pool.get("generation"), "spec.pool.generation"),
            resource_slice_count=slice_count,
        ),
        node=node,
        per_device_node_selection=per_device,
        devices=tuple(
            _parse_device(item, f"spec.devices[{index}]", per_device=per_device)
            for index, item in enumerate(as_list(spec.get("devices"), "spec.devices"))
        ),
        shared_counters=tuple(
            CounterSet(
                name=required_name(item, f"spec.sharedCounters[{index}]"),
                counters=_parse_counters(item, f"spec.sharedCounters[{index}]"),
            )
            for index, item in enumerate(as_list(spec.get("sharedCounters"), "spec.sharedCounters"))
        ),
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
    )


def _parse_counters(raw: object, field: str) -> dict[str, Amount]:
    counters = parse_entries(
        as_map(raw, field).get("counters"), f"{field}.counters", _parse_counter
    )
    return {str(name): amount for name, amount in counters.items()}


def _parse_counter(raw: object, field: str) -> Amount:
    return parse_amount(as_map(raw, field).get("value"), f"{field}.value")


def _parse_node_selection(raw: RawObject, field: str) -> NodeSelection:
    selector_raw = raw.get("nodeSelector")
    selector = parse_node_selector(selector_raw, f"{field}.nodeSelector")
    node_name = as_str(raw.get("nodeName"), f"{field}.nodeName")
    all_nodes = as_bool(raw.get("allNodes"), f"{field}.allNodes")
    if sum((bool(node_name), all_nodes, selector is not None)) > 1:
        raise FieldError(field, "at most one of nodeName, nodeSelector, allNodes may be set")
    return NodeSelection(
        node_name=node_name,
        all_nodes=all_nodes,
        selector=selector,
        selector_raw=as_map(selector_raw, f"{field}.nodeSelector") if selector else None,
    )


def _parse_device(raw: object, field: str, *, per_device: bool) -> Device:
    device = as_map(raw, field)
    name = required_name(device, field)
    node = _parse_node_selection(device, field)
    if per_device and not node.is_set:
        raise FieldError(
            field, "one of nodeName, nodeSelector, allNodes must be set (perDeviceNodeSelection)"
        )
    if node.is_set and not per_device:
        raise FieldError(field, "node selection per device needs spec.perDeviceNodeSelection")
    attributes = as_map(device.get("attributes"), f"{field}.attributes")
    capacity = as_map(device.get("capacity"), f"{field}.capacity")
    allow_multiple = device.get("allowMultipleAllocations")
    return Device(
        name=name,
        attributes=parse_entries(attributes, f"{field}.attributes", parse_attribute),
        capacity=parse_entries(capacity, f"{field}.capacity", _parse_capacity),
        consumes_counters=tuple(
            _parse_consumption(item, f"{field}.consumesCounters[{index}]")
            for index, item in enumerate(
                as_list(device.get("consumesCounters"), f"{field}.consumesCounters")
            )
        ),
        node=node,
        binds_to_node=as_bool(device.get("bindsToNode"), f"{field}.bindsToNode"),
        binding_conditions=_strings(device.get("bindingConditions"), f"{field}.bindingConditions"),
        binding_failure_conditions=_strings(
            device.get("bindingFailureConditions"), f"{field}.bindingFailureConditions"
        ),
        allow_multiple_allocations=None
        if allow_multiple is None
        else as_bool(allow_multiple, f"{field}.allowMultipleAllocations"),
        taints=tuple(
            parse_device_taint(item, f"{field}.taints[{index}]")
            for index, item in enumerate(as_list(device.get("taints"), f"{field}.taints"))
        ),
    )


def _strings(raw: object, field: str) -> tuple[str, ...]:
    return tuple(
        as_str(item, f"{field}[{index}]") for index, item in enumerate(as_list(raw, field))
    )


def _parse_consumption(raw: object, field: str) -> CounterConsumption:
    consumption = as_map(raw, field)
    counter_set = as_str(consumption.get("counterSet"), f"{field}.counterSet")
    if not counter_set:
        raise FieldError(f"{field}.counterSet", "must be set")
    return CounterConsumption(
        counter_set=counter_set,
        counters=_parse_counters(consumption, field),
        compatibility_groups=_strings(
            consumption.get("compatibilityGroups"), f"{field}.compatibilityGroups"
        ),
    )


def _parse_capacity(raw: object, field: str) -> DeviceCapacity:
    capacity = as_map(raw, field)
    policy_raw = capacity.get("requestPolicy")
    policy = None
    if policy_raw is not None:
        where = f"{field}.requestPolicy"
        policy_map = as_map(policy_raw, where)
        range_raw = policy_map.get("validRange")
        valid_range = None
        if range_raw is not None:
            range_map = as_map(range_raw, f"{where}.validRange")
            valid_range = ValidRange(
                min=parse_amount(range_map.get("min"), f"{where}.validRange.min"),
                max=parse_optional_amount(range_map.get("max"), f"{where}.validRange.max"),
                step=parse_optional_amount(range_map.get("step"), f"{where}.validRange.step"),
            )
            if valid_range.step is not None and valid_range.step.units <= 0:
                raise FieldError(f"{where}.validRange.step", "must be greater than zero")
        policy = CapacityRequestPolicy(
            default=parse_optional_amount(policy_map.get("default"), f"{where}.default"),
            valid_values=tuple(
                parse_amount(item, f"{where}.validValues[{index}]")
                for index, item in enumerate(
                    as_list(policy_map.get("validValues"), f"{where}.validValues")
                )
            ),
            valid_range=valid_range,
        )
    return DeviceCapacity(
        value=parse_amount(capacity.get("value"), f"{field}.value"), request_policy=policy
    )


def parse_device_taint(raw: object, field: str) -> DeviceTaint:
    """A DeviceTaint (a device's, or a DeviceTaintRule's spec.taint)."""
    taint = as_map(raw, field)
    key = as_str(taint.get("key"), f"{field}.key")
    if not key:
        raise FieldError(f"{field}.key", "must be set")
    effect = as_str(taint.get("effect"), f"{field}.effect")
    if not effect:
        raise FieldError(f"{field}.effect", "must be set")
    return DeviceTaint(key=key, value=as_str(taint.get("value"), f"{field}.value"), effect=effect)
