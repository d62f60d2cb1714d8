"""The structured-parameters allocator: can these claims get devices on this node, and which?

A faithful reimplementation of k8s.io/dynamic-resource-allocation/structured at v0.37.2 in
the variant kube-scheduler v1.37 selects for its default feature gates ("incubating": the
default gates enable consumable capacity and binding conditions, which the "stable"
variant lacks, and no alpha gate that would need "experimental"). The DRA gates, as
`kube-scheduler --help` and pkg/features list them for v1.37:

- on, and implemented here: DRAAdminAccess (GA), DRAPrioritizedList (GA), DRADeviceTaints
  (GA), DRADeviceTaintRules (GA; the rules' taints are merged into devices by the caller),
  DRAPartitionableDevices (beta), DRAConsumableCapacity (beta, with distinctAttribute),
  DRADeviceBindingConditions + DRAResourceClaimDeviceStatus (beta/GA),
  DRAExtendedResource (GA; DynamicResources builds the claim for a pod's extended resources,
  which the allocator takes like any other), DRASchedulerFilterTimeout
  (beta; the `deadline` argument);
- off by default, so absent here: DRAFractionalCapacityRange (beta, on only with
  --min-compatibility-version>=1.37), DRADerivedAttributes, DRADeviceCompatibilityGroups
  (slices using compatibility groups are left out of their pool, as upstream does),
  DRAListTypeAttributes, DRAOptionalNodeOperations, DRAPartitionableDevicesType,
  DRANodeAllocatableResources, DRAResourcePoolStatus, DRAWorkloadResourceClaims.

Build one `Allocator` per pod (upstream does so in PreFilter) from a `SliceIndex` (built
once per set of slices), the device classes and the `AllocatedState`, then call
`allocate` once per node.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.capacity import CapacityError, fits_capacity
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.constraints import Constraint, DistinctAttribute, MatchAttribute
from berth.engine.dra.counters import AvailableCounters, CounterLedger
from berth.engine.dra.errors import AllocationError
from berth.engine.dra.pools import NodeLike, Pool, SliceIndex
from berth.engine.dra.requests import ALLOCATION_MODE_ALL, RequestSpec
from berth.engine.dra.results import allocation_results
from berth.engine.dra.search import MAX_RESULTS_PER_CLAIM, RequestData, RequestKey, Search
from berth.engine.dra.selection import SelectorCache

__all__ = [
    "Allocated",
    "AllocationOutcome",
    "Allocator",
    "CannotAllocate",
    "NodeFailure",
]


class Allocated:
    """The claims fit: one allocation per claim, in the order the claims were given.

    The results are written out only when asked for: Filter allocates on many nodes, and
    only the chosen node's allocation is ever used.
    """

    def __init__(self, search: Search) -> None:
        self._search = search
        self.steps = search.steps  # how much searching it took (NumAllocateOneInvocations)

    @functools.cached_property
    def results(self) -> tuple[AllocationResult, ...]:
        return allocation_results(self._search)

    def __repr__(self) -> str:
        return f"Allocated(steps={self.steps})"


@dataclass(frozen=True, slots=True)
class CannotAllocate:
    """The claims do not fit this node (the plugin says "cannot allocate all claims")."""

    steps: int = 0


@dataclass(frozen=True, slots=True)
class NodeFailure:
    """A problem with this node's devices only; the message goes into the node's status."""

    message: str


AllocationOutcome = Allocated | CannotAllocate | NodeFailure


def _new_share_id() -> str:
    return str(uuid.uuid1())  # upstream: uuid.NewUUID, a time-based UUID


class Allocator:
    """Allocates one pod's pending claims, node after node."""

    def __init__(
        self,
        *,
        slices: SliceIndex,
        classes: Mapping[str, DeviceClass],
        allocated: AllocatedState,
        selectors: SelectorCache,
        new_share_id: Callable[[], str] = _new_share_id,  # test seam: deterministic share IDs
        clock: Callable[[], float] = time.monotonic,  # test seam for `deadline`
    ) -> None:
        self._slices = slices
        self._classes = classes
        self._allocated = allocated
        self._selectors = selectors
        self._new_share_id = new_share_id
        self._clock = clock
        self._available = AvailableCounters(allocated)

    def allocate(
        self,
        node: NodeLike,
        claims: Sequence[ResourceClaim],
        *,
        deadline: float | None = None,
    ) -> AllocationOutcome:
        """Allocate `claims` (none allocated yet) on `node`.

        Raises `AllocationError` when a claim or class is broken (kube-scheduler's message),
        `AllocationTimeout` when `deadline` (on this allocator's clock) passes.
        """
        pools = self._slices.pools_for(node)
        clock = self._clock
        search = Search(
            claims=list(claims),
            node=node,
            pools=pools,
            allocated=self._allocated,
            selectors=self._selectors,
            counters=CounterLedger(self._available),
            new_share_id=self._new_share_id,
            expired=(lambda: False) if deadline is None else (lambda: clock() > deadline),
        )
        for claim_index, claim in enumerate(claims):
            _prepare_claim(search, claim_index, claim, self._classes, pools)
        if not search.run():
            if any(pool.invalid for pool in pools):
                return NodeFailure("invalid resource pools were encountered")
            return CannotAllocate(steps=search.steps)
        return Allocated(search)


def _prepare_claim(
    search: Search,
    claim_index: int,
    claim: ResourceClaim,
    classes: Mapping[str, DeviceClass],
    pools: tuple[Pool, ...],
) -> None:
    """Validate the claim's requests, count the devices they need, set up its constraints."""
    devices_needed = 0
    for request_index, request in enumerate(claim.spec.requests):
        if request.first_available:
            needed = None
            for sub_index, subrequest in enumerate(request.first_available):
                key = (claim_index, request_index, sub_index)
                data = _request_data(search, key, claim, subrequest, request.name, classes, pools)
                needed = data.num_devices if needed is None else min(needed, data.num_devices)
        else:
            assert request.exactly is not None  # the parser wants one of the two
            key = (claim_index, request_index, 0)
            data = _request_data(search, key, claim, request.exactly, "", classes, pools)
            needed = data.num_devices
        assert needed is not None
        if needed > MAX_RESULTS_PER_CLAIM - devices_needed:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: adding {needed} devices exceeds "
                f"the claim limit of {MAX_RESULTS_PER_CLAIM}, with {devices_needed} already "
                "accounted for"
            )
        devices_needed += needed
    constraints: list[Constraint] = []
    for index, constraint in enumerate(claim.spec.constraints):
        names = frozenset(constraint.requests)
        if constraint.match_attribute is not None:
            constraints.append(MatchAttribute(names, constraint.match_attribute))
        elif constraint.distinct_attribute is not None:
            constraints.append(DistinctAttribute(names, constraint.distinct_attribute))
        else:
            raise AllocationError(
                f"claim {claim.key}, constraint #{index}: empty constraint "
                "(unsupported constraint type?)"
            )
    search.constraints[claim_index] = constraints


def _request_data(
    search: Search,
    key: RequestKey,
    claim: ResourceClaim,
    spec: RequestSpec,
    parent: str,
    classes: Mapping[str, DeviceClass],
    pools: tuple[Pool, ...],
) -> RequestData:
    where = f"claim {claim.key}, request {spec.name}"
    for index, selector in enumerate(spec.selectors):
        if selector is None:
            raise AllocationError(
                f"{where}, selector #{index}: CEL expression empty (unsupported selector type?)"
            )
    device_class = classes.get(spec.device_class_name)
    if device_class is None:
        raise AllocationError(
            f"{where}: could not retrieve device class {spec.device_class_name}: "
            f'deviceclass.resource.k8s.io "{spec.device_class_name}" not found'
        )
    data = RequestData(spec=spec, parent=parent, device_class=device_class)
    search.request_data[key] = data
    if spec.allocation_mode != ALLOCATION_MODE_ALL:
        data.num_devices = spec.count
        return data
    for pool in pools:
        if pool.incomplete:
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.id} is currently "
                "being updated"
            )
        if pool.invalid:
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.id} is currently invalid"
            )
        for indexed in pool.slices:
            for candidate in indexed.candidates:
                if not search.is_selectable(key, data, candidate):
                    continue
                try:
                    # Only static capacity here: a device whose capacity is taken by others
                    # stays in the list, so that "all" fails rather than shrinks.
                    fits = fits_capacity(
                        requests=spec.capacity,
                        capacities=candidate.device.capacity,
                        allocated={},
                        allocating={},
                    )
                except CapacityError as error:
                    raise AllocationError(
                        f"{where}: checking capacity for device {candidate.device.name}: {error}"
                    ) from None
                if fits:
                    data.all_devices.append((candidate, pool))
    data.num_devices = len(data.all_devices)
    return data
