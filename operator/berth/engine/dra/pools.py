"""Which resource pools a node can use, with the completeness rules kube-scheduler applies.

A driver publishes a pool as `resourceSliceCount` slices of one generation. The scheduler
uses a pool for a node only when it sees every slice of the pool's newest generation:
slices of an older generation are ignored, a pool whose newer generation is still arriving
is skipped, and a pool with too few slices is "incomplete" (nothing may be taken from it,
and a request for All devices fails). A pool whose device names repeat, or whose devices
consume counters no counter set defines, is "invalid". Pools are ordered by driver then
pool name, those with binding conditions last; slices inside a pool by name. That order
is the order in which the allocator tries devices, so it decides which devices are picked.

`SliceIndex` is built once per set of slices (not per pod, not per node): slices by node,
shared slices, slices by pool, and one `Candidate` per device carrying its ID and the view
selectors read. Gathered pools are remembered per node while the node's labels stay equal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

from berth.engine.dra.selection import CelDevice
from berth.engine.dra.slices import CounterSet, Device, NodeSelection, ResourceSlice
from berth.engine.dra.values import DeviceID

__all__ = [
    "Candidate",
    "IndexedSlice",
    "NodeLike",
    "Pool",
    "PoolID",
    "SliceIndex",
    "node_matches",
]


class NodeLike(Protocol):
    """What slice node selection reads of a node (`berth.engine.model.node.Node` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True, order=True)
class PoolID:
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


@dataclass(frozen=True, slots=True, eq=False)
class Candidate:
    """One device of one slice, as the allocator considers it."""

    id: DeviceID
    device: Device
    slice: ResourceSlice
    view: CelDevice
    # No request policy on any capacity: taken whole, it always fits (the common case).
    plain_capacity: bool
    # expression -> answer: a memo, because a selector's answer depends on the device alone.
    selector_answers: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False)
class IndexedSlice:
    slice: ResourceSlice
    candidates: tuple[Candidate, ...]

    @classmethod
    def of(cls, resource_slice: ResourceSlice) -> IndexedSlice:
        driver, pool = resource_slice.driver, resource_slice.pool.name
        return cls(
            resource_slice,
            tuple(
                Candidate(
                    id=DeviceID(driver, pool, device.name),
                    device=device,
                    slice=resource_slice,
                    view=CelDevice.of(
                        driver=driver,
                        attributes=device.attributes,
                        capacity=device.capacity,
                        allow_multiple_allocations=device.allow_multiple_allocations,
                    ),
                    plain_capacity=all(
                        capacity.request_policy is None for capacity in device.capacity.values()
                    ),
                )
                for device in resource_slice.devices
            ),
        )


@dataclass(frozen=True, slots=True, eq=False)
class Pool:
    id: PoolID
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: tuple[IndexedSlice, ...] = ()  # device slices whose devices this node may use
    other_slices: tuple[IndexedSlice, ...] = ()  # the pool's other device slices
    counter_sets: Mapping[str, CounterSet] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)

    def initial_counters(self) -> dict[str, dict[str, Fraction]]:
        """The counters of each counter set, as the pool declares them."""
        return {
            name: {counter: amount.value for counter, amount in counter_set.counters.items()}
            for name, counter_set in self.counter_sets.items()
        }


def node_matches(node: NodeLike, selection: NodeSelection) -> bool:
    """Upstream's NodeMatches: by name, everywhere, or by node selector; unset matches nothing."""
    if selection.node_name:
        return node.name == selection.node_name
    if selection.all_nodes:
        return True
    if selection.selector is not None:
        return selection.selector.matches(node.labels, node.name)
    return False


class SliceIndex:
    """All ResourceSlices, indexed for gathering one node's pools quickly."""

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self._on_node: dict[str, list[IndexedSlice]] = defaultdict(list)
        self._shared: list[IndexedSlice] = []
        self._by_pool: dict[PoolID, list[IndexedSlice]] = defaultdict(list)
        for resource_slice in slices:
            indexed = IndexedSlice.of(resource_slice)
            if resource_slice.node.node_name:
                self._on_node[resource_slice.node.node_name].append(indexed)
            else:
                self._shared.append(indexed)
            self._by_pool[PoolID(resource_slice.driver, resource_slice.pool.name)].append(indexed)
        self._gathered: dict[str, tuple[Mapping[str, str], tuple[Pool, ...]]] = {}

    def pools_for(self, node: NodeLike) -> tuple[Pool, ...]:
        """The pools `node` can use, in allocation order."""
        remembered = self._gathered.get(node.name)
        if remembered is not None and remembered[0] == node.labels:
            return remembered[1]
        pools = self._gather(node)
        self._gathered[node.name] = (dict(node.labels), pools)
        return pools

    def _gather(self, node: NodeLike) -> tuple[Pool, ...]:
        newest: dict[PoolID, list[IndexedSlice]] = {}
        for indexed in (*self._on_node.get(node.name, ()), *self._shared):
            if _uses_compatibility_groups(indexed.slice) or not _relevant(indexed.slice, node):
                continue
            pool_id = PoolID(indexed.slice.driver, indexed.slice.pool.name)
            known = newest.get(pool_id)
            generation = indexed.slice.pool.generation
            if known is None or generation > known[0].slice.pool.generation:
                newest[pool_id] = [indexed]
            elif generation == known[0].slice.pool.generation:
                known.append(indexed)
        plain: list[Pool] = []
        binding: list[Pool] = []
        for pool_id, targeting in newest.items():
            pool = self._pool(pool_id, targeting)
            if pool is None:
                continue
            (binding if _has_binding_conditions(pool) else plain).append(pool)
        return (*sorted(plain, key=_pool_order), *sorted(binding, key=_pool_order))

    def _pool(self, pool_id: PoolID, targeting: list[IndexedSlice]) -> Pool | None:
        first = targeting[0].slice.pool
        if len(targeting) == first.resource_slice_count:
            return _build_pool(pool_id, targeting, [])
        everywhere = self._by_pool[pool_id]
        if any(indexed.slice.pool.generation > first.generation for indexed in everywhere):
            return None  # a newer generation is arriving: ignore the pool
        complete = [
            indexed
            for indexed in everywhere
            if indexed.slice.pool.generation == first.generation
            and not _uses_compatibility_groups(indexed.slice)
        ]
        if len(complete) != first.resource_slice_count:
            return Pool(pool_id, incomplete=True)
        return _build_pool(pool_id, targeting, complete)


def _pool_order(pool: Pool) -> PoolID:
    return pool.id


def _relevant(resource_slice: ResourceSlice, node: NodeLike) -> bool:
    if resource_slice.node.is_set:
        return node_matches(node, resource_slice.node)
    if resource_slice.per_device_node_selection:
        return any(node_matches(node, device.node) for device in resource_slice.devices)
    return False


def _uses_compatibility_groups(resource_slice: ResourceSlice) -> bool:
    # DRADeviceCompatibilityGroups is alpha (off): such slices are left out of their pool.
    return any(
        consumption.compatibility_groups
        for device in resource_slice.devices
        for consumption in device.consumes_counters
    )


def _has_binding_conditions(pool: Pool) -> bool:
    return any(
        candidate.device.binding_conditions
        for indexed in pool.slices
        for candidate in indexed.candidates
    )


def _build_pool(
    pool_id: PoolID, targeting: list[IndexedSlice], everywhere: list[IndexedSlice]
) -> Pool:
    targeting = sorted(targeting, key=lambda indexed: indexed.slice.name)
    device_slices = [indexed for indexed in targeting if not indexed.slice.shared_counters]
    counter_slices = [indexed for indexed in targeting if indexed.slice.shared_counters]
    other_slices: list[IndexedSlice] = []
    if len(targeting) < len(everywhere):
        targeting_names = {indexed.slice.name for indexed in targeting}
        for indexed in everywhere:
            if indexed.slice.name in targeting_names:
                continue
            (counter_slices if indexed.slice.shared_counters else other_slices).append(indexed)
    problem = _duplicate_device(device_slices)
    counter_sets: dict[str, CounterSet] = {}
    if not problem:
        for indexed in counter_slices:
            for counter_set in indexed.slice.shared_counters:
                if counter_set.name in counter_sets:
                    problem = f"duplicate counter set name {counter_set.name}"
                    break
                counter_sets[counter_set.name] = counter_set
            if problem:
                break
    if not problem:
        problem = _unknown_counter(counter_sets, device_slices) or _unknown_counter(
            counter_sets, other_slices
        )
    if problem:
        return Pool(pool_id, invalid=True, invalid_reason=problem)
    return Pool(
        pool_id,
        slices=tuple(device_slices),
        other_slices=tuple(other_slices),
        counter_sets=counter_sets,
    )


def _duplicate_device(slices: list[IndexedSlice]) -> str:
    seen: set[str] = set()
    for indexed in slices:
        for device in indexed.slice.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _unknown_counter(counter_sets: Mapping[str, CounterSet], slices: list[IndexedSlice]) -> str:
    for indexed in slices:
        for device in indexed.slice.devices:
            for consumption in device.consumes_counters:
                counter_set = counter_sets.get(consumption.counter_set)
                if counter_set is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in counter_set.counters:
                        return f"counter {name} not found in counter set {counter_set.name}"
    return ""
