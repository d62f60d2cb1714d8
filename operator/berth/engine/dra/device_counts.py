"""How many devices of a class a node has, and how many are taken (scoring DRA-backed resources).

When NodeResourcesFit or NodeResourcesBalancedAllocation scores an extended resource that
a DeviceClass serves on a node whose allocatable lacks it, kube-scheduler counts the
node's devices matching the class's selectors as the allocatable amount, and those
already allocated as the requested one. It walks every slice (patched with the device
taint rules) without the allocator's pool checks: a slice is the node's when it names the
node, spans all nodes, or its node selector matches (a slice naming nothing counts
everywhere); with per-device node selection each device is judged alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.pools import NodeLike
from berth.engine.dra.selection import CelDevice, SelectorCache
from berth.engine.dra.slices import Device, NodeSelection, ResourceSlice
from berth.engine.dra.values import DeviceID

__all__ = ["class_device_counts"]


def _device_on(node: NodeLike, selection: NodeSelection) -> bool:
    if selection.all_nodes or (selection.node_name and selection.node_name == node.name):
        return True
    return selection.selector is not None and selection.selector.matches(node.labels, node.name)


def _slice_on(node: NodeLike, selection: NodeSelection) -> bool:
    if not selection.all_nodes and selection.node_name != node.name and selection.selector:
        return selection.selector.matches(node.labels, node.name)
    return selection.all_nodes or not selection.node_name or selection.node_name == node.name


def _node_devices(node: NodeLike, resource_slice: ResourceSlice) -> list[Device]:
    if resource_slice.per_device_node_selection:
        return [device for device in resource_slice.devices if _device_on(node, device.node)]
    return list(resource_slice.devices) if _slice_on(node, resource_slice.node) else []


def class_device_counts(
    node: NodeLike,
    device_class: DeviceClass,
    *,
    slices: Iterable[ResourceSlice],
    allocated: AllocatedState,
    selectors: SelectorCache,
) -> tuple[int, int]:
    """(devices of the class on the node, how many of them are allocated).

    Raises `SelectorFailure` when a class selector cannot be evaluated.
    """
    total = taken = 0
    for resource_slice in slices:
        driver, pool = resource_slice.driver, resource_slice.pool.name
        for device in _node_devices(node, resource_slice):
            device_id = DeviceID(driver, pool, device.name)
            if device_class.selectors:
                seen = CelDevice.of(
                    driver=driver,
                    attributes=device.attributes,
                    capacity=device.capacity,
                    allow_multiple_allocations=device.allow_multiple_allocations,
                )
                if not all(
                    selectors.matches(
                        expression=expression,
                        device=seen,
                        device_id=device_id,
                        owner=f"class {device_class.name}",
                        index=index,
                    )
                    for index, expression in enumerate(device_class.selectors)
                ):
                    continue
            total += 1
            if device_id in allocated.devices or device_id in allocated.shared_ids:
                taken += 1
    return total, taken
