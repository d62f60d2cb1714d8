"""Resource rows for scoring when an extended resource is backed by DRA (DRAExtendedResource).

kube-scheduler's resource-allocation scoring (NodeResourcesFit, BalancedAllocation) takes
a requested extended resource that a DeviceClass serves, on a node whose allocatable
does not list it (or lists zero), to have as much allocatable as the node has devices of
that class, and as much requested as are allocated (see `dra.device_counts`); a node with
no such devices leaves the resource out of its score as before. These rows depend on the
node's devices, not only on its resource amounts, so they are built node by node.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.device_counts import class_device_counts
from berth.engine.dra.selection import SelectorCache, SelectorFailure, cel_selector_cache
from berth.engine.model.resources import (
    CPU,
    MEMORY,
    PODS,
    is_dra_extended_resource,
    is_scalar_resource,
    is_tracked_resource,
)

__all__ = ["dra_backed_rows", "served_rows"]


@functools.cache
def _selectors() -> SelectorCache:
    """Class selectors compiled once, as kube-scheduler's scorer keeps its own CEL cache
    (made when first needed: it loads CEL's runtime)."""
    return cel_selector_cache()


_NONZERO_ROWS = {CPU: 0, MEMORY: 1}  # the layout of ClusterState.nonzero_requested


def served_rows(
    cluster: ClusterState, names: tuple[str, ...], pod_requests: NDArray[np.int64]
) -> list[int]:
    """Positions of the scored names the pod requests that a DeviceClass serves."""
    served = cluster.dra.classes_by_extended_resource()
    if not served:
        return []
    return [
        row
        for row, name in enumerate(names)
        if pod_requests[row] and is_dra_extended_resource(name) and name in served
    ]


def dra_backed_rows(
    cluster: ClusterState,
    slots: NodeSlots,
    names: tuple[str, ...],
    pod_requests: NDArray[np.int64],
    *,
    use_requested: bool,
    dra_rows: list[int],
) -> tuple[list[int], NDArray[np.int64], NDArray[np.int64]]:
    """(kept positions, allocatable, allocated), one row per kept name, one column per slot."""
    kept: list[int] = []
    allocatable_rows: list[NDArray[np.int64]] = []
    allocated_rows: list[NDArray[np.int64]] = []
    served = cluster.dra.classes_by_extended_resource()
    for row, name in enumerate(names):
        column = cluster.resource_column(name)
        if row not in dra_rows:
            if column is None or not is_tracked_resource(name) or name == PODS:
                continue
            if not pod_requests[row] and is_scalar_resource(name):
                continue
        kept.append(row)
        if column is None:
            allocatable = np.zeros(len(slots), dtype=np.int64)
            allocated = np.zeros(len(slots), dtype=np.int64)
        else:
            allocatable = cluster.allocatable[column].take(slots)
            nonzero = _NONZERO_ROWS.get(name)
            if nonzero is not None and not use_requested:
                allocated = cluster.nonzero_requested[nonzero].take(slots)
            else:
                allocated = cluster.requested[column].take(slots)
        if row in dra_rows:
            allocatable, allocated = allocatable.copy(), allocated.copy()
            _count_devices(cluster, slots, served[name], allocatable, allocated)
        allocatable_rows.append(allocatable)
        allocated_rows.append(allocated)
    shape = (len(kept), len(slots))
    return (
        kept,
        np.asarray(allocatable_rows, dtype=np.int64).reshape(shape),
        np.asarray(allocated_rows, dtype=np.int64).reshape(shape),
    )


def _count_devices(
    cluster: ClusterState,
    slots: NodeSlots,
    device_class: DeviceClass,
    allocatable: NDArray[np.int64],
    allocated: NDArray[np.int64],
) -> None:
    slices = cluster.dra.patched_slices()
    taken = cluster.dra.allocated_state()
    for position, slot in enumerate(slots.tolist()):
        if allocatable[position] != 0:
            continue  # a device plugin serves it here
        try:
            total, used = class_device_counts(
                cluster.node_at(slot),
                device_class,
                slices=slices,
                allocated=taken,
                selectors=_selectors(),
            )
        except SelectorFailure:
            continue  # kube-scheduler logs the failure and leaves the resource out
        if total > 0:
            allocatable[position] = total
            allocated[position] = used
